//===- LocalBoundary.cpp - Distributed function boundaries become local ---===//
//
// After muon-expand-step a function is SPMD code on local tensors between a
// dist.to_local at every argument and a dist.from_local at every result.
// The type converter makes the local tensor the ABI; the patterns fold the
// boundary ops into it.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/DistToRuntime/DistToRuntime.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace muon::dist;

muon::DistToLocalTypeConverter::DistToLocalTypeConverter(Operation *symbols) {
  addConversion([](Type t) { return t; });
  addConversion([symbols](DistTensorType t) -> Type {
    return localTensorType(t, symbols);
  });
  // A token is the runtime's request handle (0: complete).
  addConversion([](TokenType t) -> Type {
    return IntegerType::get(t.getContext(), 64);
  });
}

namespace {

/// `v` as `type`: a tensor.cast where the static information differs.
Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

struct ToLocalAtBoundary : OpConversionPattern<ToLocalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ToLocalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), adaptor.getInput(),
                                  op.getType()));
    return success();
  }
};

struct FromLocalAtBoundary : OpConversionPattern<FromLocalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FromLocalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type local = getTypeConverter()->convertType(op.getType());
    if (!local)
      return failure();
    rewriter.replaceOp(op,
                       castTo(rewriter, op.getLoc(), adaptor.getInput(), local));
    return success();
  }
};

} // namespace

void muon::populateDistBoundaryPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  patterns.add<ToLocalAtBoundary, FromLocalAtBoundary>(converter,
                                                       patterns.getContext());
}
