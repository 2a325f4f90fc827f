//===- AllocateBeforeBranches.cpp - One buffer for both sides of an if ----===//
//
// Why: a step's participation `scf.if`s each allocate a buffer on both
// sides and yield it (the owner's gathered matrix or Newton-Schulz result
// on one side, a placeholder of the same type on the other). Every such
// result becomes a memref block argument when SCF is lowered to branches,
// and block arguments of descriptor type are what the conversion to LLVM
// handles worst: the signature conversion of the blocks behind them
// renumbers blocks of tens of thousands of ops, and they end as aggregate
// PHIs that fast instruction selection refuses. When both sides yield an
// allocation of the same static type made on that side, allocating it once
// before the `scf.if` is the same program (every path allocated it) and
// the result goes away.
//
// Runs after muon-place-deallocations, which freed the result after its
// last use: the free then applies to the allocation made before the if
// (directly: the base buffer read it went through is dropped).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace muon {
#define GEN_PASS_DEF_MUONALLOCATEBEFOREBRANCHES
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// The allocation `block` yields at `index`, when it is a static
/// allocation made in `block` itself.
memref::AllocOp yieldedAllocation(Block &block, unsigned index) {
  auto yield = cast<scf::YieldOp>(block.getTerminator());
  auto alloc = yield.getOperand(index).getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &block ||
      !alloc.getDynamicSizes().empty() || !alloc.getSymbolOperands().empty())
    return {};
  return alloc;
}

/// Frees `alloc` itself where a deallocation freed the base buffer read from
/// it (what muon-place-deallocations writes for a buffer that was not yet
/// an allocation, here the if's result): the same pointer is freed, and no
/// metadata read is left for the lowering to expand.
void deallocateDirectly(memref::AllocOp alloc) {
  SmallVector<memref::ExtractStridedMetadataOp> reads;
  for (Operation *user : alloc->getUsers())
    if (auto read = dyn_cast<memref::ExtractStridedMetadataOp>(user))
      reads.push_back(read);
  for (memref::ExtractStridedMetadataOp read : reads) {
    Value base = read.getBaseBuffer();
    bool onlyBaseFreed =
        llvm::all_of(read->getResults().drop_front(),
                     [](Value v) { return v.use_empty(); }) &&
        llvm::all_of(base.getUsers(),
                     [](Operation *u) { return isa<memref::DeallocOp>(u); });
    if (!onlyBaseFreed)
      continue;
    for (Operation *dealloc : llvm::to_vector(base.getUsers()))
      dealloc->setOperand(0, alloc.getResult());
    read.erase();
  }
}

/// Allocates before `op` every result both of its sides allocate, and
/// rebuilds `op` without those results.
void allocateBefore(scf::IfOp op) {
  if (op.getElseRegion().empty())
    return;
  OpBuilder b(op);
  llvm::BitVector moved(op.getNumResults());
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    memref::AllocOp onThen = yieldedAllocation(*op.thenBlock(), i);
    memref::AllocOp onElse = yieldedAllocation(*op.elseBlock(), i);
    if (!onThen || !onElse || onThen.getType() != onElse.getType() ||
        onThen.getAlignmentAttr() != onElse.getAlignmentAttr())
      continue;
    auto before = cast<memref::AllocOp>(b.clone(*onThen));
    onThen.replaceAllUsesWith(before.getResult());
    onElse.replaceAllUsesWith(before.getResult());
    onThen.erase();
    onElse.erase();
    op.getResult(i).replaceAllUsesWith(before.getResult());
    deallocateDirectly(before);
    moved.set(i);
  }
  if (moved.none())
    return;

  SmallVector<Type> types;
  for (unsigned i = 0; i < op.getNumResults(); ++i)
    if (!moved.test(i))
      types.push_back(op.getResult(i).getType());
  auto rebuilt = scf::IfOp::create(b, op.getLoc(), types, op.getCondition(),
                                   /*addThenBlock=*/false,
                                   /*addElseBlock=*/false);
  rebuilt.getThenRegion().takeBody(op.getThenRegion());
  rebuilt.getElseRegion().takeBody(op.getElseRegion());
  for (Block *block : {rebuilt.thenBlock(), rebuilt.elseBlock()})
    cast<scf::YieldOp>(block->getTerminator())->eraseOperands(moved);
  // An else side left with nothing to do and nothing to yield goes.
  if (types.empty() && llvm::hasSingleElement(*rebuilt.elseBlock()))
    rebuilt.elseBlock()->erase();
  unsigned next = 0;
  for (unsigned i = 0; i < op.getNumResults(); ++i)
    if (!moved.test(i))
      op.getResult(i).replaceAllUsesWith(rebuilt.getResult(next++));
  op.erase();
}

struct MuonAllocateBeforeBranches
    : muon::impl::MuonAllocateBeforeBranchesBase<MuonAllocateBeforeBranches> {
  void runOnOperation() override {
    // Inner ifs first (post-order), so that an outer if sees what its
    // inner ones no longer yield.
    SmallVector<scf::IfOp> ifs;
    getOperation().walk([&](scf::IfOp op) {
      if (op.getNumResults() != 0)
        ifs.push_back(op);
    });
    for (scf::IfOp op : ifs)
      allocateBefore(op);
  }
};

} // namespace
