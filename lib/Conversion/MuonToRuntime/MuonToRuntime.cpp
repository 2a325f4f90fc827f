//===- MuonToRuntime.cpp - Newton-Schulz to the target's runtime ----------===//
//
// Newton-Schulz is GEMM-bound: it goes to the runtime, which runs it on
// CBLAS and counts it (the zero-redundancy proof reads those counters).
// Which pattern lowers it is the target's choice (muon/Conversion/Target.h).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/MuonToRuntime/MuonToRuntime.h"
#include "muon/Conversion/ConversionConfig.h"
#include "muon/Conversion/Passes.h"
#include "muon/Conversion/Target.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Runtime/muon_runtime.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace muon {
#define GEN_PASS_DEF_CONVERTMUONTORUNTIME
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
using muon::RuntimeCalls;
using muon::RuntimeFn;

namespace {

/// Operand precisions of the Newton-Schulz entry points (muon_runtime.h;
/// the GPU library, muon_runtime_cuda.h, numbers them the same).
enum NsPrecision : int64_t {
  NsFp32 = MUON_RT_NS_FP32,
  NsBf16 = MUON_RT_NS_BF16
};

/// Newton-Schulz of the operand into a fresh buffer by the runtime function
/// `fn`: (x, out, steps, coeffs, eps, operand precision).
struct NewtonSchulzToRuntime : OpConversionPattern<NewtonSchulzOp> {
  NewtonSchulzToRuntime(MLIRContext *ctx, RuntimeCalls &rt, RuntimeFn fn)
      : OpConversionPattern(ctx), rt(rt), fn(fn) {}

  LogicalResult
  matchAndRewrite(NewtonSchulzOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<Value> dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dims.push_back(tensor::DimOp::create(rewriter, loc, input, d));
    // The runtime reads the operand (which may still be live) and writes a
    // fresh buffer: no copy of the operand.
    auto [buf, unranked] = RuntimeCalls::allocate(rewriter, loc, type, dims);
    Value src = bufferization::ToBufferOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        input, /*read_only=*/true);
    Value srcUnranked = memref::CastOp::create(
        rewriter, loc,
        UnrankedMemRefType::get(type.getElementType(), /*memorySpace=*/0), src);
    Value coeffs = rt.f64Table(rewriter, loc, op.getCoeffs());
    // eps at the top of the function (the nearest region isolated from
    // above), where one CSE merges the copies of every Newton-Schulz (each
    // sits in its owner's branch otherwise).
    Value eps;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      if (Operation *top =
              op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>())
        rewriter.setInsertionPointToStart(&top->getRegion(0).front());
      eps = arith::ConstantOp::create(rewriter, loc, op.getEpsAttr());
    }
    SmallVector<Value> args = {srcUnranked, unranked,
                               RuntimeCalls::i64(rewriter, loc, op.getSteps()),
                               coeffs, eps};
    args.push_back(RuntimeCalls::i64(
        rewriter, loc, op.getComputeType().isBF16() ? NsBf16 : NsFp32));
    rt.call(rewriter, loc, fn, args);
    rewriter.replaceOp(op, RuntimeCalls::tensorOf(rewriter, loc, buf, type));
    return success();
  }

  RuntimeCalls &rt;
  RuntimeFn fn;
};

} // namespace

LogicalResult muon::checkNewtonSchulzOperand(Operation *op) {
  // Both compute types the op's verifier admits (f32, bf16) are lowered on
  // every target (bf16 is emulated on the CPU: bf16 operands, fp32 sums).
  auto ns = cast<NewtonSchulzOp>(op);
  return muon::requireF32Operand(op, ns.getInput().getType());
}

namespace {

struct ConvertMuonToRuntimePass
    : muon::impl::ConvertMuonToRuntimeBase<ConvertMuonToRuntimePass> {
  using ConvertMuonToRuntimeBase::ConvertMuonToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const muon::TargetLowering &lowering = muon::getTargetLowering(target);
    WalkResult checked = module.walk([&](Operation *op) {
      if (auto s = dyn_cast<StepOp>(op)) {
        s.emitOpError("must be expanded before convert-muon-to-runtime: run "
                      "muon-expand-step first");
        return WalkResult::interrupt();
      }
      if (auto ns = dyn_cast<NewtonSchulzOp>(op))
        if (failed(lowering.checkNewtonSchulz(ns)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();

    RuntimeCalls rt(module);
    ConversionTarget legal(getContext());
    legal.addIllegalOp<NewtonSchulzOp>();
    legal.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    lowering.populateNewtonSchulzPatterns(rt, patterns);
    if (failed(applyPartialConversion(module, legal, std::move(patterns),
                                      muon::conversionConfig())) ||
        rt.failed() ||
        (checkOutput && failed(muon::verifyPassOutput(module, getArgument()))))
      signalPassFailure();
  }
};

} // namespace

void muon::populateNewtonSchulzToRuntimePatterns(RuntimeCalls &rt,
                                                 RewritePatternSet &patterns) {
  patterns.add<NewtonSchulzToRuntime>(patterns.getContext(), rt,
                                      RuntimeFn::muon_rt_newton_schulz);
}

void muon::populateNewtonSchulzToCudaPatterns(RuntimeCalls &rt,
                                              RewritePatternSet &patterns) {
  patterns.add<NewtonSchulzToRuntime>(patterns.getContext(), rt,
                                      RuntimeFn::muon_rt_newton_schulz_cuda);
}
