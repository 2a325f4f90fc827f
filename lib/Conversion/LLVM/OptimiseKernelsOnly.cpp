//===- OptimiseKernelsOnly.cpp - optnone on everything but the kernels ----===//
//
// A step's code is mostly glue: runtime calls (collectives, Newton-Schulz)
// and the memref descriptors of their buffers, straight-line and executed
// once per step. LLVM's optimiser and instruction scheduler spent most of
// the JIT's time on it and gained nothing measurable; the loops that do
// gain are in the kernels muon-outline-elementwise made. Every other
// function is marked optnone (which LLVM requires together with noinline).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace muon {
#define GEN_PASS_DEF_MUONOPTIMISEKERNELSONLY
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {
struct MuonOptimiseKernelsOnly
    : muon::impl::MuonOptimiseKernelsOnlyBase<MuonOptimiseKernelsOnly> {
  void runOnOperation() override {
    UnitAttr unit = UnitAttr::get(&getContext());
    // Functions sit in modules (nested ones too), never in other
    // functions: their bodies, most of the module, are not walked.
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (!fn)
        return WalkResult::advance();
      if (!fn.isExternal() && !fn->removeAttr(muon::kKernelAttrName)) {
        fn.setOptimizeNoneAttr(unit);
        fn.setNoInlineAttr(unit);
      }
      return WalkResult::skip();
    });
  }
};
} // namespace
