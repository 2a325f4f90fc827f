//===- StepSpec.cpp - What muon-run needs to know about a step ------------===//

#include "StepSpec.h"

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/SmallBitVector.h"

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
    spec.params.push_back({name, pf.shape, pf.layout, pf.gradLayout, pf.plan});
  }

  // The entry contract muon-run relies on, checked with locations here;
  // which argument is which role is read from what the lowering records
  // (readRoles), not re-derived.
  if (!fn.isPublic())
    return fn.emitError("entry @")
           << fn.getSymName()
           << " is private; muon-run calls public functions (through their "
              "C interface _mlir_ciface_<name>)";
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("muon-run expects the entry to be one block ending "
                        "in func.return (structured control flow only)");
  for (BlockArgument arg : fn.getArguments())
    if (!llvm::is_contained(step->getOperands(), Value(arg)))
      return fn.emitError("argument #")
             << arg.getArgNumber()
             << " is not a params/grads/momenta operand of the muon.step; "
                "muon-run generates every argument, so the entry may take "
                "only those";
  for (int64_t i = 0; i < n; ++i)
    for (Value v : {step.getParams()[i], step.getGrads()[i],
                    step.getMomenta()[i]})
      if (!isa<BlockArgument>(v) ||
          cast<BlockArgument>(v).getOwner()->getParentOp() != fn)
        return step.emitError("operand of parameter '")
               << spec.params[i].name
               << "' is not an argument of the entry function";

  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (!ret)
    return fn.emitError("muon-run expects the entry to end in func.return");
  llvm::SmallBitVector returned(2 * n);
  for (Value v : ret.getOperands()) {
    auto r = dyn_cast<OpResult>(v);
    if (!r || r.getOwner() != step.getOperation())
      return ret.emitError("muon-run expects the entry to return results of "
                           "the muon.step only");
    returned.set(r.getResultNumber());
  }
  for (int64_t k = 0; k < 2 * n; ++k)
    if (!returned.test(k))
      return ret.emitError("muon-run checks every result: the entry must "
                           "return all ")
             << 2 * n << " results of the muon.step, but the new "
             << (k < n ? "parameter" : "momentum") << " of '"
             << spec.params[k % n].name << "' (result #" << k
             << ") is not returned";

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

/// One recorded role: {role = "param"|"grad"|"momentum", param = i, ...}.
static LogicalResult roleOf(Operation *entry, Attribute a, const char *what,
                            size_t index, const StepSpec &spec,
                            TensorSpec &t) {
  auto list = dyn_cast<ArrayAttr>(a);
  auto describeRole = [&](DictionaryAttr d) {
    std::string s = d.getAs<StringAttr>("role").getValue().str();
    int64_t p = d.getAs<IntegerAttr>("param").getInt();
    return s + " of '" + spec.params[p].name + "'";
  };
  if (!list || list.empty())
    return entry->emitError() << what << " #" << index
                              << " has no recorded role";
  if (list.size() > 1)
    return entry->emitError()
           << what << " #" << index << " is both the "
           << describeRole(cast<DictionaryAttr>(list[0])) << " and the "
           << describeRole(cast<DictionaryAttr>(list[1]))
           << "; muon-run generates one tensor per argument, so give each "
              "role an argument of its own";
  auto d = dyn_cast<DictionaryAttr>(list[0]);
  auto role = d ? d.getAs<StringAttr>("role") : StringAttr();
  auto param = d ? d.getAs<IntegerAttr>("param") : IntegerAttr();
  if (!role || !param || param.getInt() < 0 ||
      param.getInt() >= static_cast<int64_t>(spec.params.size()))
    return entry->emitError() << what << " #" << index
                              << " has a malformed role " << list[0];
  t.param = param.getInt();
  if (role.getValue() == "param")
    t.role = Role::Param;
  else if (role.getValue() == "grad")
    t.role = Role::Grad;
  else if (role.getValue() == "momentum")
    t.role = Role::Momentum;
  else
    return entry->emitError() << what << " #" << index << " has unknown role "
                              << role;
  const ParamSpec &p = spec.params[t.param];
  t.layout = t.role == Role::Grad ? p.gradLayout : p.layout;
  return success();
}

LogicalResult run::readRoles(ModuleOp lowered, StepSpec &spec) {
  Operation *entry = lowered.lookupSymbol(spec.entry);
  if (!entry)
    return lowered.emitError("the lowered module has no @") << spec.entry;
  auto args = entry->getAttrOfType<ArrayAttr>("muon.arg_roles");
  auto results = entry->getAttrOfType<ArrayAttr>("muon.result_roles");
  if (!args || !results)
    return entry->emitError("@")
           << spec.entry
           << " carries no muon.arg_roles / muon.result_roles: it was not "
              "produced by muon-expand-step";
  spec.args.clear();
  spec.results.clear();
  for (auto [i, a] : llvm::enumerate(args)) {
    TensorSpec t;
    if (failed(roleOf(entry, a, "argument", i, spec, t)))
      return failure();
    spec.args.push_back(t);
  }
  for (auto [i, a] : llvm::enumerate(results)) {
    TensorSpec t;
    if (failed(roleOf(entry, a, "result", i, spec, t)))
      return failure();
    spec.results.push_back(t);
  }
  return success();
}
