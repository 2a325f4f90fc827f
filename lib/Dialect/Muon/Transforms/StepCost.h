//===- StepCost.h - A muon.step as the schedule estimate's input -*- C++ -*-===//
//
// What muon-report and muon-timeline hand plan::estimateSchedule for a
// step with owners (the cost model it runs on and one input per
// parameter), and the prefetch depth muon-expand-step can afford.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPCOST_H
#define MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPCOST_H

#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/CostModelOptions.h"
#include "muon/Plan/Schedule.h"

#include <memory>

namespace muon {
namespace optim {

/// One input per parameter, with the step's owners and parameter names.
std::vector<plan::ParamCostInput> costInputs(StepOp step,
                                             const StepFacts &facts);

/// The schedule the compiled code runs: rounds or one at a time.
plan::ScheduleKind scheduleOf(StepOp step);

/// What lets each parameter share a batched Newton-Schulz call
/// (plan::NsStackKey): the shape and element type of the one matrix its
/// owner orthogonalises; none for expert stacks and parameters split into
/// several blocks per owner.
std::vector<plan::NsStackKey> nsStackKeys(const StepFacts &facts);

/// The estimator of `step`'s schedules on the cost model of `model`
/// (costModelFor), its rounds stacked as muon-expand-step{ns-stack-bytes =
/// nsStackBytes} makes them (0: no stacks): what muon-report and
/// muon-timeline estimate.
std::unique_ptr<plan::ScheduleEstimator>
estimatorOf(StepOp step, const StepFacts &facts, int64_t nsStackBytes,
            const CostModelOptions &model = {});

/// The order muon-expand-step updates the parameters in (plan::scheduleRounds
/// with each owner's Newton-Schulz FLOPs as the cost), with an owner's
/// whole matrices of one shape and element type stacked up to
/// `nsStackBytes` (4 bytes per element; 0: no stacking).
std::vector<std::vector<size_t>>
roundsOf(StepOp step, const StepFacts &facts, int64_t nsStackBytes = 0);

/// The release groups muon-expand-step runs each of `rounds` (roundsOf
/// with `nsStackBytes`) in with `prefetch` rounds ahead and `batch`ed
/// collectives on the cost model of `model`: plan::releaseGroups's
/// candidates (the same cost as roundsOf; `steps`: each parameter's
/// plan::planSteps with the step's owners), kept where the schedule
/// estimate says they make the step shorter
/// (ScheduleEstimator::releaseGroups), else one group per round.
plan::ReleaseGroups
releasesOf(StepOp step, const StepFacts &facts,
           const std::vector<std::vector<size_t>> &rounds,
           const std::vector<std::vector<plan::CommStep>> &steps,
           int64_t nsStackBytes, int64_t prefetch, bool batch,
           const CostModelOptions &model);

/// Whether a prefetch_count of `k` over `rounds` rounds reaches past the
/// last round: k keeps k + 1 rounds in flight, so from k = rounds - 1 on
/// all of them; the report and the prefetch remark name a larger count
/// (other than the default 1) as "every round in flight".
inline bool prefetchPastLastRound(int64_t k, int64_t rounds) {
  return k > 1 && k >= rounds;
}

/// The step's prefetch_count, lowered until the gathered matrices (f32)
/// one rank holds at once fit `maxPrefetchBytes` (0: no bound), over the
/// rounds roundsOf makes with `nsStackBytes`; a remark at the step says
/// when it was lowered.
int64_t boundedPrefetch(StepOp step, const StepFacts &facts,
                        int64_t maxPrefetchBytes, int64_t nsStackBytes = 0);

} // namespace optim
} // namespace muon

#endif // MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPCOST_H
