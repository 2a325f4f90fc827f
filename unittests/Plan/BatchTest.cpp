//===- BatchTest.cpp - Which steps of a round share a call ----------------===//
//
// plan::roundCalls on hand-checked rounds: level by level, steps with the
// same kind, communicator axes and participating ranks form one call,
// whatever the split (chunk rule, weighted, flat); a flat split over one
// rank (a reshape only) and every step with batching off are calls alone.
//
//===----------------------------------------------------------------------===//

#include "muon/Plan/Batch.h"

#include <gtest/gtest.h>

using namespace muon;
using namespace muon::plan;
using layout::Layout;
using layout::Mesh;
using layout::Placement;
using Items = std::vector<std::pair<size_t, size_t>>;

namespace {

/// One parameter of a round with its plan and steps.
struct Param {
  ParamPlan plan;
  std::vector<CommStep> steps;
  std::vector<int64_t> ownerCoords;
};

Param param(const std::vector<int64_t> &shape, const Layout &l,
            const Mesh &mesh, int64_t owner) {
  Param p;
  EXPECT_EQ(planParam(shape, l, mesh, {}, p.plan), "");
  p.steps = planSteps(p.plan, l, l, mesh, owner);
  p.ownerCoords = mesh.coords(owner);
  return p;
}

Layout layoutOf(std::vector<Placement> placements) {
  Layout l;
  l.placements = std::move(placements);
  return l;
}

std::vector<RoundCall> calls(const std::vector<Param> &params, bool afterNs,
                             bool batch = true) {
  std::vector<RoundParam> round;
  for (const Param &p : params)
    round.push_back({&p.plan, &p.steps, p.ownerCoords});
  return roundCalls(round, afterNs, batch);
}

TEST(RoundCalls, FsdpRoundIsOneGatherAndOneScatter) {
  Mesh mesh{{"dp"}, {2}};
  std::vector<Param> round = {
      param({8, 4}, layoutOf({Placement::shard(0)}), mesh, 0),
      param({4, 6}, layoutOf({Placement::shard(1)}), mesh, 1)};
  std::vector<RoundCall> g = calls(round, false);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].items, (Items{{0, 0}, {1, 0}}));
  std::vector<RoundCall> s = calls(round, true);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].items, (Items{{0, 2}, {1, 2}}));
  // Without batching: one call per step.
  EXPECT_EQ(calls(round, false, false).size(), 2u);
}

TEST(RoundCalls, TpFsdpSecondLevelSplitsByTheGatheredCoordinate) {
  // [dp = 2, tp = 2], both axes split dim 0 (tp innermost): level 0
  // gathers over tp on every rank (one call); level 1 gathers over dp on
  // the ranks whose tp coordinate is the owner's: owners 0 and 2 (tp 0)
  // share a call, owners 1 and 3 (tp 1) another.
  Mesh mesh{{"dp", "tp"}, {2, 2}};
  Layout l = layoutOf({Placement::shard(0), Placement::shard(0)});
  std::vector<Param> round;
  for (int64_t owner = 0; owner < 4; ++owner)
    round.push_back(param({8, 4}, l, mesh, owner));
  std::vector<RoundCall> g = calls(round, false);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].items, (Items{{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(round[0].steps[0].axes, (std::vector<int>{1}));
  EXPECT_EQ(g[1].items, (Items{{0, 1}, {2, 1}}));
  EXPECT_EQ(g[2].items, (Items{{1, 1}, {3, 1}}));
  EXPECT_EQ(participants(round[1].plan, round[1].steps[1],
                         round[1].ownerCoords),
            (std::vector<int64_t>{-1, 1}));
  // Scatters: the outer split (dp) first, then tp for all four.
  std::vector<RoundCall> s = calls(round, true);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].items, (Items{{0, 3}, {2, 3}}));
  EXPECT_EQ(s[1].items, (Items{{1, 3}, {3, 3}}));
  EXPECT_EQ(s[2].items, (Items{{0, 4}, {1, 4}, {2, 4}, {3, 4}}));
}

TEST(RoundCalls, WeightedAndFlatSplitsJoinTheBatch) {
  // A weighted and a flat split gather with per-member sizes, which a
  // batch item carries: all four gathers over dp share one call.
  Mesh mesh{{"dp"}, {2}};
  Layout weighted = layoutOf({Placement::replicate()});
  weighted.storage.kind = layout::StorageKind::Dim;
  weighted.storage.splits = {{0, 0, {1, 3}}};
  Layout flat = layoutOf({Placement::replicate()});
  flat.storage.kind = layout::StorageKind::Flat;
  flat.storage.group.axis = 0;
  flat.storage.group.setNumel({12, 8});
  flat.storage.member = 0;
  std::vector<Param> round = {
      param({8, 4}, weighted, mesh, 0), param({3, 4}, flat, mesh, 1),
      param({8, 4}, layoutOf({Placement::shard(0)}), mesh, 0),
      param({6, 4}, layoutOf({Placement::shard(0)}), mesh, 1)};
  EXPECT_TRUE(batchable(round[0].steps[0]));
  EXPECT_TRUE(batchable(round[1].steps[0]));
  std::vector<RoundCall> g = calls(round, false);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].items, (Items{{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
}

TEST(RoundCalls, AFlatSplitOverOneRankIsACallAlone) {
  // Over [dp = 1] the flat gather only reshapes: no batch takes it.
  Mesh mesh{{"dp"}, {1}};
  Layout flat = layoutOf({Placement::replicate()});
  flat.storage.kind = layout::StorageKind::Flat;
  flat.storage.group.axis = 0;
  flat.storage.group.setNumel({12, 8});
  std::vector<Param> round;
  for (int64_t member : {0, 1}) {
    flat.storage.member = member;
    round.push_back(
        param(member ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{3, 4},
              flat, mesh, 0));
  }
  ASSERT_TRUE(round[0].steps[0].reshapeOnly);
  EXPECT_FALSE(batchable(round[0].steps[0]));
  std::vector<RoundCall> g = calls(round, false);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].items, (Items{{0, 0}}));
  EXPECT_EQ(g[1].items, (Items{{1, 0}}));
}

TEST(RoundCalls, HsdpBroadcastsShareOneCall) {
  // HSDP [rep = 2, dp = 2]: the gather runs on the owner's replica only;
  // the replicas then get a broadcast over rep from the owner's replica:
  // every rank takes part in every broadcast, so one call for the round.
  Mesh mesh{{"rep", "dp"}, {2, 2}};
  Layout l = layoutOf({Placement::replicate(), Placement::shard(0)});
  std::vector<Param> round = {param({8, 4}, l, mesh, 0),
                              param({8, 4}, l, mesh, 1),
                              param({8, 4}, l, mesh, 2)};
  std::vector<RoundCall> g = calls(round, false);
  // Owners 0, 1 are on replica 0, owner 2 on replica 1.
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].items, (Items{{0, 0}, {1, 0}}));
  EXPECT_EQ(g[1].items, (Items{{2, 0}}));
  std::vector<RoundCall> s = calls(round, true);
  ASSERT_EQ(s.size(), 3u); // scatters as above, then one broadcast batch
  EXPECT_EQ(s[0].items, (Items{{0, 2}, {1, 2}}));
  EXPECT_EQ(s[1].items, (Items{{2, 2}}));
  EXPECT_EQ(s[2].items, (Items{{0, 3}, {1, 3}, {2, 3}}));
  EXPECT_EQ(round[0].steps[3].kind, CommStep::Kind::Broadcast);
  EXPECT_EQ(s[2].level, 1u);
}

} // namespace
