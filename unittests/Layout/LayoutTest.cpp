//===- LayoutTest.cpp - Exact local shapes and offsets --------------------===//
//
// Every expected number here is worked out by hand from the rules in
// docs/dist-dialect.md (DTensor's chunk rule, weighted ceil rule, nesting
// order) and the worked examples there.
//
//===----------------------------------------------------------------------===//

#include "muon/Layout/Layout.h"

#include <gtest/gtest.h>

using namespace muon::layout;
using Shape = std::vector<int64_t>;

namespace {

Mesh mesh1(const std::string &axis, int64_t size) { return {{axis}, {size}}; }

Layout layoutOf(std::vector<Placement> placements) {
  Layout l;
  l.placements = std::move(placements);
  return l;
}

/// Local shape and offsets of every rank, in rank order.
std::vector<std::pair<Shape, Shape>> allShards(const Shape &shape,
                                               const Layout &l,
                                               const Mesh &m) {
  EXPECT_EQ(verify(shape, l, m), "");
  std::vector<std::pair<Shape, Shape>> out;
  for (int64_t r = 0; r < m.numRanks(); ++r) {
    LocalShard s = localShard(shape, l, m, m.coords(r));
    out.emplace_back(s.shape, s.offsets);
  }
  return out;
}

using Shards = std::vector<std::pair<Shape, Shape>>;

TEST(Mesh, CoordinatesAreRowMajor) {
  Mesh m{{"dp", "tp"}, {4, 2}};
  EXPECT_EQ(m.numRanks(), 8);
  EXPECT_EQ(m.coords(0), (Shape{0, 0}));
  EXPECT_EQ(m.coords(1), (Shape{0, 1}));
  EXPECT_EQ(m.coords(5), (Shape{2, 1}));
  EXPECT_EQ(m.rank({3, 1}), 7);
  EXPECT_EQ(m.groupSize({0}), 4);
  EXPECT_EQ(m.axisIndex("tp"), 1);
  EXPECT_EQ(m.axisIndex("ep"), -1);
}

TEST(Chunk, TenRowsOverFourRanks) {
  // ceil(10/4) = 3: 3, 3, 3, 1.
  Shards got = allShards({10, 8}, layoutOf({Placement::shard(0)}),
                         mesh1("dp", 4));
  Shards want = {{{3, 8}, {0, 0}},
                 {{3, 8}, {3, 0}},
                 {{3, 8}, {6, 0}},
                 {{1, 8}, {9, 0}}};
  EXPECT_EQ(got, want);
}

TEST(Chunk, TwoRowsOverFourRanksLeavesEmptyShards) {
  Shards got = allShards({2, 5}, layoutOf({Placement::shard(0)}),
                         mesh1("dp", 4));
  Shards want = {{{1, 5}, {0, 0}},
                 {{1, 5}, {1, 0}},
                 {{0, 5}, {2, 0}},
                 {{0, 5}, {2, 0}}};
  EXPECT_EQ(got, want);
}

TEST(Chunk, WeightsOneTwoOne) {
  // 16 rows, weights [1, 2, 1] -> 4, 8, 4 rows.
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = StorageKind::Dim;
  l.storage.splits = {{0, 0, {1, 2, 1}}};
  Shards got = allShards({16, 8}, l, mesh1("dp", 3));
  Shards want = {{{4, 8}, {0, 0}}, {{8, 8}, {4, 0}}, {{4, 8}, {12, 0}}};
  EXPECT_EQ(got, want);
}

TEST(Chunk, SizesInOnePassAreChunksSizes) {
  // chunkSizes gives every part's size as chunk does (even and weighted,
  // short and empty trailing parts), and they add up to the length.
  struct Case {
    int64_t length, parts;
    std::vector<int64_t> weights;
  };
  for (const Case &c : std::vector<Case>{{10, 4, {}},
                                         {2, 4, {}},
                                         {0, 3, {}},
                                         {16, 4, {1, 1, 1, 5}},
                                         {10, 3, {1, 1, 1}},
                                         {7, 2, {3, 1}},
                                         {5, 4, {1, 100, 1, 1}}}) {
    std::vector<int64_t> sizes = chunkSizes(c.length, c.parts, c.weights);
    ASSERT_EQ(static_cast<int64_t>(sizes.size()), c.parts);
    int64_t total = 0;
    for (int64_t i = 0; i < c.parts; ++i) {
      Interval one = chunk(c.length, c.parts, i, c.weights);
      EXPECT_EQ(sizes[i], one.size) << c.length << " part " << i;
      EXPECT_EQ(total, one.offset) << c.length << " part " << i;
      total += sizes[i];
    }
    EXPECT_EQ(total, c.length);
  }
  EXPECT_EQ(chunkSizes(16, 4, {1, 1, 1, 5}),
            (std::vector<int64_t>{2, 2, 2, 10}));
}

TEST(Chunk, WeightedRoundingIsCeilInOrder) {
  // 10 over [1, 1, 1]: ceil(10/3) = 4, 4, then the remaining 2.
  EXPECT_EQ(chunk(10, 3, 0, {1, 1, 1}).size, 4);
  EXPECT_EQ(chunk(10, 3, 1, {1, 1, 1}).size, 4);
  EXPECT_EQ(chunk(10, 3, 2, {1, 1, 1}).size, 2);
  EXPECT_EQ(chunk(10, 3, 2, {1, 1, 1}).offset, 8);
  // Equal weights are the even rule exactly.
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(chunk(10, 4, i).size, chunk(10, 4, i, {5, 5, 5, 5}).size);
    EXPECT_EQ(chunk(10, 4, i).offset, chunk(10, 4, i, {5, 5, 5, 5}).offset);
  }
  // 7 over [3, 1]: ceil(21/4) = 6, then 1.
  EXPECT_EQ(chunk(7, 2, 0, {3, 1}).size, 6);
  EXPECT_EQ(chunk(7, 2, 1, {3, 1}).size, 1);
}

