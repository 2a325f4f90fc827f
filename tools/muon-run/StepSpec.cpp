//===- StepSpec.cpp - What muon-run needs to know about a step ------------===//

#include "StepSpec.h"

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"

#include "muon/Runtime/muon_runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace muon;
using namespace muon::run;
using ::muon::optim::StepOp;

/// Why an argument with two roles is refused.
static constexpr const char *kOneValuePerArgument =
    "; muon-run generates one value per argument, so give each role an "
    "argument of its own";

FailureOr<StepSpec> run::describeStep(ModuleOp module, const Options &o) {
  StringRef entry = o.entry;
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
             << " is not a params/grads/momenta (or lr/weight_decay) operand "
                "of the muon.step; muon-run generates every argument, so the "
                "entry may take only those";
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
  // lr and weight_decay: the step's constants, or for a step that reads
  // them as operands (entry arguments) the values given on the command line.
  auto hyper = [&](const char *name, const char *flag, Value operand,
                   std::optional<double> constant,
                   std::optional<double> given) -> FailureOr<double> {
    if (operand) {
      if (!isa<BlockArgument>(operand) ||
          cast<BlockArgument>(operand).getOwner()->getParentOp() != fn)
        return step.emitError("muon-run feeds ")
               << name << " as an entry argument; this step's " << name
               << " operand is computed inside the function";
      if (!given)
        return step.emitError("the step reads ")
               << name << " from argument #"
               << cast<BlockArgument>(operand).getArgNumber()
               << "; give its value with " << flag;
      return *given;
    }
    if (given)
      return step.emitError(flag)
             << " is for a step that reads " << name
             << " as an operand; this step has the constant " << name
             << " = " << constant.value_or(0.0);
    return constant.value_or(0.0);
  };
  // One argument as both lr and weight_decay is refused here, before the
  // flags for them are asked for (the role table says the same later).
  if (auto shared = dyn_cast_or_null<BlockArgument>(step.getLrValue());
      shared && shared == step.getWeightDecayValue() &&
      shared.getOwner()->getParentOp() == fn)
    return fn.emitError("argument #")
           << shared.getArgNumber() << " is both the lr and the weight_decay"
           << kOneValuePerArgument;
  std::optional<double> lrConst, wdConst;
  if (std::optional<APFloat> v = step.getLr())
    lrConst = v->convertToDouble();
  if (std::optional<APFloat> v = step.getWeightDecay())
    wdConst = v->convertToDouble();
  FailureOr<double> lr = hyper("lr", "--lr", step.getLrValue(), lrConst, o.lr);
  if (failed(lr))
    return failure();
  FailureOr<double> wd = hyper("weight_decay", "--weight-decay",
                               step.getWeightDecayValue(), wdConst,
                               o.weightDecay);
  if (failed(wd))
    return failure();
  h.lr = *lr;
  h.momentum = step.getMomentum().convertToDouble();
  h.eps = step.getEps().convertToDouble();
  h.weightDecay = *wd;
  h.nesterov = step.getNesterov();
  h.sumForm = step.getMomentumForm() == optim::MomentumForm::Sum;
  switch (step.getLrAdjust()) {
  case optim::LrAdjust::Original:
    h.lrScale = LrScale::Original;
    break;
  case optim::LrAdjust::MatchRmsAdamW:
    h.lrScale = LrScale::MatchRmsAdamW;
    break;
  case optim::LrAdjust::SpectralUnclamped:
    h.lrScale = LrScale::SpectralUnclamped;
    break;
  }
  h.nsSteps = step.getNsSteps();
  for (int64_t i = 0; i < h.nsSteps; ++i)
    for (double c : step.getCoeffsOf(i))
      h.coeffs.push_back(c);
  // ns_dtype is f32 or bf16 (the op's verifier); both run on every target.
  return spec;
}

namespace {
/// Reads the compiler's role table of the entry (muon_runtime.h, "Entry
/// points"): one TensorSpec per argument / result.
class RoleTableReader {
public:
  RoleTableReader(Operation *at, ArrayRef<int64_t> table, const StepSpec &spec)
      : at(at), table(table), spec(spec) {}

