//===- MuonToLinalg.cpp - Momentum and update as elementwise linalg -------===//
//
// Momentum and the parameter update are elementwise: one linalg.generic
// each, which bufferizes in place and lowers to plain loops on the CPU (and
// to a GPU kernel on a GPU target).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/MuonToLinalg/MuonToLinalg.h"
#include "muon/Conversion/ConversionConfig.h"
#include "muon/Conversion/Passes.h"
#include "muon/Conversion/RuntimeCalls.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace muon {
#define GEN_PASS_DEF_CONVERTMUONTOLINALG
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;

namespace {

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
        linalg::YieldOp::create(nb, nl,
                                body(nb, nl, args.take_front(ins.size())));
      });
  return SmallVector<Value>(generic->getResults());
}

Value constF32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(v)));
}

/// The f32 factor `c` as a constant made at `b`'s insertion point, outside
/// the elementwise body (the body then captures it, so kernels that differ
/// only in their factors share code: muon-outline-elementwise passes
/// captured values as arguments), or null where `c` rounds to 1.0f and no
/// product is needed.
Value factor(OpBuilder &b, Location loc, double c) {
  if (static_cast<float>(c) == 1.0f)
    return {};
  return constF32(b, loc, c);
}

/// f * x, or x itself for a null factor (1.0f): x * 1.0f is x bit for bit,
/// so the step needs no folding pass over the whole module to drop it.
Value scaled(OpBuilder &b, Location loc, Value f, Value x) {
  return f ? arith::MulFOp::create(b, loc, f, x).getResult() : x;
}

/// lerp(x, y, w) = x + w * (y - x), as torch.lerp (w null: 1.0f).
Value lerp(OpBuilder &b, Location loc, Value x, Value y, Value w) {
  Value d = arith::SubFOp::create(b, loc, y, x);
  return arith::AddFOp::create(b, loc, x, scaled(b, loc, w, d));
}

struct MomentumUpdateToLinalg : OpConversionPattern<MomentumUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MomentumUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    double beta = op.getBeta().convertToDouble();
    bool sum = op.getSum(), nesterov = op.getNesterov();
    Location loc = op.getLoc();
    // Only the factors the body uses: beta in the sum form and in
    // Nesterov's second lerp, 1 - beta in the first lerp.
    Value bt = sum || nesterov ? factor(rewriter, loc, beta) : Value();
    Value oneMinusBeta = sum ? Value() : factor(rewriter, loc, 1.0 - beta);
    SmallVector<Value> r = elementwise(
        rewriter, loc, {adaptor.getMomentum(), adaptor.getGrad()}, 2,
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          Value m = a[0], g = a[1];
          // sum: M' = beta*M + G;  lerp: M' = lerp(M, G, 1 - beta).
          Value newM =
              sum ? arith::AddFOp::create(nb, l, scaled(nb, l, bt, m), g)
                        .getResult()
                  : lerp(nb, l, m, g, oneMinusBeta);
          Value u = newM;
          // Nesterov, sum: U = G + beta*M';  lerp: U = lerp(G, M', beta).
          if (nesterov)
            u = sum ? arith::AddFOp::create(nb, l, g, scaled(nb, l, bt, newM))
                          .getResult()
                    : lerp(nb, l, g, newM, bt);
          return {newM, u};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ApplyUpdateToLinalg : OpConversionPattern<ApplyUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ApplyUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    double scale = op.getScale().convertToDouble();
    // lr and 1 - lr*weight_decay are computed in f64 and rounded to f32
    // once: folded here when both are constants, else by code that runs
    // before the elementwise loop.
    Value lr, decay; // decay null: 1.0f, no product
    if (op.getLrAttr() && op.getWeightDecayAttr()) {
      double lrC = op.getLrAttr().getValueAsDouble();
      lr = constF32(rewriter, loc, lrC);
      decay = factor(rewriter, loc,
                     1.0 - lrC * op.getWeightDecayAttr().getValueAsDouble());
    } else {
      auto f64 = [&](Value v, FloatAttr a) {
        return v ? v
                 : arith::ConstantOp::create(rewriter, loc, a).getResult();
      };
      Value lr64 = f64(adaptor.getLrValue(), op.getLrAttr());
      Value wd64 = f64(adaptor.getWeightDecayValue(), op.getWeightDecayAttr());
      Value one = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF64FloatAttr(1.0));
      Value decay64 = arith::SubFOp::create(
          rewriter, loc, one, arith::MulFOp::create(rewriter, loc, lr64, wd64));
      Type f32 = rewriter.getF32Type();
      lr = arith::TruncFOp::create(rewriter, loc, f32, lr64);
      decay = arith::TruncFOp::create(rewriter, loc, f32, decay64);
    }
    Value scaleF = factor(rewriter, loc, scale);
    SmallVector<Value> r = elementwise(
        rewriter, loc, {adaptor.getParam(), adaptor.getUpdate()}, 1,
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          // P * (1 - lr*wd) - lr * (O * scale)
          Value p = scaled(nb, l, decay, a[0]);
          Value o = scaled(nb, l, scaleF, a[1]);
          Value step = arith::MulFOp::create(nb, l, lr, o);
          return {arith::SubFOp::create(nb, l, p, step).getResult()};
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ConvertMuonToLinalgPass
    : muon::impl::ConvertMuonToLinalgBase<ConvertMuonToLinalgPass> {
  using ConvertMuonToLinalgBase::ConvertMuonToLinalgBase;

  void runOnOperation() override {
    WalkResult checked = getOperation().walk([](Operation *op) {
      if (auto m = dyn_cast<MomentumUpdateOp>(op))
        return failed(muon::requireF32Operand(op, m.getMomentum().getType()))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      if (auto a = dyn_cast<ApplyUpdateOp>(op))
        return failed(muon::requireF32Operand(op, a.getParam().getType()))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(getContext());
    target.addIllegalOp<MomentumUpdateOp, ApplyUpdateOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    muon::populateMuonToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns),
                                      muon::conversionConfig())) ||
        (checkOutput &&
         failed(muon::verifyPassOutput(getOperation(), getArgument()))))
      signalPassFailure();
  }
};

} // namespace

void muon::populateMuonToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MomentumUpdateToLinalg, ApplyUpdateToLinalg>(
      patterns.getContext());
}