TEST(Storage, VeScaleWeightedFlatGroup) {
  // Weighted flat storage: 810 elements, weights [1,2,1,1,1,1,1,1] (sum 9).
  FlatGroup g = FlatGroup::make(0, {810}, {1, 2, 1, 1, 1, 1, 1, 1});
  std::vector<int64_t> sizes;
  for (int64_t r = 0; r < 8; ++r)
    sizes.push_back(flatMemberRange(g, 8, 0, r).size);
  EXPECT_EQ(sizes, (Shape{90, 180, 90, 90, 90, 90, 90, 90}));
}

TEST(Storage, FlatGroupOfFourTensors) {
  // Tensors of 16, 8, 6, 4 elements over 4 ranks: 34 elements, 9,9,9,7.
  // rank 0: T0[0:9]; rank 1: T0[9:16], T1[0:2]; rank 2: T1[2:8], T2[0:3];
  // rank 3: T2[3:6], T3[0:4].
  FlatGroup g = FlatGroup::make(0, {16, 8, 6, 4});
  auto range = [&](int64_t member, int64_t rank) {
    Interval i = flatMemberRange(g, 4, member, rank);
    return std::make_pair(i.offset, i.offset + i.size);
  };
  using R = std::pair<int64_t, int64_t>;
  EXPECT_EQ(range(0, 0), (R{0, 9}));
  EXPECT_EQ(range(0, 1), (R{9, 16}));
  EXPECT_EQ(range(1, 1), (R{0, 2}));
  EXPECT_EQ(range(1, 2), (R{2, 8}));
  EXPECT_EQ(range(2, 2), (R{0, 3}));
  EXPECT_EQ(range(2, 3), (R{3, 6}));
  EXPECT_EQ(range(3, 3), (R{0, 4}));
  // Empty pieces elsewhere.
  EXPECT_EQ(flatMemberRange(g, 4, 0, 2).size, 0);
  EXPECT_EQ(flatMemberRange(g, 4, 1, 0).size, 0);
  EXPECT_EQ(flatMemberRange(g, 4, 1, 3).size, 0);
  EXPECT_EQ(flatMemberRange(g, 4, 3, 0).size, 0);
  // Per rank totals: 9, 9, 9, 7.
  for (int64_t r = 0; r < 4; ++r) {
    int64_t total = 0;
    for (int64_t m = 0; m < 4; ++m)
      total += flatMemberRange(g, 4, m, r).size;
    EXPECT_EQ(total, r == 3 ? 7 : 9) << "rank " << r;
  }
  // Through localShard: member 1 (a (2, 4) tensor) on rank 2 is a 1-D piece.
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = StorageKind::Flat;
  l.storage.group = g;
  l.storage.member = 1;
  ASSERT_EQ(verify({2, 4}, l, mesh1("dp", 4)), "");
  LocalShard s = localShard({2, 4}, l, mesh1("dp", 4), {2});
  EXPECT_TRUE(s.flattened);
  EXPECT_EQ(s.shape, (Shape{6}));
  EXPECT_EQ(s.offsets, (Shape{2}));
}

