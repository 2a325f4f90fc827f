//===- ScheduleTest.cpp - Round order and the schedule estimate -----------===//
//
// Every figure is worked out by hand with a unit machine: latency 1 s,
// 1 byte/s, 1 byte per element, 8 FLOP/s. A 4x2 matrix sharded over two
// ranks: a gather moves 4 bytes (5 s), Newton-Schulz is one iteration of
// 4 p^2 q + 2 p^3 = 80 FLOPs (10 s), a scatter 5 s.
//
//===----------------------------------------------------------------------===//

#include "muon/Plan/Schedule.h"

#include <gtest/gtest.h>

#include <string>

using namespace muon;
using namespace muon::plan;
using layout::Layout;
using layout::Mesh;
using layout::Placement;
using Rounds = std::vector<std::vector<size_t>>;

namespace {

CostModel unitModel() {
  CostModel m;
  m.intraNode = m.interNode = Link{1, 1};
  m.nsFlopRate = 8;
  m.bytesPerElement = 1;
  return m;
}

/// A parameter of `shape` stored as `placements` on `mesh`, its gradient
/// as `grad` (as the parameter when empty), owned by `owner`.
ParamCostInput param(const Mesh &mesh, std::vector<int64_t> shape,
                     std::vector<Placement> placements, int64_t owner,
                     std::string name = "", std::vector<Placement> grad = {}) {
  ParamCostInput p;
  p.shape = std::move(shape);
  p.layout.placements = std::move(placements);
  p.gradLayout.placements = grad.empty() ? p.layout.placements : grad;
  EXPECT_EQ(planParam(p.shape, p.layout, mesh, {}, p.plan), "");
  p.owner = owner;
  p.name = std::move(name);
  return p;
}

/// FSDP 4x2 matrices on [dp = 2] with the given owners.
std::vector<ParamCostInput> fsdp(const Mesh &mesh,
                                 std::vector<int64_t> owners) {
  std::vector<ParamCostInput> params;
  for (int64_t owner : owners)
    params.push_back(param(mesh, {4, 2}, {Placement::shard(0)}, owner));
  return params;
}

TEST(ScheduleRounds, OwnersLargestFirstPackedIntoRoundsByTime) {
  // Owner 0: p0 (cost 1), p2 (cost 5), p4 (cost 3); owner 1: p1, p3 (2
  // each). Round 1's anchor is p2 (5): owner 1 does p1 and p3 (4) in it.
  // Round 2: p4 alone; round 3: p0.
  EXPECT_EQ(scheduleRounds({0, 1, 0, 1, 0}, {1, 2, 5, 2, 3}, true),
            (Rounds{{1, 2, 3}, {4}, {0}}));
  // Equal costs: one parameter of every owner per round.
  EXPECT_EQ(scheduleRounds({0, 1, 0, 1}, {1, 1, 1, 1}, true),
            (Rounds{{0, 1}, {2, 3}}));
  // A heavy owner with two large matrices, a light one with one large and
  // four small ones: the small ones share the second round with the
  // second large one instead of adding rounds after it.
  EXPECT_EQ(scheduleRounds({0, 0, 1, 1, 1, 1, 1}, {10, 10, 10, 4, 4, 1, 1},
                           true),
            (Rounds{{0, 2}, {1, 3, 4, 5, 6}}));
  // Sums equal to the anchor fit; one more does not.
  EXPECT_EQ(scheduleRounds({0, 1, 1, 1}, {3, 1, 1, 1}, true),
            (Rounds{{0, 1, 2, 3}}));
  EXPECT_EQ(scheduleRounds({0, 1, 1, 1}, {2.5, 1, 1, 1}, true),
            (Rounds{{0, 1, 2}, {3}}));
  // Zero costs pack together; one at a time ignores costs.
  EXPECT_EQ(scheduleRounds({0, 1, 1}, {0, 0, 0}, true), (Rounds{{0, 1, 2}}));
  EXPECT_EQ(scheduleRounds({0, 1, 0}, {1, 1, 1}, false),
            (Rounds{{0}, {1}, {2}}));
}

TEST(ScheduleRounds, StacksAnOwnersSameShapeMatricesUpToTheByteBound) {
  // Owner 0: p0, p2, p3 of shape A (100 bytes), p4 of shape B; owner 1:
  // p1 of shape A. Owner 0 by cost: p4, p0, p2, p3.
  std::vector<NsStackKey> keys = {
      {{8, 4}, 100}, {{8, 4}, 100}, {{8, 4}, 100}, {{8, 4}, 100},
      {{16, 8}, 400}};
  std::vector<int64_t> owners = {0, 1, 0, 0, 0};
  std::vector<double> cost = {1, 1, 1, 1, 4};
  // 200 bytes: stacks [p4] [p0 p2] [p3] on owner 0, [p1] on owner 1.
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 200),
            (Rounds{{1, 4}, {0, 2}, {3}}));
  // 299 bytes still hold two of shape A only.
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 299),
            (Rounds{{1, 4}, {0, 2}, {3}}));
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 300),
            (Rounds{{1, 4}, {0, 2, 3}}));
  // A matrix larger than the bound goes alone; so does one without a key.
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 50),
            scheduleRounds(owners, cost, true));
  keys[2].kind.clear();
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 300),
            (Rounds{{1, 4}, {0, 3}, {2}}));
  // A parameter without bytes never joins a stack.
  keys[3].bytes = 0;
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 300),
            (Rounds{{1, 4}, {0}, {2}, {3}}));
  // No bound, or one at a time: no stacks.
  EXPECT_EQ(scheduleRounds(owners, cost, true, keys, 0),
            scheduleRounds(owners, cost, true));
  EXPECT_EQ(scheduleRounds(owners, cost, false, keys, 300),
            scheduleRounds(owners, cost, false));
}

