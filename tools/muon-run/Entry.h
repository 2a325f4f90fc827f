//===- Entry.h - The JIT-compiled entry point of a step -------*- C++ -*-===//
//
// Compiles the lowered module with MLIR's ExecutionEngine and calls the
// entry through its C interface with host buffers as memref descriptors.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_ENTRY_H
#define MUON_TOOLS_MUONRUN_ENTRY_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace muon {
namespace run {

class CompiledEntry {
public:
  /// JIT-compiles `module` at `optLevel` and looks the entry up, so that
  /// code generation happens now, not on the first call. Returns null and
  /// sets `error` on failure.
  static std::unique_ptr<CompiledEntry>
  create(mlir::ModuleOp module, const std::string &entry, int optLevel,
         std::string &error);

  /// Calls the entry: one contiguous row-major f32 buffer per argument,
  /// then one per result (out-buffers of the caller's shape). Returns the
  /// error text ("" on success).
  std::string invoke(std::vector<std::vector<float>> &args,
                     const std::vector<std::vector<int64_t>> &argShapes,
                     std::vector<std::vector<float>> &results,
                     const std::vector<std::vector<int64_t>> &resultShapes);

private:
  CompiledEntry(std::unique_ptr<mlir::ExecutionEngine> engine,
                std::string symbol)
      : engine(std::move(engine)), symbol(std::move(symbol)) {}

  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::string symbol;
};

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_ENTRY_H