TEST(Storage, AllRanksAtOnceAreOneRankAtATime) {
  // LocalShards keeps a table of each weighted split's starts per length;
  // every rank, asked in any order, must get what localShard() gives.
  // Uneven tp shards (7 rows: 4 and 3) give the storage split two lengths.
  Mesh m{{"dp", "tp"}, {3, 2}};
  std::vector<std::pair<Shape, Layout>> cases;
  Layout dim = layoutOf({Placement::replicate(), Placement::shard(0)});
  dim.storage.kind = StorageKind::Dim;
  dim.storage.splits = {{0, 0, {1, 2, 1}}};
  cases.push_back({{7, 5}, dim});
  Layout block = layoutOf({Placement::replicate(), Placement::replicate()});
  block.storage.kind = StorageKind::Block;
  block.storage.splits = {{0, 0, {3, 1, 1}}, {1, 1, {1, 4}}};
  cases.push_back({{9, 6}, block});
  Layout flat = layoutOf({Placement::replicate(), Placement::replicate()});
  flat.storage.kind = StorageKind::Flat;
  flat.storage.group = FlatGroup::make(0, {10, 15, 4}, {2, 1, 5});
  flat.storage.member = 1;
  cases.push_back({{3, 5}, flat});
  for (auto &[shape, l] : cases) {
    ASSERT_EQ(verify(shape, l, m), "");
    LocalShards shards(shape, l, m);
    for (int64_t r = m.numRanks() - 1; r >= 0; --r)
      for (int pass = 0; pass < 2; ++pass) {
        LocalShard want = localShard(shape, l, m, m.coords(r));
        LocalShard got = shards(m.coords(r));
        EXPECT_EQ(got.shape, want.shape) << "rank " << r;
        EXPECT_EQ(got.offsets, want.offsets) << "rank " << r;
        EXPECT_EQ(got.flattened, want.flattened) << "rank " << r;
      }
  }
  // And the numbers themselves, by hand for the weighted dim split: tp = 0
  // holds rows 0-3 (4 rows over [1, 2, 1]: 1, 2, 1), tp = 1 rows 4-6 (3
  // rows: ceil(3/4) = 1, ceil(6/4) = 2, then none left).
  LocalShards shards(cases[0].first, dim, m);
  Shape rows, starts;
  for (int64_t r = 0; r < m.numRanks(); ++r) {
    LocalShard s = shards(m.coords(r));
    rows.push_back(s.shape[0]);
    starts.push_back(s.offsets[0]);
  }
  EXPECT_EQ(rows, (Shape{1, 1, 2, 2, 1, 0}));
  EXPECT_EQ(starts, (Shape{0, 4, 1, 5, 3, 7}));
}

