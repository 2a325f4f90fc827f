//===- Bufferize.cpp - One-shot bufferization, analysed where it matters --===//
//
// Why: one-shot bufferization's in-place analysis decides, for every op
// that writes a tensor, whether the write may reuse its operand's buffer
// or needs a copy of it first. In many steps (the 405B step's among them)
// every write goes to a fresh destination (an alloc_tensor with no
// contents) that the writer does not read, in the same block: there is
// nothing to decide, yet on the 405B step the analysis was three quarters
// of the bufferization's time. Upstream's copy-before-write mode skips
// the analysis and gives such a function the same buffers, so it is taken
// there. Where a function writes into a tensor with contents (an
// insert_slice assembling a matrix, an argument), or elsewhere than the
// two modes agree, the analysis runs.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/SymbolReferences.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace muon {
#define GEN_PASS_DEF_MUONBUFFERIZE
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;
using namespace mlir::bufferization;

namespace {

/// The options of `one-shot-bufferize{bufferize-function-boundaries
/// function-boundary-type-conversion=identity-layout-map
/// unknown-type-conversion=identity-layout-map
/// allow-return-allocs-from-loops}`, the rest at upstream's defaults. A
/// loop carrying a tensor through a collective yields the collective's
/// new buffer, never its iteration argument's: without the last option
/// bufferization refuses every such loop.
OneShotBufferizationOptions stepBufferizationOptions() {
  OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.allowReturnAllocsFromLoops = true;
  options.setFunctionBoundaryTypeConversion(LayoutMapOption::IdentityLayoutMap);
  options.unknownTypeConverterFn = [](TensorType type, Attribute memorySpace,
                                      const BufferizationOptions &) {
    return getMemRefTypeWithStaticIdentityLayout(type, memorySpace);
  };
  return options;
}

/// A tensor with no contents yet: an allocation without a copy or a
/// tensor.empty. A write into it needs no copy, and its own allocation is
/// all the write needs.
bool isFreshDestination(Value v) {
  if (auto alloc = v.getDefiningOp<AllocTensorOp>())
    return !alloc.getCopy();
  return v.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

/// A write into a fresh destination that the writer does not read, made
/// in the destination's own block. Without the analysis the write gets a
/// new allocation where it is (nothing copied: the old contents are
/// neither defined nor read), in place of the destination's, which is
/// left unused and dropped; with it, the destination's allocation. In the
/// same block that is the same buffer; a write in a loop or a branch
/// below the destination would allocate there (once per iteration) and
/// is left to the analysis, as is a writer that reads its destination
/// (copy-before-write would copy the undefined contents).
bool writeNeedsNoDecision(OpOperand &operand, const AnalysisState &state) {
  return isFreshDestination(operand.get()) &&
         operand.get().getParentBlock() == operand.getOwner()->getBlock() &&
         state.canOmitTensorCopy(operand);
}

/// Whether bufferizing `fn` without the analysis gives the buffers the
/// analysis would: every write is one that needs no decision. A written
/// tensor with contents (an argument, a result of another op) is where the
/// analysis may reuse a buffer or avoid a copy, and keeps it.
bool analysisDecidesNothing(func::FuncOp fn,
                            const OneShotBufferizationOptions &options) {
  AnalysisState state(options);
  WalkResult result = fn.walk([&](Operation *op) {
    // A loop's yielded buffer may need a copy only the analysis avoids; a
    // call's bufferization reads what the analysis found of its callee
    // (upstream's copy-before-write crashes on a call passing a tensor).
    if (isa<LoopLikeOpInterface, CallOpInterface>(op) && hasTensorSemantics(op))
      return WalkResult::interrupt();
    if (!options.dynCastBufferizableOp(op))
      return WalkResult::advance();
    for (OpOperand &operand : op->getOpOperands())
      if (isa<TensorType>(operand.get().getType()) &&
          state.bufferizesToMemoryWrite(operand) &&
          !writeNeedsNoDecision(operand, state))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

struct MuonBufferize : muon::impl::MuonBufferizeBase<MuonBufferize> {
  using MuonBufferizeBase::MuonBufferizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A function value keeps the tensor type bufferization takes from its
    // function: refused here, not left as IR that does not verify.
    WalkResult values = module.walk([](Operation *op) {
      auto hasTensor = [](TypeRange types) {
        return llvm::any_of(types, llvm::IsaPred<TensorType>);
      };
      FunctionType type;
      if (auto constant = dyn_cast<func::ConstantOp>(op))
        type = dyn_cast<FunctionType>(constant.getType());
      else if (auto call = dyn_cast<func::CallIndirectOp>(op))
        type = call.getCallee().getType();
      if (!type ||
          (!hasTensor(type.getInputs()) && !hasTensor(type.getResults())))
        return WalkResult::advance();
      op->emitOpError("is not lowered: a function used as a value keeps the "
                      "tensor types that bufferization replaces; call the "
                      "function directly");
      return WalkResult::interrupt();
    });
    if (values.wasInterrupted())
      return signalPassFailure();
    OneShotBufferizationOptions options = stepBufferizationOptions();
    // Names of the functions bufferized without the analysis; the options
    // refer to this storage until bufferization is done.
    std::vector<std::string> unanalysed;
    unsigned analysed = 0;
    // A function some op refers to (a callee) keeps the analysis: its
    // callers' analysis relies on what it finds about the callee's results
    // and arguments.
    FailureOr<DenseSet<StringAttr>> referenced =
        muon::referencedRootNames(module);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      bool analyse = alwaysAnalyse || failed(referenced) ||
                     referenced->contains(fn.getSymNameAttr()) ||
                     !analysisDecidesNothing(fn, options);
      if (analyse)
        ++analysed;
      else
        unanalysed.push_back(fn.getSymName().str());
      if (remarks)
        fn.emitRemark(analyse
                          ? "bufferized with the in-place analysis"
                          : "bufferized without the in-place analysis "
                            "(every written tensor is a fresh destination)");
    }
    if (analysed == 0 && !unanalysed.empty())
      options.copyBeforeWrite = true; // The same, without the filter's walk.
    else
      options.noAnalysisFuncFilter = unanalysed;
    BufferizationState state;
    if (failed(runOneShotModuleBufferize(module, options, state)))
      signalPassFailure();
  }
};

} // namespace