  LogicalResult read(std::vector<TensorSpec> &args,
                     std::vector<TensorSpec> &results) {
    if (table.size() < 3 || table[0] != MUON_RT_ROLES_VERSION)
      return at->emitError("role table of @")
             << spec.entry << " has an unknown format";
    int64_t numArgs = table[1], numResults = table[2];
    pos = 3;
    for (int64_t i = 0; i < numArgs; ++i)
      if (failed(entry("argument", i, args)))
        return failure();
    for (int64_t i = 0; i < numResults; ++i)
      if (failed(entry("result", i, results)))
        return failure();
    return success();
  }

private:
  static bool isScalarRole(int64_t role) {
    return role == MUON_RT_ROLE_LR || role == MUON_RT_ROLE_WEIGHT_DECAY;
  }

  std::string describe(int64_t role, int64_t param) const {
    if (role == MUON_RT_ROLE_LR)
      return "lr";
    if (role == MUON_RT_ROLE_WEIGHT_DECAY)
      return "weight_decay";
    const char *what = role == MUON_RT_ROLE_PARAM  ? "param"
                       : role == MUON_RT_ROLE_GRAD ? "grad"
                                                   : "momentum";
    return std::string(what) + " of '" + spec.params[param].name + "'";
  }

  LogicalResult entry(const char *what, int64_t index,
                      std::vector<TensorSpec> &out) {
    if (pos >= table.size())
      return at->emitError("role table of @") << spec.entry << " is short";
    int64_t k = table[pos++];
    if (k < 0 || pos + 3 * static_cast<size_t>(k) > table.size())
      return at->emitError("role table of @") << spec.entry << " is short";
    auto triple = [&](int64_t j) { return table.slice(pos + 3 * j, 3); };
    for (int64_t j = 0; j < k; ++j) {
      ArrayRef<int64_t> t = triple(j);
      bool tensor = t[0] >= MUON_RT_ROLE_PARAM &&
                    t[0] <= MUON_RT_ROLE_MOMENTUM && t[2] >= 0 &&
                    t[2] < static_cast<int64_t>(spec.params.size());
      bool scalar = isScalarRole(t[0]) && t[2] == -1;
      if (t[1] != 0 || !(tensor || scalar))
        return at->emitError() << what << " #" << index
                               << " has a malformed role in the table of @"
                               << spec.entry;
    }
    if (k == 0)
      return at->emitError() << what << " #" << index
                             << " has no role in the muon.step";
    if (k > 1)
      return at->emitError()
             << what << " #" << index << " is both the "
             << describe(triple(0)[0], triple(0)[2]) << " and the "
             << describe(triple(1)[0], triple(1)[2]) << kOneValuePerArgument;
    TensorSpec t;
    int64_t role = triple(0)[0];
    t.param = triple(0)[2];
    t.role = static_cast<Role>(role);
    if (!t.isScalar()) {
      const ParamSpec &p = spec.params[t.param];
      t.layout = t.role == Role::Grad ? p.gradLayout : p.layout;
    }
    out.push_back(t);
    pos += 3 * k;
    return success();
  }

  Operation *at;
  ArrayRef<int64_t> table;
  const StepSpec &spec;
  size_t pos = 0;
};
} // namespace

LogicalResult run::readRoles(ModuleOp lowered, StepSpec &spec) {
  std::string name = "__muon_roles_" + spec.entry;
  auto global = lowered.lookupSymbol<LLVM::GlobalOp>(name);
  auto values = global ? dyn_cast_or_null<DenseIntElementsAttr>(
                             global.getValueOrNull())
                       : DenseIntElementsAttr();
  if (!values)
    return lowered.emitError("the lowered module publishes no role table @")
           << name << ": the entry was not produced by muon-expand-step";
  SmallVector<int64_t> table(values.getValues<int64_t>());
  spec.args.clear();
  spec.results.clear();
  if (failed(RoleTableReader(global, table, spec)
                 .read(spec.args, spec.results)))
    return failure();
  // The entry after lowering takes the arguments, then one out-buffer per
  // result: the table must describe exactly those.
  auto entry = lowered.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_" +
                                                      spec.entry);
  size_t expected = spec.args.size() + spec.results.size();
  if (!entry || entry.getNumArguments() != expected)
    return global.emitError("role table of @")
           << spec.entry << " describes " << spec.args.size()
           << " arguments and " << spec.results.size()
           << " results, which does not match the entry's C interface";
  return success();
}