/// roundProgram as a string: one letter per action (S start gathers, A
/// advance them, C complete them, N Newton-Schulz, R start redistributes,
/// D advance them, F complete them), then the round.
std::string program(size_t rounds, int64_t prefetch) {
  std::string out;
  for (const RoundAction &a : roundProgram(rounds, prefetch)) {
    out += "SACNRDF"[a.kind];
    out += std::to_string(a.round) + " ";
  }
  return out;
}

TEST(RoundProgram, BlockingRoundsOneAfterAnother) {
  EXPECT_EQ(program(2, 0), "S0 C0 N0 R0 F0 S1 C1 N1 R1 F1 ");
  EXPECT_EQ(program(0, 2), "");
  // A negative prefetch is none.
  EXPECT_EQ(program(2, -1), program(2, 0));
}

TEST(RoundProgram, PrefetchStartsRoundsAheadAndCompletesOneBehind) {
  // Round i + 1 starts before round i's Newton-Schulz and goes a level
  // further after round i's gathers; round i's redistributes go a level
  // further before round i + 1's Newton-Schulz and complete after it.
  EXPECT_EQ(program(3, 1), "S0 S1 C0 A1 N0 R0 S2 C1 A2 D0 N1 R1 F0 "
                           "C2 D1 N2 R2 F1 F2 ");
  // Prefetch 2: the round in between advances a level more.
  EXPECT_EQ(program(4, 2), "S0 S1 S2 A1 C0 A1 N0 R0 S3 A2 C1 A2 D0 N1 R1 F0 "
                           "A3 C2 A3 D1 N2 R2 F1 C3 D2 N3 R3 F2 F3 ");
  // More prefetch than rounds: every round starts first.
  EXPECT_EQ(program(2, 5), "S0 S1 A1 C0 A1 N0 R0 C1 D0 N1 R1 F0 F1 ");
  // One round: nothing to advance.
  EXPECT_EQ(program(1, 1), "S0 C0 N0 R0 F0 ");
}

