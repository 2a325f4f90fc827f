//===- ExpandStridedMetadata.cpp - Expand views, visiting only views ------===//
//
// Why: upstream's `expand-strided-metadata` hands the whole function to the
// greedy rewrite driver, which tries to fold every op of it and iterates to
// a fixed point; on a large step's one big function that cost half a
// second, to rewrite the few ops its patterns apply to (a lowered step has
// no views; the ops are the deallocations' reads of a base buffer). The
// same patterns applied to the ops they are rooted at, and to what they
// create, give the same rewrite.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace muon {
#define GEN_PASS_DEF_MUONEXPANDSTRIDEDMETADATA
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// The ops `memref::populateExpandStridedMetadataPatterns` rewrites.
bool isPatternRoot(Operation *op) {
  return isa<memref::SubViewOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ExtractStridedMetadataOp,
             memref::ExtractAlignedPointerAsIndexOp>(op);
}

struct MuonExpandStridedMetadata
    : muon::impl::MuonExpandStridedMetadataBase<MuonExpandStridedMetadata> {
  void runOnOperation() override {
    SmallVector<Operation *> roots;
    getOperation().walk([&](Operation *op) {
      if (isPatternRoot(op))
        roots.push_back(op);
    });
    if (roots.empty())
      return;
    RewritePatternSet patterns(&getContext());
    memref::populateExpandStridedMetadataPatterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(roots, std::move(patterns), config);
  }
};

} // namespace
