//===- Passes.td - Lowering the step to the runtime and LLVM -*- tablegen -*-===//

#ifndef MUON_CONVERSION_PASSES_TD
#define MUON_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

// The code generation target (muon/Conversion/Target.h), shared by the
// passes whose lowering depends on it and by the muon-to-llvm pipeline.
defvar targetOptions = [
  Option<"target", "target", "::muon::Target", "::muon::Target::Cpu",
         "Code generation target",
         [{::llvm::cl::values(clEnumValN(::muon::Target::Cpu, "cpu",
             "host code over the MPI + CBLAS runtime"),
           clEnumValN(::muon::Target::Cuda, "cuda",
             "Newton-Schulz on an NVIDIA GPU (libmuon_runtime_cuda), the "
             "rest on the host over MPI"))}]>
];

def ConvertMuonToLinalg : Pass<"convert-muon-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower muon.momentum_update and muon.apply_update to "
                "elementwise linalg";
  let description = [{
    Runs after `muon-expand-step`, on local tensors, for every target:
    `muon.momentum_update` and `muon.apply_update` become one elementwise
    `linalg.generic` each, with the exact formulas of the step semantics
    (lerp written M + w (G - M)). Only f32 tensors are lowered; anything
    else is an error at the op.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvertMuonToRuntime : Pass<"convert-muon-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower muon.newton_schulz to the target's runtime call";
  let description = [{
    Runs after `muon-expand-step`, on local tensors. For `target=cpu`,
    `muon.newton_schulz` becomes a copy of the operand into a fresh buffer
    and `muon_rt_newton_schulz` on it (in place, CBLAS GEMMs, counted in the
    runtime's NS counters). Only f32 tensors and `in f32` Newton-Schulz are
    lowered; anything else is an error at the op. For `target=cuda`, the
    same copy and `muon_rt_newton_schulz_cuda` on it: the runtime stages the
    buffer through the GPU, `in bf16` on tensor cores (fp32 accumulation),
    `in f32` in exact fp32 (no TF32); other compute types are an error. A
    `muon.step` still present is an error (run muon-expand-step first).
  }];
  let options = targetOptions;
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvertDistToRuntime : Pass<"convert-dist-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower dist ops on local tensors to runtime calls; localise "
                "function boundaries";
  let description = [{
    A dialect conversion (patterns in muon/Conversion/DistToRuntime):

    * Every function argument / result of `!dist.tensor` type becomes the
      rank's local tensor (`dist.to_local` / `dist.from_local` at the
      boundary fold away; a `dist.from_local` nobody reads is dropped). For
      each such argument the function first calls `muon_rt_check_arg` with
      the local shape of every rank, so a wrong shard or a world size that
      does not match the mesh stops the job before any collective.
    * The communicators the function uses are created at its top, in one
      order on every rank (`muon_rt_comm` is collective the first time).
    * `dist.rank` / `dist.coord` -> world rank / index in the communicator.
    * Collectives -> the target's runtime calls on buffers
      (`bufferization.to_buffer` of the operand, a fresh result buffer),
      with the per-member extents along the split dim resolved here from the
      chunk rule, `sizes` or `weights`.
    * `dist.mesh` and `dist.flat_group` are removed once nothing uses them.

    Asynchronous collectives (`!dist.token`), `dist.redistribute`, and
    `dist.to_local`/`dist.from_local` away from a function boundary are
    reported as errors: nothing produces them before this pass today.
  }];
  let options = targetOptions;
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::tensor::TensorDialect"];
}

#endif // MUON_CONVERSION_PASSES_TD