TEST(Storage, FsdpV2UseCase1) {
  // Dim-0 storage over dp=8.
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = StorageKind::Dim;
  l.storage.splits = {{0, 0, {}}};
  Mesh m = mesh1("dp", 8);
  EXPECT_EQ(localShard({16, 8}, l, m, {3}).shape, (Shape{2, 8}));
  EXPECT_EQ(localShard({32, 4}, l, m, {3}).shape, (Shape{4, 4}));
  EXPECT_EQ(localShard({8, 16}, l, m, {3}).shape, (Shape{1, 16}));
  EXPECT_EQ(localShard({24, 12}, l, m, {3}).shape, (Shape{3, 12}));
  EXPECT_EQ(localShard({24, 12}, l, m, {3}).offsets, (Shape{9, 0}));
}

TEST(Storage, TwoDimensionalBlocks) {
  // 2-D block storage: (16, 8) over (dp_row=4, dp_col=2): (4, 4) blocks,
  // rank 2*i + j at rows 4i, cols 4j.
  Mesh m{{"dp_row", "dp_col"}, {4, 2}};
  Layout l = layoutOf({Placement::replicate(), Placement::replicate()});
  l.storage.kind = StorageKind::Block;
  l.storage.splits = {{0, 0, {}}, {1, 1, {}}};
  Shards got = allShards({16, 8}, l, m);
  for (int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(got[r].first, (Shape{4, 4})) << "rank " << r;
    EXPECT_EQ(got[r].second, (Shape{4 * (r / 2), 4 * (r % 2)})) << "rank " << r;
  }
}

TEST(Storage, UnevenBlocks) {
  // (7, 5) over (2, 2): rows 4/3, cols 3/2.
  Mesh m{{"r", "c"}, {2, 2}};
  Layout l = layoutOf({Placement::replicate(), Placement::replicate()});
  l.storage.kind = StorageKind::Block;
  l.storage.splits = {{0, 0, {}}, {1, 1, {}}};
  Shards want = {{{4, 3}, {0, 0}},
                 {{4, 2}, {0, 3}},
                 {{3, 3}, {4, 0}},
                 {{3, 2}, {4, 3}}};
  EXPECT_EQ(allShards({7, 5}, l, m), want);
}

TEST(Nesting, SameDimShardedTwiceDefaultOrder) {
  // (dp=2, tp=2) both shard dim 0 of 8 rows; dp is outer (mesh order):
  // rank (i, j) holds rows [4i + 2j, 4i + 2j + 2).
  Mesh m{{"dp", "tp"}, {2, 2}};
  Layout l = layoutOf({Placement::shard(0), Placement::shard(0)});
  Shards want = {{{2, 3}, {0, 0}},
                 {{2, 3}, {2, 0}},
                 {{2, 3}, {4, 0}},
                 {{2, 3}, {6, 0}}};
  EXPECT_EQ(allShards({8, 3}, l, m), want);
}

TEST(Nesting, SameDimShardedTwiceTpOuter) {
  // order {0 = [tp, dp]}: rank (i, j) holds rows [4j + 2i, 4j + 2i + 2).
  Mesh m{{"dp", "tp"}, {2, 2}};
  Layout l = layoutOf({Placement::shard(0), Placement::shard(0)});
  l.shardOrder = {{0, {1, 0}}};
  Shards want = {{{2, 3}, {0, 0}},
                 {{2, 3}, {4, 0}},
                 {{2, 3}, {2, 0}},
                 {{2, 3}, {6, 0}}};
  EXPECT_EQ(allShards({8, 3}, l, m), want);
}

TEST(Nesting, UnevenNestedSplitsDivideTheOuterBlock) {
  // 10 rows, dp outer: dp halves are 5 and 5; tp splits 5 into 3 and 2.
  Mesh m{{"dp", "tp"}, {2, 2}};
  Layout l = layoutOf({Placement::shard(0), Placement::shard(0)});
  Shards want = {{{3}, {0}}, {{2}, {3}}, {{3}, {5}}, {{2}, {8}}};
  EXPECT_EQ(allShards({10}, l, m), want);
  // tp outer on 7 rows: tp halves 4 and 3; dp splits them 2/2 and 2/1.
  l.shardOrder = {{0, {1, 0}}};
  Shards want2 = {{{2}, {0}}, {{2}, {4}}, {{2}, {2}}, {{1}, {6}}};
  EXPECT_EQ(allShards({7}, l, m), want2);
}

