/*===-- muon-c/Pipeline.h - C API: the muon-to-llvm pipeline ------*- C -*-===*\
|*                                                                            *|
|* Builds the pipeline that takes a module with `muon.step` ops to the LLVM   *|
|* dialect (C-interface entry points over the runtime). See docs/c-api.md.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MUON_C_PIPELINE_H
#define MUON_C_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The options of the muon-to-llvm pipeline (the C form of the C++
/// muon::MuonToLLVMOptions and of `--muon-to-llvm="target=... assign-owners=..."`).
/// Start from muonLLVMPipelineOptionsDefault() and change fields: a
/// zero-initialised struct has an empty (unknown) target.
typedef struct MuonLLVMPipelineOptions {
  /// Code generation target, by name: "cpu" (host code over the MPI +
  /// CBLAS runtime) or "cuda" (tensors in GPU memory). The string is only
  /// read during the call it is passed to.
  MlirStringRef target;
  /// Run muon-assign-owners first (steps with explicit owners keep them).
  bool assignOwners;
  /// Stack an owner's same-shape matrices of a round into one batched
  /// Newton-Schulz call up to this many bytes (4 per element): 0, one call
  /// per matrix; -1, by target (64 MiB for "cuda", 0 for "cpu"). Below -1
  /// is refused like an unknown target.
  int64_t nsStackBytes;
  /// Merge a round's gathers and scatters over one communicator into
  /// batched calls (muon-expand-step's batch-collectives); false keeps one
  /// rooted call each.
  bool batchCollectives;
  /// Bound on the gathered matrices one rank holds at once, in bytes: a
  /// step's prefetch_count is lowered until its rounds fit; 0, no bound.
  /// Below 0 is refused like an unknown target.
  int64_t maxPrefetchBytes;
  /// Free each buffer after its last use (muon-place-deallocations); false:
  /// MLIR's ownership-based deallocation, buffers freed at the end of their
  /// block.
  bool placeDeallocations;
  /// With target "cuda": the GPU architecture the generated kernels are
  /// compiled for (ptxas's -arch, e.g. "sm_90"; empty is refused). Only
  /// read during the call it is passed to.
  MlirStringRef cudaChip;
} MuonLLVMPipelineOptions;

/// The defaults (muon-opt's --muon-to-llvm): target "cpu", assignOwners
/// true, nsStackBytes -1, batchCollectives true, maxPrefetchBytes 0,
/// placeDeallocations true, cudaChip "sm_90".
MLIR_CAPI_EXPORTED MuonLLVMPipelineOptions muonLLVMPipelineOptionsDefault(void);

/// Adds the muon-to-llvm passes to `pm` (built from pass constructors: the
/// global pass registry is not needed, only muonRegisterAllDialects in the
/// context's registry). Run it on a builtin.module, e.g. with
/// mlirPassManagerRunOnOp on the module's operation, from a pass manager made
/// with mlirPassManagerCreate and mlirPassManagerGetAsOpPassManager.
///
/// Fails, adding nothing, for an unknown `options.target`, an
/// `options.nsStackBytes` below -1, a negative `options.maxPrefetchBytes` or
/// target "cuda" with an empty `options.cudaChip`;
/// then `errorCallback` (when not NULL) receives a message naming the
/// target and the available ones, or the value (in one call) with
/// `userData`.
MLIR_CAPI_EXPORTED MlirLogicalResult muonBuildMuonToLLVMPipeline(
    MlirOpPassManager pm, MuonLLVMPipelineOptions options,
    MlirStringCallback errorCallback, void *userData);

/// Runs the muon-to-llvm pipeline on `module` (a builtin.module) with the IR
/// verified once, at the end, instead of after every pass (faster on large
/// steps; the muon passes verify their own output as they go, the three
/// conversions to runtime calls once for all three). Diagnostics
/// go to the context's handlers. Fails for options
/// muonBuildMuonToLLVMPipeline refuses (reported through `errorCallback`),
/// for an operation that is not a module, or when the pipeline fails.
MLIR_CAPI_EXPORTED MlirLogicalResult muonRunMuonToLLVMPipeline(
    MlirOperation module, MuonLLVMPipelineOptions options,
    MlirStringCallback errorCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* MUON_C_PIPELINE_H */
