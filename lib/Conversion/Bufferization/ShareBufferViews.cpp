//===- ShareBufferViews.cpp - One view of a buffer per function -----------===//
//
// Why: every runtime call takes its tensors as unranked memrefs, and each
// call site cast its buffers anew. The conversion to LLVM fills a stack
// slot with the buffer's whole descriptor for every such cast (seven
// fields for a matrix: about fifteen LLVM operations), and a buffer passed
// to two calls (a Newton-Schulz result, then its scatter) was filled
// twice: a third of the 13,230 casts of a 405B step. Likewise every use of
// a constant table (extents, coefficients) took its own
// `memref.get_global`, about ten LLVM operations each, for a handful of
// distinct tables. Both ops are pure, so each becomes one per function:
// a cast to an unranked memref right after the value it casts is defined
// (where it dominates every use of that value; not when that is in a
// loop, where the cast's stack slot would be taken per iteration), a
// table read at the top of the function. A cast to a ranked type that
// only forgets static sizes (a table read as memref<?xi64> for a runtime
// call, in every owner's branch) holds wherever its source does, and is
// shared the same way; other ranked casts may assume what a branch
// checked, so they stay where they are.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/BlocksOnCycles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/DenseMap.h"

namespace muon {
#define GEN_PASS_DEF_MUONSHAREBUFFERVIEWS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// Whether `cast` cannot fail wherever its source is defined: a cast to an
/// unranked memref, or to a ranked one that differs only in dimensions
/// made dynamic (identity layouts, the same element type and space).
bool holdsEverywhere(memref::CastOp cast) {
  if (isa<UnrankedMemRefType>(cast.getType()))
    return true;
  auto from = dyn_cast<MemRefType>(cast.getSource().getType());
  auto to = dyn_cast<MemRefType>(cast.getType());
  if (!from || !to || from.getRank() != to.getRank() ||
      from.getElementType() != to.getElementType() ||
      from.getMemorySpace() != to.getMemorySpace() ||
      !from.getLayout().isIdentity() || !to.getLayout().isIdentity())
    return false;
  for (auto [f, t] : llvm::zip(from.getShape(), to.getShape()))
    if (!ShapedType::isDynamic(t) && f != t)
      return false;
  return true;
}

struct MuonShareBufferViews
    : muon::impl::MuonShareBufferViewsBase<MuonShareBufferViews> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Region &body = func.getBody();
    // Only ops of the function's own blocks (after the SCF lowering, all
    // of a step): a nested region may be isolated, hold its own symbols,
    // or become a kernel of its own.
    SmallVector<memref::GetGlobalOp> tables;
    SmallVector<memref::CastOp> casts;
    for (Block &block : body)
      for (Operation &op : block) {
        if (auto table = dyn_cast<memref::GetGlobalOp>(op))
          tables.push_back(table);
        else if (auto cast = dyn_cast<memref::CastOp>(op);
                 cast && holdsEverywhere(cast))
          casts.push_back(cast);
      }
    // Blocks in a CFG cycle run more than once: a cast moved into one
    // would take a stack slot per iteration.
    llvm::SmallPtrSet<Block *, 16> cyclic = muon::blocksOnCycles(body);

    Block &entry = body.front();
    llvm::DenseMap<std::pair<Attribute, Type>, memref::GetGlobalOp> keptTables;
    for (memref::GetGlobalOp table : tables) {
      auto [it, first] = keptTables.try_emplace(
          {table.getNameAttr(), table.getType()}, table);
      if (!first) {
        table.replaceAllUsesWith(it->second.getResult());
        table.erase();
        continue;
      }
      table->moveBefore(&entry, entry.begin());
    }
    llvm::DenseMap<std::pair<Value, Type>, memref::CastOp> keptCasts;
    for (memref::CastOp cast : casts) {
      Value source = cast.getSource();
      Block *home = source.getParentBlock();
      if (home->getParent() != &body || cyclic.contains(home))
        continue;
      auto [it, first] = keptCasts.try_emplace({source, cast.getType()}, cast);
      if (!first) {
        cast.replaceAllUsesWith(it->second.getResult());
        cast.erase();
        continue;
      }
      if (Operation *def = source.getDefiningOp())
        cast->moveAfter(def);
      else
        cast->moveBefore(home, home->begin());
    }
  }
};

} // namespace
