//===- StepSpec.cpp - What muon-run needs to know about a step ------------===//

#include "StepSpec.h"

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace muon;
using namespace muon::run;
using ::muon::optim::StepOp;

FailureOr<StepSpec> run::describeStep(ModuleOp module, StringRef entry) {
  func::FuncOp fn;
  StepOp step;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (!entry.empty() && f.getSymName() != entry)
      continue;
    SmallVector<StepOp> steps(f.getOps<StepOp>());
    if (steps.empty())
      continue;
    if (fn)
      return f.emitError("several functions hold a muon.step; choose one "
                         "with --entry");
    if (steps.size() > 1)
      return steps[1].emitError("muon-run runs one muon.step per entry "
                                "function; this is the second");
    fn = f;
    step = steps[0];
  }
  if (!fn)
    return module.emitError(entry.empty()
                                ? "no function holds a muon.step"
                                : "no function @" + entry.str() +
                                      " holding a muon.step");

  FailureOr<optim::StepFacts> facts = optim::analyzeStep(step);
  if (failed(facts))
    return failure();
  StepSpec spec;
  spec.entry = fn.getSymName().str();
  spec.mesh = facts->mesh;
  int64_t n = static_cast<int64_t>(facts->params.size());
  for (int64_t i = 0; i < n; ++i) {
    const optim::ParamFacts &pf = facts->params[i];
    std::string name;
    if (auto info = step.getParamInfoOf(i))
      name = info.getName().str();
    if (name.empty())
      name = "param" + std::to_string(i);
    spec.params.push_back({name, pf.shape, pf.layout, pf.plan});
  }

  // Arguments: every step operand must be an argument of the entry, and
  // every argument a step operand (the runner generates them all).
  auto operandRole = [&](Value v, TensorSpec &t) -> bool {
    for (int64_t i = 0; i < n; ++i) {
      Role role;
      if (step.getParams()[i] == v)
        role = Role::Param;
      else if (step.getMomenta()[i] == v)
        role = Role::Momentum;
      else if (step.getGrads()[i] == v)
        role = Role::Grad;
      else
        continue;
      t.role = role;
      t.param = i;
      auto dt = cast<dist::DistTensorType>(v.getType());
      t.layout = *dist::toLayout(dt.getLayout(), facts->meshOp, step,
                                 [&] { return step.emitError(); });
      return true;
    }
    return false;
  };
  for (BlockArgument arg : fn.getArguments()) {
    TensorSpec t;
    if (!operandRole(arg, t))
      return fn.emitError("argument #")
             << arg.getArgNumber()
             << " is not a params/grads/momenta operand of the muon.step; "
                "muon-run generates every argument, so the entry may take "
                "only those";
    spec.args.push_back(t);
  }
  for (int64_t i = 0; i < n; ++i)
    for (Value v : {step.getParams()[i], step.getGrads()[i],
                    step.getMomenta()[i]})
      if (!isa<BlockArgument>(v) ||
          cast<BlockArgument>(v).getOwner()->getParentOp() != fn)
        return step.emitError("operand of parameter '")
               << spec.params[i].name
               << "' is not an argument of the entry function";

  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  for (Value v : ret.getOperands()) {
    auto r = dyn_cast<OpResult>(v);
    if (!r || r.getOwner() != step.getOperation())
      return ret.emitError("muon-run expects the entry to return results of "
                           "the muon.step only");
    TensorSpec t;
    int64_t k = r.getResultNumber();
    t.role = k < n ? Role::Param : Role::Momentum;
    t.param = k % n;
    t.layout = spec.params[t.param].layout;
    spec.results.push_back(t);
  }

  Hyper &h = spec.hyper;
  h.lr = step.getLr().convertToDouble();
  h.momentum = step.getMomentum().convertToDouble();
  h.eps = step.getEps().convertToDouble();
  h.weightDecay = step.getWeightDecay().convertToDouble();
  h.nesterov = step.getNesterov();
  h.sumForm = step.getMomentumForm() == optim::MomentumForm::Sum;
  h.matchRmsAdamW = step.getLrAdjust() == optim::LrAdjust::MatchRmsAdamW;
  h.nsSteps = step.getNsSteps();
  for (int64_t i = 0; i < h.nsSteps; ++i)
    for (double c : step.getCoeffsOf(i))
      h.coeffs.push_back(c);
  if (!step.getNsElementType().isF32())
    return step.emitError("muon-run checks fp32 steps; ns_dtype must be f32");
  return spec;
}
