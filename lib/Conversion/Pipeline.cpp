//===- Pipeline.cpp - The muon-to-llvm pipeline ---------------------------===//
//
// Built from pass constructors, not parsed from text: an embedding compiler
// that registers only muon's entry points (no global pass registry) can
// build and run it.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <memory>

using namespace mlir;

namespace {
/// ns-stack-bytes for target=cuda: 64 MiB stacks, e.g. 256 matrices of
/// 256 x 256 or four of 2048 x 2048; a 4096 x 4096 matrix (64 MiB) or
/// larger keeps the GPU busy on its own and goes alone.
constexpr int64_t kCudaNsStackBytes = int64_t(64) << 20;

/// target=cuda: the elementwise ops as kernels of a gpu.module, compiled
/// through NVVM to a cubin (ptxas from the CUDA toolkit) embedded in the
/// module as a gpu.binary, which the translation to LLVM IR loads through
/// the runtime's mgpuModuleLoad.
void addGpuKernelPasses(OpPassManager &pm, const muon::MuonToLLVMOptions &o) {
  muon::MuonElementwiseToGpuOptions kernels;
  kernels.chip = o.cudaChip;
  kernels.cudaPath = muon::cudaToolkitPath();
  pm.addPass(muon::createMuonElementwiseToGpu(kernels));
  // The kernels' views (collapse_shape) as descriptor arithmetic, which
  // the conversion to NVVM takes.
  pm.addNestedPass<gpu::GPUModuleOp>(memref::createExpandStridedMetadataPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createLowerAffinePass());
  pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
  GpuNVVMAttachTargetOptions nvvm;
  nvvm.chip = o.cudaChip;
  nvvm.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "bin";
  binary.toolkitPath = muon::cudaToolkitPath();
  pm.addPass(createGpuModuleToBinaryPass(binary));
  // The same lowered text on every rank and in every run.
  pm.addPass(muon::createMuonDropBinaryTimings());
}
} // namespace

std::string muon::cudaToolkitPath() {
  for (const char *name : {"MUON_CUDA_PATH", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(name); v && *v)
      return v;
  return "/usr/local/cuda";
}

bool muon::isKnownCudaChip(llvm::StringRef chip) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargetMCs();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!nvptx)
    return true;
  // Asked of a subtarget made for no processor: one made for an unknown
  // processor says so on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      nvptx->createMCSubtargetInfo(triple, "", ""));
  return !info || info->isCPUStringValid(chip);
}

std::string muon::invalidMuonToLLVMOption(const MuonToLLVMOptions &o) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (o.nsStackBytes < -1)
    os << "ns-stack-bytes = " << static_cast<int64_t>(o.nsStackBytes)
       << " must be -1 (by target), 0 (no stacking) or a byte count";
  else if (o.maxPrefetchBytes < 0)
    os << "max-prefetch-bytes = " << static_cast<int64_t>(o.maxPrefetchBytes)
       << " must be 0 (no bound) or a byte count";
  else if (o.target == Target::Cuda && o.cudaChip.empty())
    os << "target=cuda needs a cuda-chip (e.g. sm_90); it is empty";
  else if (o.target == Target::Cuda && !isKnownCudaChip(o.cudaChip))
    os << "cuda-chip '" << o.cudaChip
       << "' is not a GPU architecture LLVM's NVPTX backend knows (e.g. "
          "sm_90, sm_90a)";
  return message;
}

namespace {
/// The whole pipeline when its options are invalid: one error at the
/// module, naming muon-to-llvm and the option as written, instead of the
/// pass the value would have been handed to.
struct RefuseMuonToLLVMOptions
    : PassWrapper<RefuseMuonToLLVMOptions, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RefuseMuonToLLVMOptions)

  explicit RefuseMuonToLLVMOptions(std::string why) : why(std::move(why)) {}
  StringRef getArgument() const override {
    return "muon-to-llvm-refuse-options";
  }
  void runOnOperation() override {
    emitError(getOperation().getLoc()) << "muon-to-llvm: " << why;
    signalPassFailure();
  }

  std::string why;
};
} // namespace

