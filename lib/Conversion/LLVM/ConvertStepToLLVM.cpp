//===- ConvertStepToLLVM.cpp - func, memref, arith, index, cf at once -----===//
//
// Why: once a step is loops and buffers, its functions hold func, memref,
// arith, index and cf operations (and math, in helpers beside the step).
// The upstream passes convert one dialect
// each, and each walks the whole module and checks the legality of every
// operation in it: on a 405B step (millions of operations in one function)
// the five walks cost more than the rewriting (2.5 s against 0.7 s for one
// conversion with all five pattern sets, configured as the pipeline
// configured those passes; the same operations, though the declarations
// of called functions, and the unpacking of an entry's memref arguments,
// may come in another order).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/ConversionConfig.h"
#include "muon/Conversion/LLVM/DirectCalls.h"
#include "muon/Conversion/Passes.h"
#include "muon/Support/AddressSpace.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/IR/DataLayout.h"
#include "llvm/Support/Error.h"

namespace muon {
#define GEN_PASS_DEF_MUONCONVERTSTEPTOLLVM
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {
/// A kernel launch (target=cuda) on LLVM values: each memref operand as its
/// descriptor's fields, as the kernel's own lowering takes them. Unlike
/// upstream's gpu-to-llvm, the launch keeps its stream (the runtime's
/// compute stream), which the translation to LLVM IR launches on.
struct LaunchOnLLVMValues : ConvertOpToLLVMPattern<gpu::LaunchFuncOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(gpu::LaunchFuncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAsyncToken() || !op.getAsyncDependencies().empty() ||
        op.hasClusterSize())
      return rewriter.notifyMatchFailure(op, "async tokens or clusters");
    SmallVector<Value, 4> args = getTypeConverter()->promoteOperands(
        op.getLoc(), op.getKernelOperands(), adaptor.getKernelOperands(),
        rewriter);
    rewriter.replaceOpWithNewOp<gpu::LaunchFuncOp>(
        op, op.getKernelAttr(),
        gpu::KernelDim3{adaptor.getGridSizeX(), adaptor.getGridSizeY(),
                        adaptor.getGridSizeZ()},
        gpu::KernelDim3{adaptor.getBlockSizeX(), adaptor.getBlockSizeY(),
                        adaptor.getBlockSizeZ()},
        adaptor.getDynamicSharedMemorySize(), args, adaptor.getAsyncObject());
    return success();
  }
};
} // namespace

