//===- ShareUnrankedCasts.cpp - One unranked view per buffer --------------===//
//
// Why: every runtime call takes its tensors as unranked memrefs, and each
// call site casts its buffers anew. The conversion to LLVM fills a stack
// slot with the buffer's whole descriptor for every such cast (seven
// fields for a matrix: about fifteen LLVM operations), and a buffer passed
// to two calls (a Newton-Schulz result, then its scatter) was filled
// twice: a third of the 13,230 casts of a 405B step. The casts are pure, so
// each buffer's casts become one, placed right after the buffer is
// defined, where it dominates every use the buffer has.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/DenseMap.h"

namespace muon {
#define GEN_PASS_DEF_MUONSHAREUNRANKEDCASTS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct MuonShareUnrankedCasts
    : muon::impl::MuonShareUnrankedCastsBase<MuonShareUnrankedCasts> {
  void runOnOperation() override {
    SmallVector<memref::CastOp> casts;
    getOperation().walk([&](memref::CastOp cast) {
      if (isa<UnrankedMemRefType>(cast.getType()))
        casts.push_back(cast);
    });
    llvm::DenseMap<std::pair<Value, Type>, memref::CastOp> kept;
    for (memref::CastOp cast : casts) {
      Value source = cast.getSource();
      auto [it, first] = kept.try_emplace({source, cast.getType()}, cast);
      if (!first) {
        cast.replaceAllUsesWith(it->second.getResult());
        cast.erase();
        continue;
      }
      if (Operation *def = source.getDefiningOp())
        cast->moveAfter(def);
      else
        cast->moveBefore(&llvm::cast<BlockArgument>(source).getOwner()->front());
    }
  }
};

} // namespace
