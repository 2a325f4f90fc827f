//===- AssignOwners.cpp - One owner rank per parameter --------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <numeric>

namespace muon {
namespace optim {
#define GEN_PASS_DEF_MUONASSIGNOWNERS
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"
} // namespace optim
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;

static std::vector<int64_t> roundRobin(const StepFacts &facts) {
  std::vector<int64_t> owners;
  for (size_t i = 0; i < facts.params.size(); ++i) {
    std::vector<int64_t> c =
        plan::ownerCandidates(facts.params[i].plan, facts.mesh);
    owners.push_back(c[i % c.size()]);
  }
  return owners;
}

/// Greedy longest-processing-time. An expert stack's owner stands for one
/// rank per expert group, so its cost lands on all of them and the choice
/// compares the most loaded of them.
static std::vector<int64_t> balanced(const StepFacts &facts, int64_t steps) {
  size_t n = facts.params.size();
  std::vector<double> cost(n);
  for (size_t i = 0; i < n; ++i) {
    const ParamFacts &p = facts.params[i];
    cost[i] = plan::ownerFlops(p.plan, p.shape, p.layout, facts.mesh, steps);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(facts.mesh.numRanks(), 0.0);
  std::vector<int64_t> owners(n, -1);
  for (size_t i : order) {
    const plan::ParamPlan &pp = facts.params[i].plan;
    std::vector<int64_t> candidates = plan::ownerCandidates(pp, facts.mesh);
    if (candidates.empty())
      continue;
    // A candidate sits at coordinate 0 of every independent axis, and its
    // owner ranks are the box along those axes: the same offsets from
    // every candidate (ranks are row-major in the coordinates). Taken once
    // per parameter instead of enumerated for each of its candidates.
    std::vector<int64_t> offsets =
        plan::ownerRanks(pp, facts.mesh, candidates.front());
    for (int64_t &o : offsets)
      o -= candidates.front();
    int64_t best = -1;
    double bestLoad = 0;
    for (int64_t c : candidates) {
      double l = 0;
      for (int64_t o : offsets)
        l = std::max(l, load[c + o]);
      if (best < 0 || l < bestLoad) {
        best = c;
        bestLoad = l;
      }
    }
    owners[i] = best;
    for (int64_t o : offsets)
      load[best + o] += cost[i];
  }
  return owners;
}

static std::vector<int64_t> fromAssignment(ArrayAttr assignment, size_t n) {
  std::vector<int64_t> owners(n, -1);
  for (auto [rank, entry] : llvm::enumerate(assignment))
    for (int64_t i : cast<DenseI64ArrayAttr>(entry).asArrayRef())
      owners[i] = rank;
  return owners;
}

namespace {
struct MuonAssignOwnersPass
    : public ::muon::optim::impl::MuonAssignOwnersBase<MuonAssignOwnersPass> {
  using MuonAssignOwnersBase::MuonAssignOwnersBase;

  void runOnOperation() override {
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    std::optional<Strategy> override;
    if (!strategy.empty()) {
      override = symbolizeStrategy(strategy);
      if (!override || *override == Strategy::Explicit) {
        mlir::emitError(getOperation().getLoc(),
                        "muon-assign-owners: unknown strategy '")
            << strategy << "'; expected round_robin or balanced";
        return signalPassFailure();
      }
    }
    SymbolTableCollection tables;
    WalkResult result = getOperation().walk([&](StepOp step) {
      FailureOr<StepFacts> facts = analyzeStep(step, &tables);
      if (failed(facts) || failed(dist::checkEnumerableMesh(
                               step, facts->meshOp, "muon-assign-owners")))
        return WalkResult::interrupt();
      Strategy s = override ? *override : step.getStrategy();
      // Owners a step already carries fix its assignment, whatever its
      // strategy (the strategy says how to fill them in when absent); only
      // the pass option `strategy=` recomputes them.
      if (!override && step.getOwners())
        return WalkResult::advance();
      std::vector<int64_t> owners;
      switch (s) {
      case Strategy::RoundRobin:
        owners = roundRobin(*facts);
        break;
      case Strategy::Balanced:
        owners = balanced(*facts, step.getNsSteps());
        break;
      case Strategy::Explicit:
        if (std::optional<ArrayRef<int64_t>> given = step.getOwners())
          owners.assign(given->begin(), given->end());
        else
          owners = fromAssignment(*step.getAssignment(), facts->params.size());
        break;
      }
      step.setOwners(owners);
      step.removeAssignmentAttr();
      if (override)
        step.setStrategy(s);
      return WalkResult::advance();
    });
    if (result.wasInterrupted() ||
        failed(muon::verifyPassOutput(getOperation(), getArgument())))
      signalPassFailure();
  }
};
} // namespace
