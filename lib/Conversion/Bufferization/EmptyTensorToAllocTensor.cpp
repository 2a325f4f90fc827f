//===- EmptyTensorToAllocTensor.cpp - Placeholders to allocations, one walk ===//
//
// Why: upstream's `empty-tensor-to-alloc-tensor` applies its one pattern
// with the greedy rewrite driver, which also tries to fold every other op of
// the module and repeats until nothing changes: half a second on a 405B
// step (dp x fsdp x tp, 512 ranks) for a rewrite of a few thousand ops. The
// rewrite itself needs one walk; the CSE that follows in the pipeline
// merges duplicates and erases dead ops.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

namespace muon {
#define GEN_PASS_DEF_MUONEMPTYTENSORTOALLOCTENSOR
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct MuonEmptyTensorToAllocTensor
    : muon::impl::MuonEmptyTensorToAllocTensorBase<
          MuonEmptyTensorToAllocTensor> {
  void runOnOperation() override {
    // Post-order: erasing the visited op is allowed.
    getOperation().walk([](tensor::EmptyOp empty) {
      OpBuilder b(empty);
      auto alloc = bufferization::AllocTensorOp::create(
          b, empty.getLoc(), empty.getType(), empty.getDynamicSizes());
      empty.replaceAllUsesWith(alloc.getResult());
      empty.erase();
    });
  }
};

} // namespace
