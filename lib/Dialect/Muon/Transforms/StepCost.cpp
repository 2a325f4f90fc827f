//===- StepCost.cpp - A muon.step as the schedule estimate's input --------===//

#include "StepCost.h"

using namespace mlir;
using namespace ::muon::optim;
namespace plan = ::muon::plan;

plan::CostModel muon::optim::costModelFor(StepOp step) {
  plan::CostModel model;
  if (!step.getNsElementType().isBF16())
    model.nsFlopRate = 67e12;
  return model;
}

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
