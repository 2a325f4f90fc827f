//===- SplitEntryBlock.cpp - A function body out of its entry block -------===//
//
// Converting a function's signature to the LLVM dialect inserts a cast per
// argument at the top of the entry block, and the conversion asks for the
// order of ops in that block between insertions: each time the whole block
// is renumbered. A step's entry has thousands of arguments (a parameter,
// gradient, momentum and two out-buffers per matrix) and its entry block
// held the argument checks and communicator set-up of all of them, so the
// conversion was quadratic (8 of 15 s on a 405B step). Moving the body into
// a block the entry branches to leaves the entry block with the casts
// alone.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

namespace muon {
#define GEN_PASS_DEF_MUONSPLITENTRYBLOCK
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct MuonSplitEntryBlock
    : muon::impl::MuonSplitEntryBlockBase<MuonSplitEntryBlock> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.front();
    Block *body = entry.splitBlock(entry.begin());
    OpBuilder b = OpBuilder::atBlockEnd(&entry);
    cf::BranchOp::create(b, func.getLoc(), body);
  }
};

} // namespace
