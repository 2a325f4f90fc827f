//===- InitAll.h - Register the project's dialects and passes ---*- C++ -*-===//
//
// The entry points a host compiler calls to use this project:
//
//   mlir::DialectRegistry registry;
//   muon::registerAllDialects(registry);   // dist, muon + what lowering needs
//   muon::registerAllPasses();              // optional: for textual pipelines
//
// Building and running the pipeline in C++ (buildMuonToLLVMPipeline) needs
// only the dialect registration.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_INITALL_H
#define MUON_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace muon {

/// Registers the project's dialects, plus the upstream dialects and
/// interface models the muon-to-llvm pipeline needs (bufferization and
/// deallocation models of arith/func/linalg/scf/tensor/cf/memref; shard,
/// the input of convert-shard-to-dist).
void registerAllDialects(mlir::DialectRegistry &registry);

/// What target=cuda needs beyond the step's dialects: the gpu and NVVM
/// dialects, the interfaces convert-gpu-to-nvvm lowers the kernels
/// through, the NVVM target that serialises them, and the translation of
/// gpu.binary and kernel launches to LLVM IR. Part of registerAllDialects.
void registerCudaTarget(mlir::DialectRegistry &registry);

/// Registers the project's passes and pipelines with the global registry.
void registerAllPasses();

/// Registers the project's dialects plus the upstream dialects, extensions and
/// passes a user of muon-opt needs around them.
void registerToolDialects(mlir::DialectRegistry &registry);
void registerToolPasses();

} // namespace muon

#endif // MUON_INITALL_H
