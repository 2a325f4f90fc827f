//===- SpecializeRank.cpp - Fold rank queries to one rank's constants -----===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace muon {
namespace dist {
#define GEN_PASS_DEF_DISTSPECIALIZERANK
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace muon

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {
struct DistSpecializeRankPass
    : public ::muon::dist::impl::DistSpecializeRankBase<DistSpecializeRankPass> {
  using DistSpecializeRankBase::DistSpecializeRankBase;

  void runOnOperation() override {
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    ModuleOp module = getOperation();
    if (!rank.hasValue()) {
      mlir::emitError(module.getLoc(), "dist-specialize-rank needs a rank: "
                                       "--dist-specialize-rank=rank=N");
      return signalPassFailure();
    }
    if (rank < 0) {
      mlir::emitError(module.getLoc(), "dist-specialize-rank: rank ")
          << static_cast<int64_t>(rank) << " is negative; ranks count from 0";
      return signalPassFailure();
    }
    SymbolTableCollection tables;
    SmallVector<Operation *> queries;
    module.walk([&](Operation *op) {
      if (isa<RankOp, CoordOp>(op))
        queries.push_back(op);
    });
    for (Operation *op : queries) {
      auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
      MeshOp mesh = lookupMesh(op, meshRef, &tables);
      if (!mesh) {
        op->emitOpError("unknown mesh ") << meshRef;
        return signalPassFailure();
      }
      if (static_cast<int64_t>(rank) >= mesh.getNumRanks()) {
        op->emitError("dist-specialize-rank: rank ")
            << static_cast<int64_t>(rank) << " is outside mesh " << meshRef << " ("
            << mesh.getNumRanks() << " ranks)";
        return signalPassFailure();
      }
      int64_t value = rankQueryValue(op, mesh, rank);
      OpBuilder b(op);
      Value c = arith::ConstantIndexOp::create(b, op->getLoc(), value);
      op->getResult(0).replaceAllUsesWith(c);
      op->erase();
    }

    // Fold what the constants decide (branches on the rank, conditions),
    // exactly as --canonicalize would. Collectives have side effects and
    // stay.
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    for (Dialect *dialect : ctx->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      module.emitWarning("dist-specialize-rank: folding did not converge");
    if (failed(muon::verifyPassOutput(module, getArgument())))
      signalPassFailure();
  }
};
} // namespace