void muon::buildMuonToLLVMPipeline(OpPassManager &pm,
                                   const MuonToLLVMOptions &options) {
  if (std::string why = invalidMuonToLLVMOption(options); !why.empty()) {
    pm.addPass(std::make_unique<RefuseMuonToLLVMOptions>(std::move(why)));
    return;
  }
  // A program annotated with MLIR's shard dialect gets its layouts first
  // (nothing to do in a module without shard ops or global-view steps).
  pm.addPass(createConvertShardToDist());
  if (options.assignOwners)
    pm.addPass(optim::createMuonAssignOwners());
  // Distribution and compute ops to runtime calls on local tensors.
  optim::MuonExpandStepOptions expand;
  expand.batchCollectives = options.batchCollectives;
  expand.maxPrefetchBytes = options.maxPrefetchBytes;
  // A GPU runs a stack of small matrices as batched products, where one
  // call per matrix leaves most of it idle and pays a launch sequence per
  // matrix; the CPU's BLAS gains nothing from a stack.
  expand.nsStackBytes = options.nsStackBytes != -1 ? options.nsStackBytes
                        : options.target == Target::Cuda ? kCudaNsStackBytes
                                                         : 0;
  pm.addPass(optim::createMuonExpandStep(expand));
  pm.addPass(dist::createDistLowerRedistribute());
  // With check-output-once, the three conversions to local tensors and
  // runtime calls check their output once, together: each check verifies
  // the whole step. (A pass manager that verifies after each pass would
  // report a bad output first, without naming the pass.)
  bool checkEach = !options.checkOutputOnce;
  ConvertMuonToLinalgOptions linalgOptions;
  linalgOptions.checkOutput = checkEach;
  pm.addPass(createConvertMuonToLinalg(linalgOptions));
  ConvertMuonToRuntimeOptions nsOptions;
  nsOptions.target = options.target;
  nsOptions.checkOutput = checkEach;
  pm.addPass(createConvertMuonToRuntime(nsOptions));
  ConvertDistToRuntimeOptions distOptions;
  distOptions.target = options.target;
  distOptions.checkOutput = checkEach;
  pm.addPass(createConvertDistToRuntime(distOptions));
  if (!checkEach) {
    MuonCheckOutputOptions check;
    check.generatedBy = "convert-muon-to-linalg, convert-muon-to-runtime or "
                        "convert-dist-to-runtime";
    pm.addPass(createMuonCheckOutput(check));
  }
  // Elementwise arith / math ops on whole tensors (in the user's own
  // functions beside the step) become linalg, which bufferizes; left as
  // they are, bufferization stops at them with "op was not bufferized".
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // Placeholders (the destinations of elementwise ops, what a rank that
  // takes no part yields) become allocations before CSE: merged into one
  // tensor.empty per type, thousands of uses would alias one value, and
  // bufferization's conflict analysis grew quadratic in the parameters.
  pm.addPass(createMuonEmptyTensorToAllocTensor());
  // Merges the constants and the rank queries each parameter's code
  // repeats, and erases ops dead when it reaches them. No canonicalizer:
  // its greedy driver tried to fold every op of the step, and the folds
  // that mattered (x * 1.0 in the elementwise bodies, eps in every owner's
  // branch) are not emitted in the first place.
  pm.addPass(createCSEPass());

  // The arguments of the entry (a function nothing calls) as the buffers
  // the function-boundary bufferization would give them, so that its
  // analysis has no argument to compare each result with: that was
  // quadratic in the parameters.
  pm.addPass(createMuonBufferizeEntryArguments());
  // Tensors to buffers (one-shot, with its in-place analysis only where
  // it has something to decide); results become caller-provided out-params so a
  // host keeps ownership of every buffer it sees. Buffers whose layout the
  // analysis cannot infer (the results of the participation scf.ifs) get
  // the identity layout: with upstream's default, a fully dynamic one,
  // every runtime call and Newton-Schulz operand behind such a result was
  // copied into an identity buffer first (252 of the main example's 336
  // copies per step on a 2-rank mesh).
  pm.addPass(createMuonBufferize());
  pm.addPass(createMuonDistinctResults());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  // A result allocated with a static shape is written straight into its
  // out-buffer, not copied there at the end (the out-buffers must then not
  // overlap the arguments; the C API checks).
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Every buffer freed after its last use (MLIR's pipeline where the code
  // has another structure): see muon-place-deallocations.
  if (options.placeDeallocations) {
    pm.addPass(createMuonPlaceDeallocations());
    // Then the participation branches' buffers allocated before them, so
    // that they do not become block arguments.
    pm.addPass(createMuonAllocateBeforeBranches());
  } else
    bufferization::buildBufferDeallocationPipeline(pm);
  if (options.target == Target::Cuda)
    addGpuKernelPasses(pm, options);
  else
    // The elementwise ops into a few kernels: the only code worth
    // optimising.
    pm.addPass(createMuonOutlineElementwise());

  // Loops, then the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(createMuonLinalgToLoops());
  pm.addNestedPass<func::FuncOp>(createMuonExpandStridedMetadata());
  pm.addNestedPass<func::FuncOp>(createLowerAffinePass());
  pm.addNestedPass<func::FuncOp>(createMuonSCFToCFLastFirst());
  // One descriptor stack slot per buffer, not per runtime call; one read
  // of each constant table.
  pm.addNestedPass<func::FuncOp>(createMuonShareBufferViews());
  pm.addNestedPass<func::FuncOp>(createMuonSplitEntryBlock());
  // A buffer only handed to calls: one runtime call writes its whole
  // descriptor, instead of a store per field.
  pm.addPass(createMuonAllocateThroughRuntime());
  // func, memref, arith, index and cf in one conversion (one walk of the
  // module, not five).
  MuonConvertStepToLLVMOptions toLLVM;
  // Buffers through the runtime's allocation functions, which count the
  // bytes a step holds (muon_rt_counters.heap_bytes_peak).
  toLLVM.useGenericFunctions = true;
  // The runtime aligns (_mlir_memref_to_llvm_aligned_alloc): no pointer
  // arithmetic per buffer in the step's code.
  toLLVM.useAlignedAlloc = true;
  pm.addPass(createMuonConvertStepToLLVM(toLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  // One function per entry, and descriptors as scalars between blocks and
  // in stack slots, so that the JIT's fast instruction selector takes
  // every block of the glue.
  pm.addPass(createMuonInlineEntryIntoCInterface());
  // The runtime reads an argument's descriptor where the caller keeps it,
  // not from a stack copy per argument.
  pm.addPass(createMuonForwardArgumentDescriptors());
  pm.addPass(createMuonScalariseAggregates());
  // A constant table as the address of its constant descriptor: one
  // argument per call instead of five.
  pm.addPass(createMuonTablesByReference());
  // Runs of calls to one function (argument checks, batch items) as one
  // call of a loop over a table of their arguments.
  pm.addPass(createMuonRollCallRuns());
  pm.addPass(createMuonOptimiseKernelsOnly());
}

LogicalResult muon::runMuonToLLVMPipeline(ModuleOp module,
                                          const MuonToLLVMOptions &options) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.enableVerifier(false);
  MuonToLLVMOptions once;
  once.copyOptionValuesFrom(options);
  once.checkOutputOnce = true;
  buildMuonToLLVMPipeline(pm, once);
  if (failed(pm.run(module)))
    return failure();
  return verifyPassOutput(module, "muon-to-llvm");
}

void muon::registerMuonToLLVMPipeline() {
  PassPipelineRegistration<MuonToLLVMOptions>(
      "muon-to-llvm",
      "Compile muon.step to the LLVM dialect for the runtime: assign owners, "
      "expand, lower NS/collectives to runtime calls, bufferize (results as "
      "out-params), lower to LLVM with C-interface entry points",
      buildMuonToLLVMPipeline);
}
