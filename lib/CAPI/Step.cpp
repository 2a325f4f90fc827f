//===- Step.cpp - C API: querying muon.step ops ---------------------------===//

#include "muon-c/Step.h"

#include "NullOperation.h"

#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Dialect/Muon/Transforms/StepReport.h"
#include "muon/Plan/ParamPlan.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <utility>
#include <vector>

using namespace mlir;
using ::muon::optim::StepOp;
namespace optim = ::muon::optim;
namespace plan = ::muon::plan;

intptr_t muonModuleNumSteps(MlirOperation module) {
  if (muon::capi::isNullOperation(module, "muonModuleNumSteps"))
    return -1;
  intptr_t n = 0;
  unwrap(module)->walk([&](StepOp) { ++n; });
  return n;
}

MlirOperation muonModuleGetStep(MlirOperation module, intptr_t index) {
  Operation *found = nullptr;
  if (index < 0 || muon::capi::isNullOperation(module, "muonModuleGetStep"))
    return wrap(found);
  intptr_t i = 0;
  unwrap(module)->walk([&](StepOp step) {
    if (i++ != index)
      return WalkResult::advance();
    found = step.getOperation();
    return WalkResult::interrupt();
  });
  return wrap(found);
}

/// The report of every step of `moduleOp` as text or as a JSON array
/// (owners assigned in place where missing), to `callback`; `entry` names
/// the C function in diagnostics.
static MlirLogicalResult reportSteps(MlirOperation moduleOp,
                                     MuonStepReportOptions options,
                                     const char *entry,
                                     MlirStringCallback callback,
                                     void *userData) {
  bool json = options.json;
  if (muon::capi::isNullOperation(moduleOp, entry))
    return mlirLogicalResultFailure();
  Operation *op = unwrap(moduleOp);
  auto module = dyn_cast<ModuleOp>(op);
  if (!module) {
    op->emitError(entry) << ": expected a 'builtin.module', got '"
                         << op->getName() << "'";
    return mlirLogicalResultFailure();
  }
  if (options.nsStackBytes < 0) {
    op->emitError(entry) << ": nsStackBytes = " << options.nsStackBytes
                         << " must be 0 (one matrix per call) or a byte "
                            "count";
    return mlirLogicalResultFailure();
  }
  // muon-assign-owners (re)computes the owners of every step whose strategy
  // is not explicit; run it only when a step has none, and give the steps
  // that had owners their own back.
  bool needOwners = false;
  std::vector<std::pair<StepOp, std::vector<int64_t>>> given;
  module.walk([&](StepOp step) {
    if (std::optional<ArrayRef<int64_t>> owners = step.getOwners())
      given.emplace_back(step, std::vector<int64_t>(owners->begin(),
                                                    owners->end()));
    else
      needOwners = true;
  });
  if (needOwners) {
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    pm.addPass(optim::createMuonAssignOwners());
    LogicalResult result = pm.run(module);
    for (auto &[step, owners] : given)
      step.setOwners(owners);
    if (failed(result))
      return mlirLogicalResultFailure();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::Array reports;
  WalkResult walked = module.walk([&](StepOp step) {
    FailureOr<optim::StepFacts> facts = optim::analyzeStep(step);
    if (failed(facts))
      return WalkResult::interrupt();
    optim::StepReport report = optim::buildStepReport(
        step, *facts, options.schedules, options.nsStackBytes);
    if (json)
      reports.push_back(optim::stepReportJson(report));
    else
      optim::printStepReport(report, os);
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return mlirLogicalResultFailure();
  if (json)
    optim::printStepReportsJson(std::move(reports), os);
  if (!text.empty() && callback)
    callback(wrap(llvm::StringRef(text)), userData);
  return mlirLogicalResultSuccess();
}

MuonStepReportOptions muonStepReportOptionsDefault(void) {
  MuonStepReportOptions options;
  options.json = false;
  options.schedules = false;
  options.nsStackBytes = 0;
  return options;
}

MlirLogicalResult muonStepReport(MlirOperation moduleOp,
                                 MlirStringCallback callback, void *userData) {
  return reportSteps(moduleOp, muonStepReportOptionsDefault(),
                     "muonStepReport", callback, userData);
}

MlirLogicalResult muonStepReportJSON(MlirOperation moduleOp,
                                     MlirStringCallback callback,
                                     void *userData) {
  MuonStepReportOptions options = muonStepReportOptionsDefault();
  options.json = true;
  return reportSteps(moduleOp, options, "muonStepReportJSON", callback,
                     userData);
}

MlirLogicalResult muonStepReportWithOptions(MlirOperation moduleOp,
                                            MuonStepReportOptions options,
                                            MlirStringCallback callback,
                                            void *userData) {
  return reportSteps(moduleOp, options, "muonStepReportWithOptions", callback,
                     userData);
}

intptr_t muonStepNumParams(MlirOperation step) {
  if (muon::capi::isNullOperation(step, "muonStepNumParams"))
    return -1;
  auto op = dyn_cast<StepOp>(unwrap(step));
  return op ? static_cast<intptr_t>(op.getNumParams()) : -1;
}

MlirLogicalResult muonStepPlan(MlirOperation stepOp, intptr_t param,
                               MlirStringCallback callback, void *userData) {
  if (muon::capi::isNullOperation(stepOp, "muonStepPlan"))
    return mlirLogicalResultFailure();
  Operation *op = unwrap(stepOp);
  auto step = dyn_cast<StepOp>(op);
  if (!step) {
    op->emitError("muonStepPlan: expected a 'muon.step', got '")
        << op->getName() << "'";
    return mlirLogicalResultFailure();
  }
  if (param < 0 || param >= step.getNumParams()) {
    step.emitOpError("has no parameter ")
        << param << " (it has " << step.getNumParams() << ")";
    return mlirLogicalResultFailure();
  }
  // The step's facts first: a step that does not plan (a global-view
  // step) is told so, not sent to assign owners it cannot have.
  FailureOr<optim::StepFacts> facts = optim::analyzeStep(step);
  if (failed(facts))
    return mlirLogicalResultFailure();
  std::optional<ArrayRef<int64_t>> owners = step.getOwners();
  if (!owners) {
    step.emitOpError("has no owners; run muon-assign-owners (or "
                     "muonStepReport) before muonStepPlan");
    return mlirLogicalResultFailure();
  }
  if (static_cast<int64_t>(owners->size()) != step.getNumParams()) {
    step.emitOpError("has ")
        << owners->size() << " owners for " << step.getNumParams()
        << " parameters";
    return mlirLogicalResultFailure();
  }
  const optim::ParamFacts &p = facts->params[param];
  // Describe every step first: the callback sees all of the plan or none.
  std::vector<std::string> lines;
  for (const plan::CommStep &s : plan::planSteps(
           p.plan, p.layout, p.gradLayout, facts->mesh, (*owners)[param]))
    lines.push_back(plan::describe(s, facts->mesh));
  if (callback)
    for (const std::string &line : lines)
      callback(mlirStringRefCreate(line.data(), line.size()), userData);
  return mlirLogicalResultSuccess();
}
