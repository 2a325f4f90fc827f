//===- Passes.h - Lowering the step to the runtime and LLVM ----*- C++ -*-===//

#ifndef MUON_CONVERSION_PASSES_H
#define MUON_CONVERSION_PASSES_H

#include "muon/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace muon {

/// Code generation targets of the lowering (see muon/Conversion/Target.h).
enum class Target { Cpu, Cuda };

/// Marks the functions muon-outline-elementwise creates (the kernels that
/// muon-optimise-kernels-only leaves to LLVM's optimiser).
inline constexpr llvm::StringLiteral kKernelAttrName = "muon.kernel";

#define GEN_PASS_DECL
#include "muon/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "muon/Conversion/Passes.h.inc"

/// The options of the `muon-to-llvm` pipeline: the one struct behind both
/// the textual form (`--muon-to-llvm="target=cpu assign-owners=false"`) and
/// the C++ API. Set fields directly (`options.assignOwners = false;`).
struct MuonToLLVMOptions : public mlir::PassPipelineOptions<MuonToLLVMOptions> {
  Option<Target> target{
      *this, "target", llvm::cl::desc("Code generation target"),
      llvm::cl::values(
          clEnumValN(Target::Cpu, "cpu",
                     "host code over the MPI + CBLAS runtime"),
          clEnumValN(Target::Cuda, "cuda",
                     "tensors in NVIDIA GPU memory: Newton-Schulz in "
                     "libmuon_runtime_cuda, elementwise ops as generated "
                     "kernels")),
      llvm::cl::init(Target::Cpu)};
  Option<bool> assignOwners{
      *this, "assign-owners",
      llvm::cl::desc("Run muon-assign-owners first (steps keep explicit "
                     "owners either way)"),
      llvm::cl::init(true)};
  Option<bool> batchCollectives{
      *this, "batch-collectives",
      llvm::cl::desc("Merge a round's gathers and scatters over one "
                     "communicator into batched calls (muon-expand-step's "
                     "option; docs/schedule.md)"),
      llvm::cl::init(true)};
  Option<bool> placeDeallocations{
      *this, "place-deallocations",
      llvm::cl::desc("Free each buffer after its last use "
                     "(muon-place-deallocations); false: MLIR's "
                     "ownership-based deallocation, which frees buffers at "
                     "the end of their block (to compare)"),
      llvm::cl::init(true)};
  Option<std::string> cudaChip{
      *this, "cuda-chip",
      llvm::cl::desc("With target=cuda: the GPU architecture the kernels are "
                     "compiled for (ptxas's -arch)"),
      llvm::cl::init("sm_90")};
  Option<int64_t> maxPrefetchBytes{
      *this, "max-prefetch-bytes",
      llvm::cl::desc("Bound on the gathered matrices one rank holds at once; "
                     "lowers a step's prefetch_count to fit (0: no bound)"),
      llvm::cl::init(0)};
  Option<int64_t> nsStackBytes{
      *this, "ns-stack-bytes",
      llvm::cl::desc("Stack an owner's same-shape matrices of a round into "
                     "one batched Newton-Schulz call up to this many bytes "
                     "(muon-expand-step's option; 0: one call per matrix; "
                     "-1, the default: 64 MiB for target=cuda, 0 for "
                     "target=cpu)"),
      llvm::cl::init(-1)};
  Option<bool> checkOutputOnce{
      *this, "check-output-once",
      llvm::cl::desc("Verify the output of the three conversions to runtime "
                     "calls once, after the last (muon-check-output), not "
                     "after each: each check verifies the whole step. For a "
                     "pass manager that does not verify after every pass "
                     "(--verify-each=false), whose verifier would otherwise "
                     "report such IR first without naming the pass; "
                     "runMuonToLLVMPipeline sets it"),
      llvm::cl::init(false)};
};

/// Why `options` are not a valid muon-to-llvm pipeline, with the options
/// named as in the textual form (`max-prefetch-bytes = -1 must be ...`);
/// empty when they are valid.
std::string invalidMuonToLLVMOption(const MuonToLLVMOptions &options);

/// Adds the passes that take a module with `muon.step` (or already expanded
/// SPMD code) to the LLVM dialect, entry points with a C interface. Built in
/// C++ from pass constructors: it needs no pass registered in the global
/// registry, only the dialects of muon::registerAllDialects. With invalid
/// options (invalidMuonToLLVMOption) it adds one pass that fails with that
/// reason at the module, naming muon-to-llvm.
void buildMuonToLLVMPipeline(mlir::OpPassManager &pm,
                             const MuonToLLVMOptions &options);

/// Runs the muon-to-llvm pipeline on `module` with the IR verified once, at
/// the end, instead of after each of its passes: that verification was
/// about 40% of the lowering of a large step (405B on 512 ranks: 7.0 s with
/// it, 4.2 s without), and every muon pass that generates IR verifies its
/// own output already (the three conversions to runtime calls together:
/// it sets check-output-once). A module that does not verify at the end is
/// an internal error (a compiler bug) at the offending op. muon-run, the C
/// API (muonRunMuonToLLVMPipeline) and the Python package lower through
/// this.
mlir::LogicalResult runMuonToLLVMPipeline(mlir::ModuleOp module,
                                          const MuonToLLVMOptions &options);

/// Where target=cuda finds the CUDA toolkit (ptxas): $MUON_CUDA_PATH,
/// $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda.
std::string cudaToolkitPath();

/// Whether LLVM's NVPTX backend knows `chip` as a processor ("sm_90",
/// "sm_90a"); true when this LLVM has no NVPTX backend (ptxas judges).
bool isKnownCudaChip(llvm::StringRef chip);

/// Registers `muon-to-llvm` as a named pipeline (muon-opt --muon-to-llvm).
void registerMuonToLLVMPipeline();

} // namespace muon

#endif // MUON_CONVERSION_PASSES_H
