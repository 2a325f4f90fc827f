//===- StepRoles.cpp - Which entry argument is which step operand ---------===//

#include "StepRoles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace ::muon::optim;

void muon::optim::recordRoles(StepOp step, int64_t stepIndex) {
  auto fn = step->getParentOfType<func::FuncOp>();
  if (!fn)
    return;
  MLIRContext *ctx = step.getContext();
  Builder b(ctx);
  int64_t n = step.getNumParams();
  auto role = [&](StringRef what, int64_t param) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("role", b.getStringAttr(what)),
         b.getNamedAttr("param", b.getI64IntegerAttr(param)),
         b.getNamedAttr("name", step.getParamInfoOf(param).getName()),
         b.getNamedAttr("step", b.getI64IntegerAttr(stepIndex))});
  };
  auto extend = [&](StringRef attrName, size_t count,
                    function_ref<void(size_t, SmallVector<Attribute> &)> add) {
    SmallVector<Attribute> all;
    auto old = fn->getAttrOfType<ArrayAttr>(attrName);
    for (size_t i = 0; i < count; ++i) {
      SmallVector<Attribute> roles;
      if (old && i < old.size())
        llvm::append_range(roles, cast<ArrayAttr>(old[i]));
      add(i, roles);
      all.push_back(b.getArrayAttr(roles));
    }
    fn->setAttr(attrName, b.getArrayAttr(all));
  };
  // What each value is to the step, in the order the roles are listed
  // (parameter by parameter: param, grad, momentum), gathered in one pass
  // over the operands rather than once per argument.
  DenseMap<Value, SmallVector<std::pair<StringRef, int64_t>, 1>> uses;
  OperandRange params = step.getParams(), grads = step.getGrads(),
               momenta = step.getMomenta();
  for (int64_t i = 0; i < n; ++i) {
    uses[params[i]].push_back({"param", i});
    uses[grads[i]].push_back({"grad", i});
    uses[momenta[i]].push_back({"momentum", i});
  }
  extend("muon_arg_roles", fn.getNumArguments(),
         [&](size_t a, SmallVector<Attribute> &roles) {
           Value arg = fn.getArgument(a);
           // Hyper-parameters the step reads at run time: no parameter.
           for (auto [what, v] :
                {std::pair<StringRef, Value>{"lr", step.getLrValue()},
                 {"weight_decay", step.getWeightDecayValue()}})
             if (v && v == arg)
               roles.push_back(b.getDictionaryAttr(
                   {b.getNamedAttr("role", b.getStringAttr(what)),
                    b.getNamedAttr("param", b.getI64IntegerAttr(-1)),
                    b.getNamedAttr("step", b.getI64IntegerAttr(stepIndex))}));
           auto found = uses.find(arg);
           if (found != uses.end())
             for (auto [what, i] : found->second)
               roles.push_back(role(what, i));
         });
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return;
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (!ret)
    return;
  extend("muon_result_roles", ret.getNumOperands(),
         [&](size_t r, SmallVector<Attribute> &roles) {
           auto res = dyn_cast<OpResult>(ret.getOperand(r));
           if (!res || res.getOwner() != step.getOperation())
             return;
           int64_t k = res.getResultNumber();
           roles.push_back(role(k < n ? "param" : "momentum", k % n));
         });
}

