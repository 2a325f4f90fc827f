//===- ConvertStepToLLVM.cpp - func, memref, arith, index, cf at once -----===//
//
// Why: once a step is loops and buffers, its functions hold func, memref,
// arith, index and cf operations. The upstream passes convert one dialect
// each, and each walks the whole module and checks the legality of every
// operation in it: on a 405B step (millions of operations in one function)
// the five walks cost more than the rewriting (2.5 s against 0.7 s for one
// conversion with all five pattern sets, configured as the pipeline
// configured those passes; the same output, but for the order in which
// the declarations of called functions may come).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

namespace muon {
#define GEN_PASS_DEF_MUONCONVERTSTEPTOLLVM
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct ConvertStepToLLVM
    : muon::impl::MuonConvertStepToLLVMBase<ConvertStepToLLVM> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const auto &layout = getAnalysis<DataLayoutAnalysis>();
    LowerToLLVMOptions options(&getContext(), layout.getAtOrAbove(module));
    options.useGenericFunctions = useGenericFunctions;
    options.allocLowering =
        useAlignedAlloc ? LowerToLLVMOptions::AllocLowering::AlignedAlloc
                        : LowerToLLVMOptions::AllocLowering::Malloc;
    LLVMTypeConverter converter(&getContext(), options, &layout);
    RewritePatternSet patterns(&getContext());
    // Allocation and deallocation functions are looked up (or declared)
    // through cached symbol tables, not a scan of the module per buffer.
    SymbolTableCollection symbolTables;
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns,
                                                   &symbolTables);
    populateFuncToLLVMConversionPatterns(converter, patterns, &symbolTables);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    cf::populateAssertToLLVMConversionPattern(converter, patterns);
    LLVMConversionTarget target(getContext());
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