TEST(Composition, FsdpStorageOnTpShards) {
  // FSDP storage on TP shards, mesh (dp=4, tp=2).
  Mesh m{{"dp", "tp"}, {4, 2}};
  auto fsdpOnTp = [](int64_t tpDim) {
    Layout l = layoutOf({Placement::replicate(), Placement::shard(tpDim)});
    l.storage.kind = StorageKind::Dim;
    l.storage.splits = {{0, 0, {}}};
    return l;
  };
  std::vector<int64_t> rank5 = m.coords(5); // dp=2, tp=1
  EXPECT_EQ(localShard({16, 8}, fsdpOnTp(1), m, rank5).shape, (Shape{4, 4}));
  EXPECT_EQ(localShard({16, 8}, fsdpOnTp(1), m, rank5).offsets,
            (Shape{8, 4}));
  EXPECT_EQ(localShard({32, 4}, fsdpOnTp(0), m, rank5).shape, (Shape{4, 4}));
  EXPECT_EQ(localShard({8, 16}, fsdpOnTp(1), m, rank5).shape, (Shape{2, 8}));
  // (24, 12) shard<0> on tp: tp=1 holds rows 12..23; dp=2 of that is 18..20.
  LocalShard s = localShard({24, 12}, fsdpOnTp(0), m, rank5);
  EXPECT_EQ(s.shape, (Shape{3, 12}));
  EXPECT_EQ(s.offsets, (Shape{18, 0}));
}

TEST(Storage, WholeTensorOnOwner) {
  Mesh m{{"dp"}, {4}};
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = StorageKind::Whole;
  l.storage.axis = 0;
  l.storage.owner = 2;
  Shards want = {{{0, 8}, {0, 0}},
                 {{0, 8}, {0, 0}},
                 {{16, 8}, {0, 0}},
                 {{0, 8}, {0, 0}}};
  EXPECT_EQ(allShards({16, 8}, l, m), want);
}

TEST(Cotangent, PartialReducedDuality) {
  EXPECT_EQ(cotangent(Placement::shard(1)), Placement::shard(1));
  EXPECT_EQ(cotangent(Placement::replicate()), Placement::replicate());
  EXPECT_EQ(cotangent(Placement::partial()), Placement::reduced());
  EXPECT_EQ(cotangent(Placement::partial(ReduceKind::Max)),
            Placement::reduced());
  EXPECT_EQ(cotangent(Placement::reduced()), Placement::partial());
  // An involution on shard / replicate / partial<sum> / reduced.
  for (Placement p : {Placement::shard(0), Placement::replicate(),
                      Placement::partial(), Placement::reduced()})
    EXPECT_EQ(cotangent(cotangent(p)), p);
}

TEST(Verify, ReportsEachProblem) {
  Mesh m{{"dp", "tp"}, {4, 2}};
  EXPECT_NE(verify({4, 4}, layoutOf({Placement::shard(0)}), m)
                .find("expected 2 placements"),
            std::string::npos);
  EXPECT_NE(verify({4, 4},
                   layoutOf({Placement::shard(2), Placement::replicate()}), m)
                .find("cannot shard along a dimension that doesn't exist"),
            std::string::npos);
  Layout storageOnShard =
      layoutOf({Placement::shard(0), Placement::replicate()});
  storageOnShard.storage.kind = StorageKind::Dim;
  storageOnShard.storage.splits = {{0, 1, {}}};
  EXPECT_NE(verify({4, 4}, storageOnShard, m)
                .find("needs a replicate or reduced axis"),
            std::string::npos);
  Layout badWeights = layoutOf({Placement::reduced(), Placement::replicate()});
  badWeights.storage.kind = StorageKind::Dim;
  badWeights.storage.splits = {{0, 0, {1, 2}}};
  EXPECT_NE(verify({4, 4}, badWeights, m).find("has 2 weights"),
            std::string::npos);
  badWeights.storage.splits = {{0, 0, {1, 0, 1, 1}}};
  EXPECT_NE(verify({4, 4}, badWeights, m).find("non-positive weight 0"),
            std::string::npos);
  Layout flat = layoutOf({Placement::replicate(), Placement::replicate()});
  flat.storage.kind = StorageKind::Flat;
  flat.storage.group = FlatGroup::make(0, {16, 8});
  flat.storage.member = 1;
  EXPECT_NE(verify({4, 4}, flat, m).find("bad group membership"),
            std::string::npos);
  flat.storage.member = 0;
  EXPECT_EQ(verify({4, 4}, flat, m), "");
}

} // namespace

