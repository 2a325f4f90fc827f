//===- SCFToCFLastFirst.cpp - scf to cf, linear in the block's length -----===//
//
// Lowering an `scf.if` or `scf.for` to branches splits its block: every op
// after it moves to a new block. MLIR's scf-to-cf converts a block's ops
// first to last, so each split moves the rest of the block again, and an
// expanded step (one block holding thousands of participation `scf.if`s
// and elementwise loops) took time quadratic in its length. Converting the
// block's SCF ops last to first, each on its own, moves every op once: a
// split then only moves the ops up to the next (already split off) one.
// The patterns are MLIR's; only the order differs.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/ConversionConfig.h"
#include "muon/Conversion/Passes.h"

#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace muon {
#define GEN_PASS_DEF_MUONSCFTOCFLASTFIRST
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct MuonSCFToCFLastFirst
    : muon::impl::MuonSCFToCFLastFirstBase<MuonSCFToCFLastFirst> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateSCFToControlFlowConversionPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    ConversionTarget target(getContext());
    target
        .addIllegalOp<scf::ForallOp, scf::ForOp, scf::IfOp, scf::IndexSwitchOp,
                      scf::ParallelOp, scf::WhileOp, scf::ExecuteRegionOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    // The SCF ops directly in the function's blocks, last first; ops nested
    // in them are converted with them. Blocks split off by a conversion
    // hold no SCF op that is not already done.
    SmallVector<Operation *> roots;
    for (Block &block : getOperation().getFunctionBody())
      for (Operation &op : block)
        if (isa<scf::SCFDialect>(op.getDialect()))
          roots.push_back(&op);
    for (Operation *op : llvm::reverse(roots))
      if (failed(applyPartialConversion(op, target, patterns,
                                        muon::conversionConfig())))
        return signalPassFailure();
    // Anything left (SCF inside other region ops), in MLIR's order.
    if (failed(applyPartialConversion(getOperation(), target, patterns,
                                      muon::conversionConfig())))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
