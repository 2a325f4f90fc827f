//===- StepCost.cpp - A muon.step as the schedule estimate's input --------===//

#include "StepCost.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace ::muon::optim;
namespace plan = ::muon::plan;

std::vector<plan::ParamCostInput>
muon::optim::costInputs(StepOp step, const StepFacts &facts) {
  ArrayRef<int64_t> owners = *step.getOwners();
  std::vector<plan::ParamCostInput> inputs;
  for (auto [i, p] : llvm::enumerate(facts.params))
    inputs.push_back({p.plan, p.shape, p.layout, p.gradLayout, owners[i],
                      step.getParamInfoOf(i).getName().getValue().str()});
  return inputs;
}

plan::ScheduleKind muon::optim::scheduleOf(StepOp step) {
  return step.getAsyncGpuParallelism() ? plan::ScheduleKind::Rounds
                                       : plan::ScheduleKind::Sequential;
}

std::vector<plan::NsStackKey> muon::optim::nsStackKeys(const StepFacts &facts) {
  std::vector<plan::NsStackKey> keys;
  for (const ParamFacts &p : facts.params) {
    plan::NsStackKey key;
    std::vector<std::pair<int64_t, int64_t>> matrices =
        plan::nsMatrices(p.plan);
    if (p.shape.size() == 2 && p.plan.batch == 1 && matrices.size() == 1) {
      auto [rows, cols] = matrices.front();
      key.kind = {rows, cols,
                  static_cast<int64_t>(reinterpret_cast<uintptr_t>(
                      p.type.getElementType().getAsOpaquePointer()))};
      key.bytes = plan::f32BytesSaturating(rows * cols);
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

std::unique_ptr<plan::ScheduleEstimator>
muon::optim::estimatorOf(StepOp step, const StepFacts &facts,
                         int64_t nsStackBytes, const CostModelOptions &model) {
  auto estimator = std::make_unique<plan::ScheduleEstimator>(
      costInputs(step, facts), facts.mesh, step.getNsSteps(),
      costModelFor(step, model));
  if (nsStackBytes > 0)
    estimator->stackNewtonSchulz(nsStackKeys(facts), nsStackBytes);
  return estimator;
}

/// What an owner's Newton-Schulz of each parameter costs (FLOPs).
static std::vector<double> nsCosts(StepOp step, const StepFacts &facts) {
  std::vector<double> cost;
  for (const ParamFacts &p : facts.params)
    cost.push_back(plan::ownerFlops(p.plan, p.shape, p.layout, facts.mesh,
                                    step.getNsSteps()));
  return cost;
}

static std::vector<int64_t> ownersOf(StepOp step) {
  return std::vector<int64_t>(step.getOwners()->begin(),
                              step.getOwners()->end());
}

std::vector<std::vector<size_t>> muon::optim::roundsOf(StepOp step,
                                                       const StepFacts &facts,
                                                       int64_t nsStackBytes) {
  return plan::scheduleRounds(ownersOf(step), nsCosts(step, facts),
                              step.getAsyncGpuParallelism(), nsStackKeys(facts),
                              nsStackBytes);
}

plan::ReleaseGroups
muon::optim::releasesOf(StepOp step, const StepFacts &facts,
                        const std::vector<std::vector<size_t>> &rounds,
                        const std::vector<std::vector<plan::CommStep>> &steps,
                        int64_t nsStackBytes, int64_t prefetch, bool batch,
                        const CostModelOptions &model) {
  std::vector<int64_t> owners = ownersOf(step);
  plan::CostModel costModel = costModelFor(step, model);
  std::vector<plan::RoundParam> params;
  std::vector<double> bytes;
  for (size_t p = 0; p < facts.params.size(); ++p) {
    const ParamFacts &f = facts.params[p];
    params.push_back({&f.plan, &steps[p], facts.mesh.coords(owners[p])});
    bytes.push_back(static_cast<double>(plan::gatheredElements(
                        f.plan, f.shape, f.layout, facts.mesh, owners[p])) *
                    costModel.bytesPerElement);
  }
  plan::ReleaseGroups candidates =
      plan::releaseGroups(rounds, params, owners, nsCosts(step, facts), bytes,
                          costModel, prefetch, batch);
  if (candidates == plan::oneGroupPerRound(rounds))
    return candidates;
  // Only where there is a candidate: the estimate simulates every rank,
  // over these rounds and candidates (what the expansion emits).
  return estimatorOf(step, facts, nsStackBytes, model)
      ->releaseGroups(scheduleOf(step), prefetch, batch, rounds, candidates);
}

/// Whether `bytes` (a whole number, held as a double) is more than
/// `bound`: compared as integers, since converting the bound to double
/// rounds 2^63 - 1 up to 2^63 and makes a peak of 2^63 fit.
static bool exceeds(double bytes, int64_t bound) {
  constexpr double twoTo63 = 9223372036854775808.0;
  return bytes >= twoTo63 || static_cast<int64_t>(bytes) > bound;
}

/// `bytes` (a whole number) in decimal digits, exact up to 2^64 and past
/// the range of int64_t.
static std::string bytesText(double bytes) {
  return llvm::formatv("{0:F0}", bytes).str();
}

int64_t muon::optim::boundedPrefetch(StepOp step, const StepFacts &facts,
                                     int64_t maxPrefetchBytes,
                                     int64_t nsStackBytes) {
  int64_t k = step.getPrefetchCount();
  if (maxPrefetchBytes <= 0 || k == 0)
    return k;
  std::vector<plan::ParamCostInput> inputs = costInputs(step, facts);
  std::vector<std::vector<size_t>> rounds =
      roundsOf(step, facts, nsStackBytes);
  auto peakOf = [&](int64_t depth) {
    std::vector<double> peak = plan::gatheredPeakBytes(
        inputs, facts.mesh, rounds, depth, /*bytesPerElement=*/4);
    auto at = std::max_element(peak.begin(), peak.end());
    return std::make_pair(*at, at - peak.begin());
  };
  // Beyond the number of rounds every round is in flight already: start
  // there, so a huge prefetch_count costs no more than that many tries.
  int64_t ahead = std::min<int64_t>(k, static_cast<int64_t>(rounds.size()));
  auto [wanted, rank] = peakOf(ahead);
  int64_t fits = ahead;
  double held = wanted;
  while (fits > 0 && exceeds(held, maxPrefetchBytes))
    held = peakOf(--fits).first;
  if (fits == ahead)
    return k; // fits as given (a depth past the rounds runs as the rounds)
  // Say "every round in flight", not the count as given, as the report.
  std::string asked =
      prefetchPastLastRound(k, static_cast<int64_t>(rounds.size()))
          ? "all " + std::to_string(rounds.size()) + " rounds in flight"
          : std::to_string(k) + " round(s) ahead";
  if (fits != k) {
    InFlightDiagnostic remark =
        step.emitRemark() << "prefetch_count " << k << " lowered to " << fits
                          << " by max-prefetch-bytes = " << maxPrefetchBytes
                          << ": " << asked << " would hold "
                          << bytesText(wanted)
                          << " bytes of gathered matrices on rank " << rank
                          << " at once, " << fits << " hold(s) at most "
                          << bytesText(held);
    // The bound limits what prefetching adds: each round's own matrices
    // are held whatever it says.
    if (exceeds(held, maxPrefetchBytes))
      remark << ", still more than the bound: without prefetching a rank "
                "holds the gathered matrices of its current round, which the "
                "bound does not limit";
  }
  return fits;
}
