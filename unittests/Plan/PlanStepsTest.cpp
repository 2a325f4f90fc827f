//===- PlanStepsTest.cpp - The collective plan of one parameter -----------===//
//
// Exact step lists (plan::planSteps, printed with plan::describe) for the
// layouts the step supports. Every expectation is worked out by hand from
// the rules in docs/muon-dialect.md: gathers undo the innermost split first,
// Newton-Schulz runs where every split is undone, scatters redo the
// outermost split first, replicas get a broadcast from the owner's
// coordinate, partial gradients are all-reduced before anything else.
//
//===----------------------------------------------------------------------===//

#include "muon/Plan/ParamPlan.h"

#include <gtest/gtest.h>

using namespace muon;
using namespace muon::plan;
using layout::Layout;
using layout::Mesh;
using layout::Placement;
using Shape = std::vector<int64_t>;
using Lines = std::vector<std::string>;

namespace {

Layout layoutOf(std::vector<Placement> placements) {
  Layout l;
  l.placements = std::move(placements);
  return l;
}

/// The plan's steps for `owner`, one line each.
Lines stepsOf(const Shape &shape, const Layout &param, const Layout &grad,
              const Mesh &mesh, int64_t owner, LocalTo local = {}) {
  EXPECT_EQ(layout::verify(shape, param, mesh), "");
  ParamPlan plan;
  EXPECT_EQ(planParam(shape, param, mesh, local, plan), "");
  EXPECT_EQ(whyNotOwner(plan, mesh, owner), "");
  Lines out;
  for (const CommStep &s : planSteps(plan, param, grad, mesh, owner))
    out.push_back(describe(s, mesh));
  return out;
}

Lines stepsOf(const Shape &shape, const Layout &l, const Mesh &mesh,
              int64_t owner) {
  return stepsOf(shape, l, l, mesh, owner);
}

TEST(PlanSteps, Fsdp) {
  Mesh mesh{{"dp"}, {4}};
  EXPECT_EQ(stepsOf({8, 4}, layoutOf({Placement::shard(0)}), mesh, 2),
            (Lines{"gather dp dim 0 root 2", "newton_schulz holders [dp]",
                   "scatter dp dim 0 root 2"}));
}

TEST(PlanSteps, FsdpTransfersFollowTheChunkRule) {
  // 10 rows over 4 ranks: 3, 3, 3, 1. Owner 0 receives the others' rows
  // (4 columns each) and sends the same pieces back.
  Mesh mesh{{"dp"}, {4}};
  Layout l = layoutOf({Placement::shard(0)});
  ParamPlan plan;
  ASSERT_EQ(planParam({10, 4}, l, mesh, {}, plan), "");
  std::vector<CommStep> steps = planSteps(plan, l, l, mesh, 0);
  ASSERT_EQ(steps.size(), 3u);
  auto list = [&](const CommStep &s) {
    std::vector<std::vector<int64_t>> r;
    for (const Transfer &t : transfersOf(plan, s, {10, 4}, mesh, 0))
      r.push_back({t.from, t.to, t.elements});
    return r;
  };
  using T = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(list(steps[0]), (T{{1, 0, 12}, {2, 0, 12}, {3, 0, 4}}));
  EXPECT_TRUE(list(steps[1]).empty());
  EXPECT_EQ(list(steps[2]), (T{{0, 1, 12}, {0, 2, 12}, {0, 3, 4}}));
}

TEST(PlanSteps, TpColumnThenFsdpSameDimFsdpOuter) {
  // Both axes shard dim 0; default nesting is mesh order: dp outer, tp
  // inner. Undo tp first, then dp among the ranks that hold tp-gathered data.
  Mesh mesh{{"dp", "tp"}, {2, 2}};
  EXPECT_EQ(
      stepsOf({8, 4}, layoutOf({Placement::shard(0), Placement::shard(0)}),
              mesh, 3),
      (Lines{"gather tp dim 0 root 1", "gather dp dim 0 root 1 holders [tp]",
             "newton_schulz holders [tp,dp]",
             "scatter dp dim 0 root 1 holders [tp]",
             "scatter tp dim 0 root 1"}));
}

TEST(PlanSteps, FsdpThenTpSameDimTpOuter) {
  // order = {0 = [tp, dp]}: tp outer, so dp (inner) is gathered first.
  Mesh mesh{{"dp", "tp"}, {2, 2}};
  Layout l = layoutOf({Placement::shard(0), Placement::shard(0)});
  l.shardOrder = {{0, {1, 0}}};
  EXPECT_EQ(stepsOf({8, 4}, l, mesh, 3),
            (Lines{"gather dp dim 0 root 1",
                   "gather tp dim 0 root 1 holders [dp]",
                   "newton_schulz holders [dp,tp]",
                   "scatter tp dim 0 root 1 holders [dp]",
                   "scatter dp dim 0 root 1"}));
}

TEST(PlanSteps, FsdpRowsTpColumnsDifferentDims) {
  // FSDP on rows, TP on columns (a row-parallel weight): mesh order, dp
  // outer, so tp's split is undone first.
  Mesh mesh{{"dp", "tp"}, {2, 2}};
  EXPECT_EQ(
      stepsOf({8, 6}, layoutOf({Placement::shard(0), Placement::shard(1)}),
              mesh, 0),
      (Lines{"gather tp dim 1 root 0", "gather dp dim 0 root 0 holders [tp]",
             "newton_schulz holders [tp,dp]",
             "scatter dp dim 0 root 0 holders [tp]",
             "scatter tp dim 1 root 0"}));
}

TEST(PlanSteps, Hsdp) {
  // Replicated over rep, sharded over fsdp: every step runs on the owner's
  // replica only; the result is broadcast over rep from the owner's
  // coordinate there.
  Mesh mesh{{"rep", "fsdp"}, {2, 2}};
  EXPECT_EQ(
      stepsOf({8, 4}, layoutOf({Placement::replicate(), Placement::shard(0)}),
              mesh, 3),
      (Lines{"gather fsdp dim 0 root 1 holders [rep]",
             "newton_schulz holders [rep,fsdp]",
             "scatter fsdp dim 0 root 1 holders [rep]",
             "broadcast rep root 1"}));
}

TEST(PlanSteps, ContextParallelPartialGradient) {
  // The parameter is replicated over cp, its gradient partial: all-reduce,
  // orthogonalise on the owner, broadcast from the owner's cp coordinate.
  Mesh mesh{{"cp"}, {2}};
  EXPECT_EQ(stepsOf({6, 4}, layoutOf({Placement::replicate()}),
                    layoutOf({Placement::partial()}), mesh, 1),
            (Lines{"reduce_grad cp sum", "newton_schulz holders [cp]",
                   "broadcast cp root 1"}));
}

TEST(PlanSteps, DdpAverageAndSumOnTwoAxes) {
  // One all-reduce over both axes: a sum divided by the avg axis's size.
  Mesh mesh{{"a", "b"}, {2, 2}};
  EXPECT_EQ(stepsOf({6, 4},
                    layoutOf({Placement::replicate(), Placement::replicate()}),
                    layoutOf({Placement::partial(layout::ReduceKind::Avg),
                              Placement::partial()}),
                    mesh, 2),
            (Lines{"reduce_grad a,b sum divided by 2",
                   "newton_schulz holders [a,b]", "broadcast a,b root 2"}));
  // Averages only: one avg all-reduce, nothing divided after it.
  Mesh three{{"a", "b", "c"}, {3, 2, 2}};
  EXPECT_EQ(stepsOf({6, 4},
                    layoutOf({Placement::replicate(), Placement::replicate(),
                              Placement::replicate()}),
                    layoutOf({Placement::partial(layout::ReduceKind::Avg),
                              Placement::partial(layout::ReduceKind::Avg),
                              Placement::replicate()}),
                    three, 0),
            (Lines{"reduce_grad a,b avg", "newton_schulz holders [a,b,c]",
                   "broadcast a,b,c root 0"}));
  // Two avg axes beside a sum axis: divided by their product.
  EXPECT_EQ(stepsOf({6, 4},
                    layoutOf({Placement::replicate(), Placement::replicate(),
                              Placement::replicate()}),
                    layoutOf({Placement::partial(layout::ReduceKind::Avg),
                              Placement::partial(),
                              Placement::partial(layout::ReduceKind::Avg)}),
                    three, 0),
            (Lines{"reduce_grad a,b,c sum divided by 6",
                   "newton_schulz holders [a,b,c]", "broadcast a,b,c root 0"}));
}

TEST(PlanSteps, AxesOfSizeOneMoveNothing) {
  // tp has one rank: its shard is the whole extent, its partial gradient is
  // already reduced and its replicas are the owner itself. Only dp remains
  // (holder conditions on size-1 axes stay: they hold on every rank).
  Mesh mesh{{"dp", "tp", "rep"}, {2, 1, 1}};
  EXPECT_EQ(stepsOf({8, 4},
                    layoutOf({Placement::shard(0), Placement::shard(1),
                              Placement::replicate()}),
                    mesh, 1),
            (Lines{"gather dp dim 0 root 1 holders [rep,tp]",
                   "newton_schulz holders [rep,tp,dp]",
                   "scatter dp dim 0 root 1 holders [rep,tp]"}));
  EXPECT_EQ(stepsOf({6, 4},
                    layoutOf({Placement::replicate(), Placement::replicate(),
                              Placement::replicate()}),
                    layoutOf({Placement::partial(), Placement::partial(),
                              Placement::replicate()}),
                    mesh, 0),
            (Lines{"reduce_grad dp sum", "newton_schulz holders [dp,tp,rep]",
                   "broadcast dp root 0"}));
}

TEST(PlanSteps, ExpertStackSplitsNothingOverEp) {
  // 4 experts over ep (a batch dim: independent), rows over dp. Owners are
  // named by their ep-coordinate-0 representative; nothing crosses ep.
  Mesh mesh{{"ep", "dp"}, {2, 2}};
  EXPECT_EQ(
      stepsOf({4, 8, 6}, layoutOf({Placement::shard(0), Placement::shard(1)}),
              mesh, 1),
      (Lines{"gather dp dim 1 root 1", "newton_schulz holders [dp]",
             "scatter dp dim 1 root 1"}));
}

TEST(PlanSteps, ExpertAnnotatedLivesAtOneCoordinate) {
  // expert = ep[1]: the parameter is replicated in layout but exists only
  // at ep = 1; it is sharded over dp there.
  Mesh mesh{{"ep", "dp"}, {2, 2}};
  EXPECT_EQ(stepsOf({8, 4},
                    layoutOf({Placement::replicate(), Placement::shard(0)}),
                    layoutOf({Placement::replicate(), Placement::shard(0)}),
                    mesh, 3, LocalTo{0, 1}),
            (Lines{"gather dp dim 0 root 1", "newton_schulz holders [dp]",
                   "scatter dp dim 0 root 1"}));
}

TEST(PlanSteps, WholeStorageNeedsNoCollective) {
  Mesh mesh{{"dp"}, {4}};
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = layout::StorageKind::Whole;
  l.storage.axis = 0;
  l.storage.owner = 2;
  EXPECT_EQ(stepsOf({6, 4}, l, mesh, 2), (Lines{"newton_schulz"}));
}

TEST(PlanSteps, WeightedDimStorage) {
  Mesh mesh{{"dp"}, {2}};
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = layout::StorageKind::Dim;
  l.storage.splits = {{0, 0, {1, 3}}};
  EXPECT_EQ(stepsOf({8, 4}, l, mesh, 1),
            (Lines{"gather dp storage dim 0 root 1 weights [1,3]",
                   "newton_schulz holders [dp]",
                   "scatter dp storage dim 0 root 1 weights [1,3]"}));
}

TEST(PlanSteps, FlatStorageMovesElementRanges) {
  // Group of two tensors, 12 + 8 elements, over 2 ranks: 10 elements each.
  // The first tensor (member 0) has elements [0, 10) on rank 0 and [10, 12)
  // on rank 1.
  Mesh mesh{{"dp"}, {2}};
  Layout l = layoutOf({Placement::replicate()});
  l.storage.kind = layout::StorageKind::Flat;
  l.storage.group.axis = 0;
  l.storage.group.setNumel({12, 8});
  l.storage.member = 0;
  EXPECT_EQ(stepsOf({3, 4}, l, mesh, 0),
            (Lines{"gather dp flat dim 0 root 0 sizes [10,2]",
                   "newton_schulz holders [dp]",
                   "scatter dp flat dim 0 root 0 sizes [10,2]"}));
}

TEST(PlanSteps, FlatStorageOverOneRankOnlyReshapes) {
  // dp has one rank: its element range is the whole tensor (12 elements),
  // so the gradient's reduce-scatter, the gather and the scatter over dp
  // move nothing and only reshape; the replicas on tp get the broadcast.
  Mesh mesh{{"dp", "tp"}, {1, 2}};
  Layout l = layoutOf({Placement::replicate(), Placement::replicate()});
  l.storage.kind = layout::StorageKind::Flat;
  l.storage.group.axis = 0;
  l.storage.group.setNumel({12, 8});
  l.storage.member = 0;
  Layout grad = layoutOf({Placement::partial(), Placement::replicate()});
  EXPECT_EQ(stepsOf({3, 4}, l, grad, mesh, 1),
            (Lines{"reduce_grad dp sum flat dim 0 sizes [12] reshape only",
                   "gather dp flat dim 0 root 0 holders [tp] sizes [12] "
                   "reshape only",
                   "newton_schulz holders [tp,dp]",
                   "scatter dp flat dim 0 root 0 holders [tp] sizes [12] "
                   "reshape only",
                   "broadcast tp root 1"}));
}

} // namespace