namespace {

struct ConvertStepToLLVM
    : muon::impl::MuonConvertStepToLLVMBase<ConvertStepToLLVM> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A type the converter cannot convert (a memory space that is not an
    // address space) is reported as an error while the op that has it is
    // left as it is, which a partial conversion accepts: the pass fails
    // on any error reported during it.
    bool reportedError = false;
    ScopedDiagnosticHandler watch(&getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        reportedError = true;
      return failure(); // Reported by the handlers in place as before.
    });
    runConversions(module);
    if (reportedError) {
      locateUnconvertibleMemorySpace(module);
      signalPassFailure();
      return;
    }
    if (failed(reportUnconverted(module)))
      signalPassFailure();
  }

  /// A partial conversion leaves what no pattern converts (an op of a
  /// dialect the lowering does not handle, in code around the step) as it
  /// is; the translation to LLVM IR would then fail with no location. The
  /// first such op in one of the module's functions is reported here, at
  /// the op. (Nested modules, which muon-to-llvm does not lower, and
  /// declarations outside functions are not looked at.)
  static LogicalResult reportUnconverted(ModuleOp module) {
    Dialect *llvm = module.getContext()->getLoadedDialect<LLVM::LLVMDialect>();
    Operation *left = nullptr;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != module.getOperation() && isa<ModuleOp>(op))
        return WalkResult::skip();
      bool declaration =
          op->getParentOp() == module.getOperation() && !isa<func::FuncOp>(op);
      if (op == module.getOperation() || declaration ||
          op->getDialect() == llvm ||
          isa<UnrealizedConversionCastOp, gpu::LaunchFuncOp>(op))
        return WalkResult::advance();
      left = op;
      return WalkResult::interrupt();
    });
    if (!left)
      return success();
    left->emitError() << "'" << left->getName()
                      << "' was not lowered to the LLVM dialect: muon-to-llvm "
                         "lowers the ops of func, arith, math, memref, scf, "
                         "cf, index and linalg, and the step's own dialects";
    return failure();
  }

  /// The converter's report has no location: on failure, point at the
  /// first op that defines a memref in a memory space that is not an
  /// address space (the one such report there is).
  static void locateUnconvertibleMemorySpace(ModuleOp module) {
    auto unconvertible = [](Type type) {
      Attribute space;
      if (auto m = dyn_cast<MemRefType>(type))
        space = m.getMemorySpace();
      else if (auto u = dyn_cast<UnrankedMemRefType>(type))
        space = u.getMemorySpace();
      return muon::isLLVMAddressSpace(space) ? Attribute() : space;
    };
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      SmallVector<Type> types(op->getResultTypes());
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            types.push_back(arg.getType());
      for (Type type : types)
        if (Attribute space = unconvertible(type)) {
          op->emitError() << "memref memory space " << space
                          << " is not an LLVM address space (an integer); "
                             "map it to one before muon-to-llvm";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
  }

  void runConversions(ModuleOp module) {
    const auto &layout = getAnalysis<DataLayoutAnalysis>();
    LowerToLLVMOptions options(&getContext(), layout.getAtOrAbove(module));
    // As convert-func-to-llvm: the module's LLVM data layout, when it has
    // one, sizes what the C interfaces copy.
    if (auto dl = module->getAttrOfType<StringAttr>(
            LLVM::LLVMDialect::getDataLayoutAttrName())) {
      llvm::Expected<llvm::DataLayout> parsed =
          llvm::DataLayout::parse(dl.getValue());
      if (!parsed) {
        mlir::emitError(module.getLoc())
            << "invalid " << dl << ": " << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      options.dataLayout = *parsed;
    }
    options.useGenericFunctions = useGenericFunctions;
    options.allocLowering =
        useAlignedAlloc ? LowerToLLVMOptions::AllocLowering::AlignedAlloc
                        : LowerToLLVMOptions::AllocLowering::Malloc;
    LLVMTypeConverter converter(&getContext(), options, &layout);
    LLVMConversionTarget target(getContext());
    target.addIllegalDialect<cf::ControlFlowDialect, index::IndexDialect>();
    target.addDynamicallyLegalOp<gpu::LaunchFuncOp>(
        [&](gpu::LaunchFuncOp op) { return converter.isLegal(op); });

    // Declarations first: a pattern that declares a function it calls
    // (malloc, free, abort, ...) must find a declaration the module
    // already has as an llvm.func, not as a func.func converted later.
    // No pattern shares a symbol table cache: the func patterns declare
    // malloc and free without one, so a shared cache would go stale.
    SmallVector<Operation *> declarations;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.isExternal())
        declarations.push_back(fn);
    if (!declarations.empty()) {
      RewritePatternSet funcPatterns(&getContext());
      populateFuncToLLVMConversionPatterns(converter, funcPatterns);
      if (failed(applyPartialConversion(declarations, target,
                                        std::move(funcPatterns),
                                        muon::conversionConfig())))
        return signalPassFailure();
    }

    // Calls to functions whose LLVM signature is known now (the runtime's
    // declarations and the kernels) skip the generic call lowering.
    DenseMap<StringAttr, LLVM::LLVMFunctionType> callees;
    muon::collectDirectCallees(module, converter, callees);

    RewritePatternSet patterns(&getContext());
    muon::populateDirectCallPatterns(converter, module, callees, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    cf::populateAssertToLLVMConversionPattern(converter, patterns);
    // math (helpers of the step may use it): LLVM's intrinsics where it has
    // one, otherwise a call to libm (erf, log1p, ...), which the process has.
    populateMathToLLVMConversionPatterns(converter, patterns,
                                         /*approximateLog1p=*/false,
                                         /*benefit=*/2);
    populateMathToLibmConversionPatterns(patterns, /*benefit=*/1);
    patterns.add<LaunchOnLLVMValues>(converter);
    if (failed(applyPartialConversion(module, target, std::move(patterns),
                                      muon::conversionConfig())))
      signalPassFailure();
  }
};

} // namespace
