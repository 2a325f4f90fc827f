//===- MuonToRuntime.cpp - Lower muon compute ops for the CPU -------------===//
//
// Newton-Schulz is GEMM-bound: it goes to the runtime, which runs it on
// CBLAS and counts it (the zero-redundancy proof reads those counters).
// Momentum and the parameter update are elementwise: linalg.generic, which
// bufferizes in place and lowers to plain loops.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace muon {
#define GEN_PASS_DEF_CONVERTMUONTORUNTIME
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
using muon::RuntimeCalls;
using muon::RuntimeFn;

namespace {

LogicalResult requireF32(Operation *op, Type t) {
  if (cast<RankedTensorType>(t).getElementType().isF32())
    return success();
  return op->emitOpError("operand type ")
         << t << " is not lowered to the CPU runtime: only f32 tensors are";
}

SmallVector<Value> dynamicDims(OpBuilder &b, Location loc, Value t) {
  SmallVector<Value> dims;
  auto tt = cast<RankedTensorType>(t.getType());
  for (int64_t d = 0; d < tt.getRank(); ++d)
    if (tt.isDynamicDim(d))
      dims.push_back(tensor::DimOp::create(b, loc, t, d));
  return dims;
}

/// An elementwise linalg.generic over `ins` producing `numResults` tensors
/// of the first input's type; `body` maps block arguments to yielded values.
SmallVector<Value>
elementwise(OpBuilder &b, Location loc, ValueRange ins, unsigned numResults,
            function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
                body) {
  auto type = cast<RankedTensorType>(ins[0].getType());
  SmallVector<Value> outs;
  for (unsigned i = 0; i < numResults; ++i)
    outs.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType(),
                                           dynamicDims(b, loc, ins[0])));
  SmallVector<AffineMap> maps(ins.size() + numResults,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(SmallVector<Type>(numResults, type)), ins, outs, maps,
      iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args.take_front(ins.size())));
      });
  return SmallVector<Value>(generic->getResults());
}

Value constF32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(v)));
}

/// lerp(x, y, w) = x + w * (y - x), as torch.lerp.
Value lerp(OpBuilder &b, Location loc, Value x, Value y, Value w) {
  Value d = arith::SubFOp::create(b, loc, y, x);
  return arith::AddFOp::create(b, loc, x, arith::MulFOp::create(b, loc, w, d));
}

LogicalResult lower(MomentumUpdateOp op) {
  if (failed(requireF32(op, op.getMomentum().getType())))
    return failure();
  OpBuilder b(op);
  double beta = op.getBeta().convertToDouble();
  bool sum = op.getSum(), nesterov = op.getNesterov();
  SmallVector<Value> r = elementwise(
      b, op.getLoc(), {op.getMomentum(), op.getGrad()}, 2,
      [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
        Value m = a[0], g = a[1], bt = constF32(nb, l, beta);
        Value newM =
            sum ? arith::AddFOp::create(nb, l,
                                        arith::MulFOp::create(nb, l, bt, m), g)
                      .getResult()
                : lerp(nb, l, m, g, constF32(nb, l, 1.0 - beta));
        Value u = newM;
        if (nesterov)
          u = sum ? arith::AddFOp::create(
                        nb, l, g, arith::MulFOp::create(nb, l, bt, newM))
                        .getResult()
                  : lerp(nb, l, g, newM, bt);
        return {newM, u};
      });
  op.getNewMomentum().replaceAllUsesWith(r[0]);
  op.getUpdate().replaceAllUsesWith(r[1]);
  op.erase();
  return success();
}

LogicalResult lower(ApplyUpdateOp op) {
  if (failed(requireF32(op, op.getParam().getType())))
    return failure();
  OpBuilder b(op);
  double lr = op.getLr().convertToDouble();
  double decay = 1.0 - lr * op.getWeightDecay().convertToDouble();
  double scale = op.getScale().convertToDouble();
  SmallVector<Value> r = elementwise(
      b, op.getLoc(), {op.getParam(), op.getUpdate()}, 1,
      [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
        // P * (1 - lr*wd) - lr * (O * scale)
        Value p = arith::MulFOp::create(nb, l, a[0], constF32(nb, l, decay));
        Value o = arith::MulFOp::create(nb, l, a[1], constF32(nb, l, scale));
        Value step = arith::MulFOp::create(nb, l, constF32(nb, l, lr), o);
        return {arith::SubFOp::create(nb, l, p, step).getResult()};
      });
  op.getResult().replaceAllUsesWith(r[0]);
  op.erase();
  return success();
}

LogicalResult lower(NewtonSchulzOp op, RuntimeCalls &rt) {
  if (failed(requireF32(op, op.getInput().getType())))
    return failure();
  if (!op.getComputeType().isF32())
    return op.emitOpError("Newton-Schulz in ")
           << op.getComputeType()
           << " is not lowered to the CPU runtime yet: use ns_dtype = f32";
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getInput().getType());
  // NS works in place on a private copy: the operand may still be live.
  auto [buf, unranked] =
      RuntimeCalls::allocate(b, loc, type, dynamicDims(b, loc, op.getInput()));
  Value src = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      op.getInput(), /*read_only=*/true);
  memref::CopyOp::create(b, loc, src, buf);
  Value coeffs = rt.f64Table(b, loc, op.getCoeffs());
  Value eps = arith::ConstantOp::create(b, loc, op.getEpsAttr());
  rt.call(b, loc, RuntimeFn::muon_rt_newton_schulz, {unranked, RuntimeCalls::i64(b, loc, op.getSteps()), coeffs, eps});
  op.getResult().replaceAllUsesWith(RuntimeCalls::tensorOf(b, loc, buf, type));
  op.erase();
  return success();
}

struct ConvertMuonToRuntimePass
    : muon::impl::ConvertMuonToRuntimeBase<ConvertMuonToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StepOp left;
    module.walk([&](StepOp s) {
      left = s;
      return WalkResult::interrupt();
    });
    if (left) {
      left.emitOpError("must be expanded before convert-muon-to-runtime: run "
                       "muon-expand-step first");
      return signalPassFailure();
    }
    RuntimeCalls rt(module);
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<MomentumUpdateOp, ApplyUpdateOp, NewtonSchulzOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult r = success();
      if (auto m = dyn_cast<MomentumUpdateOp>(op))
        r = lower(m);
      else if (auto a = dyn_cast<ApplyUpdateOp>(op))
        r = lower(a);
      else
        r = lower(cast<NewtonSchulzOp>(op), rt);
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