// A layout's key tells apart layouts that differ in any field, and equal
// layouts share it.
TEST(LayoutKey, EveryFieldCounts) {
  Layout base;
  base.placements = {Placement::shard(0), Placement::replicate()};
  base.shardOrder = {{0, {0, 1}}};
  base.storage.kind = StorageKind::Dim;
  base.storage.splits = {{1, 0, {1, 3}}};
  Layout same = base;
  EXPECT_EQ(key(base), key(same));

  std::vector<Layout> variants(10, base);
  variants[0].placements[1] = Placement::partial(ReduceKind::Avg);
  variants[1].placements[0] = Placement::shard(1);
  variants[2].shardOrder = {{0, {1, 0}}};
  variants[3].storage.splits[0].weights = {3, 1};
  variants[4].storage.splits[0].axis = 0;
  variants[5].storage.kind = StorageKind::Block;
  variants[6].storage.kind = StorageKind::Whole;
  variants[6].storage.axis = 1;
  variants[7] = variants[6];
  variants[7].storage.owner = 1;
  variants[8].storage.kind = StorageKind::Flat;
  variants[8].storage.splits.clear();
  variants[8].storage.group = FlatGroup::make(1, {4, 4});
  variants[8].storage.member = 1;
  variants[9] = variants[8];
  variants[9].storage.group.setNumel({2, 4}); // member 1 starts elsewhere
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(key(variants[i]), key(base)) << "variant " << i;
    for (size_t j = 0; j < i; ++j)
      EXPECT_NE(key(variants[i]), key(variants[j])) << i << " vs " << j;
  }
  // A flat member enters as its start, length and the group's total: a
  // group whose other members differ but leave those alone shares the key
  // (the member's pieces are the same).
  Layout padded = variants[8];
  padded.storage.group.setNumel({4, 4, 0});
  EXPECT_EQ(key(padded), key(variants[8]));
}

// The ranks of a box, in rank order, are those whose coordinates lie in
// it: every box of a 3 x 4 x 2 mesh, empty ones included.
TEST(Mesh, RanksInEveryBox) {
  Mesh mesh{{"a", "b", "c"}, {3, 4, 2}};
  auto boxes = [](int64_t size) {
    std::vector<std::pair<int64_t, int64_t>> all;
    for (int64_t lo = 0; lo <= size; ++lo)
      for (int64_t hi = lo; hi <= size; ++hi)
        all.push_back({lo, hi});
    return all;
  };
  for (auto [la, ha] : boxes(3))
    for (auto [lb, hb] : boxes(4))
      for (auto [lc, hc] : boxes(2)) {
        std::vector<int64_t> lo = {la, lb, lc}, hi = {ha, hb, hc}, want;
        for (int64_t r = 0; r < mesh.numRanks(); ++r) {
          std::vector<int64_t> c = mesh.coords(r);
          bool inside = true;
          for (int a = 0; a < 3; ++a)
            inside &= lo[a] <= c[a] && c[a] < hi[a];
          if (inside)
            want.push_back(r);
        }
        EXPECT_EQ(mesh.ranksIn(lo, hi), want)
            << la << ".." << ha << ", " << lb << ".." << hb << ", " << lc
            << ".." << hc;
      }
}