/// roundProgram of rounds with release groups: N, R, D and F name the
/// round and the group ("N0.1").
std::string groupedProgram(const std::vector<size_t> &groups,
                           int64_t prefetch) {
  std::string out;
  for (const RoundAction &a : roundProgram(groups, prefetch)) {
    out += "SACNRDF"[a.kind];
    out += std::to_string(a.round);
    if (a.kind >= RoundAction::Orthogonalise)
      out += "." + std::to_string(a.group);
    out += " ";
  }
  return out;
}

TEST(RoundProgram, ReleaseGroupsLeaveOneAfterAnother) {
  // One round of two groups: group 0's redistributes start, and go a level
  // further, before group 1's Newton-Schulz; both complete at the end.
  EXPECT_EQ(groupedProgram({2}, 1),
            "S0 C0 N0.0 R0.0 D0.0 N0.1 R0.1 F0.0 F0.1 ");
  // A split round followed by another advances and completes both groups.
  EXPECT_EQ(groupedProgram({2, 1}, 1),
            "S0 S1 C0 A1 N0.0 R0.0 D0.0 N0.1 R0.1 "
            "C1 D0.0 D0.1 N1.0 R1.0 F0.0 F0.1 F1.0 ");
  // One group per round is the plain program (PrefetchStarts... above).
  EXPECT_EQ(groupedProgram({1, 1, 1}, 1),
            "S0 S1 C0 A1 N0.0 R0.0 S2 C1 A2 D0.0 N1.0 R1.0 F0.0 "
            "C2 D1.0 N2.0 R2.0 F1.0 F2.0 ");
  EXPECT_EQ(groupedProgram({1, 1}, 0),
            "S0 C0 N0.0 R0.0 F0.0 S1 C1 N1.0 R1.0 F1.0 ");
}

/// HSDP on [rep = 2, dp = 2]: `small` 4x2 matrices (80 FLOPs of
/// Newton-Schulz each) and `large` 8x4 ones (640), owned by `owners` in
/// that order.
struct Hsdp {
  Mesh mesh{{"rep", "dp"}, {2, 2}};
  std::vector<ParamCostInput> params;
  std::vector<std::vector<CommStep>> steps;
  std::vector<int64_t> owners;
  std::vector<double> cost;

  Hsdp(size_t small, std::vector<int64_t> ownersOf,
       std::vector<int64_t> smallShape = {4, 2},
       std::vector<int64_t> largeShape = {8, 4})
      : owners(ownersOf) {
    for (size_t i = 0; i < owners.size(); ++i) {
      std::vector<int64_t> shape = i < small ? smallShape : largeShape;
      params.push_back(param(mesh, shape,
                             {Placement::replicate(), Placement::shard(0)},
                             owners[i], "p" + std::to_string(i)));
      steps.push_back(planSteps(params.back().plan, params.back().layout,
                                params.back().gradLayout, mesh, owners[i]));
      cost.push_back(
          ownerFlops(params.back().plan, shape, params.back().layout, mesh, 1));
    }
  }

