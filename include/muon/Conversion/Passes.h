//===- Passes.h - Lowering the step to the runtime and LLVM ----*- C++ -*-===//

#ifndef MUON_CONVERSION_PASSES_H
#define MUON_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace muon {

#define GEN_PASS_DECL
#include "muon/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "muon/Conversion/Passes.h.inc"

/// Options of the `muon-to-llvm` pipeline.
struct MuonToLLVMOptions {
  std::string target = "cpu";
  /// Leave out muon-assign-owners (the input already has owners).
  bool assignOwners = true;
};

/// Adds the passes that take a module with `muon.step` (or already expanded
/// SPMD code) to the LLVM dialect, entry points with a C interface. Fails
/// (with a message in `error`) for an unknown target.
mlir::LogicalResult buildMuonToLLVMPipeline(mlir::OpPassManager &pm,
                                            const MuonToLLVMOptions &options,
                                            std::string &error);

/// Registers `muon-to-llvm` as a named pipeline (muon-opt --muon-to-llvm).
void registerMuonToLLVMPipeline();

} // namespace muon

#endif // MUON_CONVERSION_PASSES_H
