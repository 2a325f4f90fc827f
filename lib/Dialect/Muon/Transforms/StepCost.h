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
#include "muon/Plan/Schedule.h"

#include <memory>

namespace muon {
namespace optim {

/// The machine the estimates assume: the default H100 model, with
/// Newton-Schulz at the dense rate of its element type (bf16 tensor cores,
/// or fp32 without TF32).
plan::CostModel costModelFor(StepOp step);

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

/// The estimator of `step`'s schedules on its cost model (costModelFor),
/// its rounds stacked as muon-expand-step{ns-stack-bytes = nsStackBytes}
/// makes them (0: no stacks): what muon-report and muon-timeline estimate.
std::unique_ptr<plan::ScheduleEstimator>
estimatorOf(StepOp step, const StepFacts &facts, int64_t nsStackBytes);

/// The order muon-expand-step updates the parameters in (plan::scheduleRounds
/// with each owner's Newton-Schulz FLOPs as the cost), with an owner's
/// whole matrices of one shape and element type stacked up to
/// `nsStackBytes` (4 bytes per element; 0: no stacking).
std::vector<std::vector<size_t>>
roundsOf(StepOp step, const StepFacts &facts, int64_t nsStackBytes = 0);

/// The step's prefetch_count, lowered until the gathered matrices (f32)
/// one rank holds at once fit `maxPrefetchBytes` (0: no bound), over the
/// rounds roundsOf makes with `nsStackBytes`; a remark at the step says
/// when it was lowered.
int64_t boundedPrefetch(StepOp step, const StepFacts &facts,
                        int64_t maxPrefetchBytes, int64_t nsStackBytes = 0);

} // namespace optim
} // namespace muon

#endif // MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPCOST_H