  std::vector<std::vector<std::vector<size_t>>>
  groups(int64_t prefetch, bool batch = true,
         const CostModel &model = unitModel()) {
    std::vector<RoundParam> round;
    std::vector<double> bytes;
    for (size_t i = 0; i < params.size(); ++i) {
      const ParamCostInput &p = params[i];
      round.push_back({&p.plan, &steps[i], mesh.coords(p.owner)});
      bytes.push_back(static_cast<double>(gatheredElements(
                          p.plan, p.shape, p.layout, mesh, p.owner)) *
                      model.bytesPerElement);
    }
    std::vector<size_t> all(params.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = i;
    return releaseGroups({all}, round, owners, cost, bytes, model, prefetch,
                         batch);
  }
};

using Groups = std::vector<std::vector<std::vector<size_t>>>;

TEST(ReleaseGroups, LighterOwnersFirstWhenNothingHoldsTheOthersUp) {
  // Ranks 0 and 1 (replica 0) orthogonalise the small matrices, ranks 2
  // and 3 (replica 1) the large ones: replica 0's scatters after
  // Newton-Schulz involve no rank of replica 1.
  Hsdp h(2, {0, 1, 2, 3});
  EXPECT_EQ(h.groups(1), (Groups{{{0, 1}, {2, 3}}}));
  // Blocking or unbatched calls: one group.
  EXPECT_EQ(h.groups(0), (Groups{{{0, 1, 2, 3}}}));
  EXPECT_EQ(h.groups(1, /*batch=*/false), (Groups{{{0, 1, 2, 3}}}));
  // Results too small to repay the extra calls: E's largest owner sends 8
  // bytes (8 s at 1 byte/s); its two levels after Newton-Schulz (scatter,
  // broadcast) cost 2 latencies.
  CostModel slow = unitModel();
  slow.intraNode.latency = slow.interNode.latency = 4;
  EXPECT_EQ(h.groups(1, true, slow), (Groups{{{0, 1, 2, 3}}}));
  slow.intraNode.latency = slow.interNode.latency = 3.9;
  EXPECT_EQ(h.groups(1, true, slow), (Groups{{{0, 1}, {2, 3}}}));
}

TEST(ReleaseGroups, OneGroupWhenALargeOwnerWouldWait) {
  // Rank 1 orthogonalises a large matrix and takes part in replica 0's
  // scatter of rank 0's small result: waiting for it before its own
  // Newton-Schulz would hold it up.
  EXPECT_EQ(Hsdp(1, {0, 1}).groups(1), (Groups{{{0, 1}}}));
  // Equal work: nothing is lighter.
  EXPECT_EQ(Hsdp(0, {2, 3}).groups(1), (Groups{{{0, 1}}}));
  // An owner at more than half of the largest stays with it: rank 0 does
  // the small matrices p0..p4 (400 FLOPs), rank 2 the large p5 (640).
  EXPECT_EQ(Hsdp(5, {0, 0, 0, 0, 0, 2}).groups(1),
            (Groups{{{0, 1, 2, 3, 4, 5}}}));
  EXPECT_EQ(Hsdp(4, {0, 0, 0, 0, 2}).groups(1), (Groups{{{0, 1, 2, 3}, {4}}}));
}

TEST(ReleaseGroups, AReshapeAfterNewtonSchulzIsNoLevel) {
  // HSDP with flat storage over [rep = 2, dp = 1]: after Newton-Schulz a
  // result is scattered over dp (one rank: a reshape only), then broadcast
  // to the other replica. Rank 0 orthogonalises a small 4x2 matrix (E),
  // rank 1 a large 8x4 one (L). E's one level of calls (the broadcast)
  // costs one latency against its 8 bytes (8 s at 1 byte/s): the reshape
  // adds none.
  Mesh mesh{{"rep", "dp"}, {2, 1}};
  std::vector<ParamCostInput> params;
  std::vector<std::vector<CommStep>> steps;
  std::vector<int64_t> owners{0, 1};
  std::vector<double> cost, bytes;
  std::vector<std::vector<int64_t>> shapes{{4, 2}, {8, 4}};
  for (size_t i = 0; i < 2; ++i) {
    ParamCostInput p;
    p.shape = shapes[i];
    p.layout.placements = {Placement::replicate(), Placement::replicate()};
    p.layout.storage.kind = layout::StorageKind::Flat;
    p.layout.storage.group.axis = 1;
    p.layout.storage.group.setNumel({8, 32});
    p.layout.storage.member = static_cast<int64_t>(i);
    p.gradLayout.placements = p.layout.placements;
    ASSERT_EQ(planParam(p.shape, p.layout, mesh, {}, p.plan), "");
    p.owner = owners[i];
    params.push_back(p);
  }
  for (size_t i = 0; i < 2; ++i) {
    const ParamCostInput &p = params[i];
    steps.push_back(planSteps(p.plan, p.layout, p.gradLayout, mesh, p.owner));
    cost.push_back(ownerFlops(p.plan, p.shape, p.layout, mesh, 1));
    bytes.push_back(static_cast<double>(
        gatheredElements(p.plan, p.shape, p.layout, mesh, p.owner)));
  }
  std::vector<RoundParam> round;
  for (size_t i = 0; i < 2; ++i)
    round.push_back({&params[i].plan, &steps[i], mesh.coords(owners[i])});
  CostModel model = unitModel();
  auto groups = [&](double latency) {
    model.intraNode.latency = model.interNode.latency = latency;
    return releaseGroups({{0, 1}}, round, owners, cost, bytes, model, 1, true);
  };
  EXPECT_EQ(groups(7.9), (Groups{{{0}, {1}}}));
  EXPECT_EQ(groups(8), (Groups{{{0, 1}}}));
}

TEST(CostModelLinks, IntraNodeWhenEveryMemberSharesANode) {
  CostModel m; // 8 ranks per node
  auto bandwidth = [&](std::vector<int64_t> members) {
    return m.linkFor(members).bandwidth;
  };
  // [dp = 4, tp = 8]: tp's instances are nodes, dp's cross them.
  EXPECT_EQ(bandwidth({8, 9, 10, 11, 12, 13, 14, 15}), m.intraNode.bandwidth);
  EXPECT_EQ(bandwidth({1, 9, 17, 25}), m.interNode.bandwidth);
  // [dp = 3] and [dp = 4, tp = 3]: sizes that do not divide a node.
  EXPECT_EQ(bandwidth({0, 1, 2}), m.intraNode.bandwidth);
  EXPECT_EQ(bandwidth({3, 4, 5}), m.intraNode.bandwidth);
  EXPECT_EQ(bandwidth({6, 7, 8}), m.interNode.bandwidth);
  EXPECT_EQ(bandwidth({7}), m.intraNode.bandwidth);
}

TEST(EstimateSchedule, EachInstanceUsesItsOwnLink) {
  // A 6x2 matrix sharded over [dp = 3], owned by rank 0: the gather moves
  // 8 bytes into the owner (9 s on the unit link), Newton-Schulz takes
  // 4 * 2^2 * 6 + 2 * 2^3 = 112 FLOPs (14 s), the scatter 9 s.
  Mesh mesh{{"dp"}, {3}};
  std::vector<ParamCostInput> params{
      param(mesh, {6, 2}, {Placement::shard(0)}, 0)};
  CostModel model = unitModel();
  model.interNode = Link{100, 1};
  auto step = [&] {
    return estimateSchedule(params, mesh, 1, model, ScheduleKind::Rounds)
        .stepSeconds;
  };
  // Three ranks in one 8-rank node: the node's link, although 3 does not
  // divide 8.
  EXPECT_DOUBLE_EQ(step(), 32);
  // Two ranks per node: {0, 1, 2} spans two nodes (108 s per collective).
  model.ranksPerNode = 2;
  EXPECT_DOUBLE_EQ(step(), 230);
}

TEST(EstimateSchedule, AReshapeOverOneRankIsNoCall) {
  // Flat storage over [dp = 1]: the gradient's reduce-scatter, the gather
  // and the scatter over dp only reshape. What is left is Newton-Schulz on
  // the owner (8 elements, 10 s) and the broadcast over tp = 2 to the
  // other replica (1 + 8 bytes = 9 s).
  Mesh mesh{{"dp", "tp"}, {1, 2}};
  ParamCostInput p =
      param(mesh, {4, 2}, {Placement::replicate(), Placement::replicate()}, 1);
  p.layout.storage.kind = layout::StorageKind::Flat;
  p.layout.storage.group.axis = 0;
  p.layout.storage.group.setNumel({8});
  p.layout.storage.member = 0;
  p.gradLayout.placements = {Placement::partial(), Placement::replicate()};
  ASSERT_EQ(planParam(p.shape, p.layout, mesh, {}, p.plan), "");
  for (ScheduleKind kind : {ScheduleKind::Sequential, ScheduleKind::Rounds}) {
    Estimate e = estimateSchedule({p}, mesh, 1, unitModel(), kind);
    EXPECT_EQ(e.collectives, (std::vector<int64_t>{1, 1}));
    EXPECT_DOUBLE_EQ(e.stepSeconds, 19);
  }
}

TEST(EstimateSchedule, SequentialSerialisesTheOwners) {
  Mesh mesh{{"dp"}, {2}};
  Estimate e = estimateSchedule(fsdp(mesh, {0, 1}), mesh, 1, unitModel(),
                                ScheduleKind::Sequential);
  // p0: gather 0-5, NS on rank 0 5-15, scatter 15-20; p1: 20-25, 25-35,
  // 35-40.
  EXPECT_DOUBLE_EQ(e.stepSeconds, 40);
  EXPECT_EQ(e.collectives, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(e.compute, (std::vector<double>{10, 10}));
  EXPECT_EQ(e.comm, (std::vector<double>{20, 20}));
  EXPECT_DOUBLE_EQ(e.exposed(0), 30);
  EXPECT_EQ(e.peakBytes, (std::vector<double>{8, 8}));
}

TEST(EstimateSchedule, RoundsOrthogonaliseAtOnce) {
  Mesh mesh{{"dp"}, {2}};
  Estimate e = estimateSchedule(fsdp(mesh, {0, 1}), mesh, 1, unitModel(),
                                ScheduleKind::Rounds, 0, false,
                                /*batch=*/false);
  // Gathers 0-5 and 5-10, both NS 10-20, scatters 20-25 and 25-30.
  EXPECT_DOUBLE_EQ(e.stepSeconds, 30);
  EXPECT_DOUBLE_EQ(lowerBound(e), 20);
}

TEST(EstimateSchedule, BatchedRoundsPayOneLatencyPerCall) {
  Mesh mesh{{"dp"}, {2}};
  Estimate e = estimateSchedule(fsdp(mesh, {0, 1}), mesh, 1, unitModel(),
                                ScheduleKind::Rounds);
  // One batched gather: each rank sends its 4 bytes to the other owner and
  // receives 4, so 1 + 4 = 5 s (0-5); both NS 5-15; one batched scatter
  // 15-20.
  EXPECT_DOUBLE_EQ(e.stepSeconds, 20);
  EXPECT_EQ(e.collectives, (std::vector<int64_t>{2, 2}));
  EXPECT_DOUBLE_EQ(lowerBound(e), 10);
}

TEST(EstimateSchedule, PrefetchHidesTheNextRoundsGathers) {
  Mesh mesh{{"dp"}, {2}};
  std::vector<ParamCostInput> params = fsdp(mesh, {0, 0, 1, 1});
  Estimate blocking = estimateSchedule(params, mesh, 1, unitModel(),
                                       ScheduleKind::Rounds, 0, false, false);
  Estimate prefetch = estimateSchedule(params, mesh, 1, unitModel(),
                                       ScheduleKind::Rounds, 1, false, false);
  // Blocking: two rounds of 10 (gathers) + 10 (NS) + 10 (scatters).
  EXPECT_DOUBLE_EQ(blocking.stepSeconds, 60);
  // Prefetch 1: round 1's gathers (10-20) run during round 0's NS; the
  // link is then busy without a gap until 40 = the lower bound (8
  // collectives of 5 s per rank).
  EXPECT_DOUBLE_EQ(prefetch.stepSeconds, 40);
  EXPECT_DOUBLE_EQ(lowerBound(blocking), 40);
  EXPECT_EQ(prefetch.peakBytes, (std::vector<double>{16, 16}));

  // Batched: every round is one gather and one scatter of 5 s per rank.
  // Blocking: 2 x (5 + 10 + 5) = 40. Prefetch 1: round 1's gather (5-10)
  // runs during round 0's NS (5-15), round 0's scatter (15-20) during
  // round 1's NS (15-25), round 1's scatter 25-30; the bound is the NS
  // time, 20.
  Estimate batchedBlocking = estimateSchedule(params, mesh, 1, unitModel(),
                                              ScheduleKind::Rounds);
  Estimate batchedPrefetch = estimateSchedule(params, mesh, 1, unitModel(),
                                              ScheduleKind::Rounds, 1);
  EXPECT_DOUBLE_EQ(batchedBlocking.stepSeconds, 40);
  EXPECT_DOUBLE_EQ(batchedPrefetch.stepSeconds, 30);
  EXPECT_DOUBLE_EQ(lowerBound(batchedBlocking), 20);
  EXPECT_EQ(batchedPrefetch.collectives, (std::vector<int64_t>{4, 4}));
}

/// When `rank`'s first event named `name` starts (-1: none).
double startOf(const Estimate &e, int64_t rank, const std::string &name) {
  for (const TraceEvent &t : e.trace)
    if (t.rank == rank && t.name == name)
      return t.start;
  return -1;
}

TEST(EstimateSchedule, ChainLevelsLeaveAtTheirProgramPoints) {
  // Two 4x4 matrices on [dp = 2, tp = 2], split over both axes, both owned
  // by rank 0: two rounds. Gathers: over tp (4 ranks, 5 s), then over dp
  // (ranks 0 and 2, 9 s); Newton-Schulz 48 s; scatters: dp (9 s), then tp
  // (5 s).
  Mesh mesh{{"dp", "tp"}, {2, 2}};
  std::vector<ParamCostInput> params;
  for (const char *name : {"p0", "p1"})
    params.push_back(param(
        mesh, {4, 4}, {Placement::shard(0), Placement::shard(1)}, 0, name));
  Estimate e = estimateSchedule(params, mesh, 1, unitModel(),
                                ScheduleKind::Rounds, 1, /*trace=*/true);
  // Rank 0's link, in program order (plan::roundProgram): both tp gathers
  // (0-5, 5-10); p0's dp gather once its tp gather is waited for (10-19);
  // p1's dp gather before p0's Newton-Schulz (19-28), which it overlaps
  // (19-67); p0's dp scatter (67-76); p0's tp scatter after waiting for it,
  // before p1's Newton-Schulz (76-81, overlapping 76-124); p1's scatters
  // 124-133 and 133-138.
  EXPECT_DOUBLE_EQ(startOf(e, 0, "gather dp dim 0 root 0 holders [tp] p1"), 19);
  EXPECT_DOUBLE_EQ(startOf(e, 0, "newton_schulz p0"), 19);
  EXPECT_DOUBLE_EQ(startOf(e, 0, "scatter tp dim 1 root 0 p0"), 76);
  EXPECT_DOUBLE_EQ(startOf(e, 0, "newton_schulz p1"), 76);
  EXPECT_DOUBLE_EQ(e.stepSeconds, 138);
  // Blocking: each round 5 + 9 + 48 + 9 + 5 = 76.
  EXPECT_DOUBLE_EQ(
      estimateSchedule(params, mesh, 1, unitModel(), ScheduleKind::Rounds)
          .stepSeconds,
      152);
}

TEST(EstimateSchedule, EarlyResultsLeaveDuringTheLargeNewtonSchulz) {
  // test/Dialect/Muon/expand/early-release.mlir on the H100 model: ranks 0
  // and 1 orthogonalise two 8x131072 matrices each, ranks 2 and 3 one
  // 640x640 matrix each (about 112 us longer). The candidate split is
  // kept: the step is estimated shorter with it.
  Hsdp h(4, {0, 0, 1, 1, 2, 3}, {8, 131072}, {640, 640});
  CostModel model;
  model.nsFlopRate = 67e12; // fp32, as muon-report takes an f32 step
  Estimate e = estimateSchedule(h.params, h.mesh, 5, model,
                                ScheduleKind::Rounds, 1, /*trace=*/true);
  EXPECT_EQ(e.releaseGroups, (std::vector<size_t>{2}));
  // Rank 2 receives replica 0's results over rep while it runs p4's
  // Newton-Schulz; without the split they would leave after it.
  double ns = startOf(e, 2, "newton_schulz p4");
  double nsEnd = -1, early = -1;
  for (const TraceEvent &t : e.trace) {
    if (t.rank == 2 && t.lane == TraceEvent::Compute)
      nsEnd = std::max(nsEnd, t.end);
    if (t.rank == 2 && t.lane == TraceEvent::Comm &&
        t.name.rfind("broadcast", 0) == 0 && early < 0)
      early = t.end;
  }
  ASSERT_GE(ns, 0);
  ASSERT_GE(early, 0);
  EXPECT_LT(early, nsEnd);
  // Blocking calls: one group.
  EXPECT_EQ(
      estimateSchedule(h.params, h.mesh, 5, model, ScheduleKind::Rounds, 0)
          .releaseGroups,
      (std::vector<size_t>{1}));
}

TEST(EstimateSchedule, ACandidateSplitThatGainsNothingIsDropped) {
  // On the unit model replica 0's small results (two 4x2 matrices) are a
  // candidate (ReleaseGroups above), but one broadcast batch of all four
  // results after the large Newton-Schulz takes as long as the large
  // results' alone (replica 1's ranks send 32 bytes either way): the split
  // would add a call and gain nothing, so the estimate (and the
  // expansion, which asks it) keeps one group.
  Hsdp h(2, {0, 1, 2, 3});
  EXPECT_EQ(h.groups(1), (Groups{{{0, 1}, {2, 3}}}));
  ScheduleEstimator estimator(h.params, h.mesh, 1, unitModel());
  EXPECT_EQ(estimator.releaseGroups(ScheduleKind::Rounds, 1, true),
            (Groups{{{0, 1, 2, 3}}}));
  Estimate e = estimator.estimate(ScheduleKind::Rounds, 1);
  EXPECT_EQ(e.releaseGroups, (std::vector<size_t>{1}));
  EXPECT_DOUBLE_EQ(e.stepSeconds, 147);
}

TEST(EstimateSchedule, GradientReductionsBlockWhereTheRoundStarts) {
  // Two 4x2 matrices on [dp = 2, cp = 2], sharded over dp, gradients
  // partial over cp, both owned by rank 0, prefetch 1. The code reduces a
  // round's gradients (blocking, 5 s) when the round starts, so round 1's
  // reduction holds rank 0 before round 0's Newton-Schulz: reduce p0 0-5,
  // gather p0 5-10 (async), reduce p1 10-15 (after the gather on the
  // link), gather p1 15-20, Newton-Schulz p0 only from 15.
  Mesh mesh{{"dp", "cp"}, {2, 2}};
  std::vector<ParamCostInput> params;
  for (const char *name : {"p0", "p1"})
    params.push_back(param(mesh, {4, 2},
                           {Placement::shard(0), Placement::replicate()}, 0,
                           name, {Placement::shard(0), Placement::partial()}));
  Estimate e = estimateSchedule(params, mesh, 1, unitModel(),
                                ScheduleKind::Rounds, 1, /*trace=*/true);
  EXPECT_DOUBLE_EQ(startOf(e, 0, "reduce_grad cp sum p1"), 10);
  EXPECT_DOUBLE_EQ(startOf(e, 0, "gather dp dim 0 root 0 holders [cp] p1"),
                   15);
  EXPECT_DOUBLE_EQ(startOf(e, 0, "newton_schulz p0"), 15);
  // Then: scatter p0 25-30; its broadcast over cp after waiting for it,
  // before Newton-Schulz p1 (30-35, 30-40); p1's scatter 40-45 and
  // broadcast 45-50.
  EXPECT_DOUBLE_EQ(startOf(e, 0, "broadcast cp root 0 p0"), 30);
  EXPECT_DOUBLE_EQ(e.stepSeconds, 50);
}

TEST(EstimateSchedule, NaiveOrthogonalisesEverythingEverywhere) {
  Mesh mesh{{"dp"}, {2}};
  Estimate e = estimateSchedule(fsdp(mesh, {0, 1}), mesh, 1, unitModel(),
                                ScheduleKind::Naive);
  // Two all-gathers (5 s each), then both NS on every rank.
  EXPECT_DOUBLE_EQ(e.stepSeconds, 30);
  EXPECT_EQ(e.compute, (std::vector<double>{20, 20}));
  EXPECT_EQ(e.collectives, (std::vector<int64_t>{2, 2}));
}

} // namespace
