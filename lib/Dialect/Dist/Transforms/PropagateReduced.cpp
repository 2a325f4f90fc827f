//===- PropagateReduced.cpp - Write `reduced` into rebuilt layouts --------===//
//
// The local view drops layouts; dist.from_local declares them again. Where
// it declares `replicate` on an axis the value is reduced over (the
// analysis in ReducedAnalysis.h), the obligation to sum the value's
// gradient there would be lost: the result becomes `reduced` instead, as
// DTensor restores its Reduced annotation after an op.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace muon {
namespace dist {
#define GEN_PASS_DEF_DISTPROPAGATEREDUCED
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace muon

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {
/// `type` with `reduced` on `axes`.
DistTensorType withReduced(DistTensorType type, ArrayRef<int> axes) {
  LayoutAttr l = type.getLayout();
  SmallVector<PlacementAttr> placements(l.getPlacements());
  for (int a : axes)
    placements[a] = PlacementAttr::getReduced(type.getContext());
  LayoutAttr layout = LayoutAttr::get(type.getContext(), l.getMesh(),
                                      placements, l.getOrder(), l.getStorage());
  return DistTensorType::get(type.getContext(), type.getShape(),
                             type.getElementType(), layout);
}

struct DistPropagateReducedPass
    : public ::muon::dist::impl::DistPropagateReducedBase<
          DistPropagateReducedPass> {
  using DistPropagateReducedBase::DistPropagateReducedBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyDistTypesIn(module)))
      return signalPassFailure();
    ReducedAnalysis analysis(module, rule);
    SmallVector<std::pair<FromLocalOp, SmallVector<int>>> upgrades;
    module.walk([&](FromLocalOp op) {
      SmallVector<int> axes;
      for (const LayoutFinding &f : analysis.check(op))
        if (f.kind == LayoutFinding::Kind::DropsReduction)
          axes.push_back(f.axis);
      if (!axes.empty())
        upgrades.push_back({op, axes});
    });

    llvm::SetVector<func::FuncOp> resigned;
    for (auto &[op, axes] : upgrades) {
      DistTensorType declared = op.getResult().getType();
      op.getResult().setType(withReduced(declared, axes));
      for (OpOperand &use :
           llvm::make_early_inc_range(op.getResult().getUses())) {
        Operation *user = use.getOwner();
        // These take any layout of the tensor.
        if (isa<ToLocalOp, RedistributeOp>(user))
          continue;
        // A function nothing in the module calls returns the new type.
        if (isa<func::ReturnOp>(user)) {
          auto fn = user->getParentOfType<func::FuncOp>();
          if (fn && SymbolTable::symbolKnownUseEmpty(fn, module)) {
            resigned.insert(fn);
            continue;
          }
        }
        // Everything else keeps the declared layout, reached explicitly.
        OpBuilder b(user);
        use.set(
            RedistributeOp::create(b, op.getLoc(), declared, op.getResult()));
      }
    }
    for (func::FuncOp fn : resigned) {
      SmallVector<func::ReturnOp> returns;
      fn.walk([&](func::ReturnOp ret) {
        if (ret->getParentOp() == fn)
          returns.push_back(ret);
      });
      // A result takes the new type only where every return agrees on it;
      // elsewhere it keeps the declared one, reached explicitly.
      SmallVector<Type> results(fn.getResultTypes());
      for (size_t i = 0; i < results.size(); ++i) {
        Type first = returns.front().getOperand(i).getType();
        bool agree = llvm::all_of(returns, [&](func::ReturnOp ret) {
          return ret.getOperand(i).getType() == first;
        });
        if (agree) {
          results[i] = first;
          continue;
        }
        for (func::ReturnOp ret : returns) {
          Value v = ret.getOperand(i);
          if (v.getType() == results[i])
            continue;
          OpBuilder b(ret);
          ret.setOperand(i, RedistributeOp::create(
                                b, v.getLoc(),
                                cast<DistTensorType>(results[i]), v));
        }
      }
      fn.setType(
          FunctionType::get(fn.getContext(), fn.getArgumentTypes(), results));
    }
  }
};
} // namespace
