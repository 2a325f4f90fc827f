//===- Entry.h - The JIT-compiled entry point of a step -------*- C++ -*-===//
//
// Compiles the lowered module with MLIR's ExecutionEngine, or loads the
// object file another process compiled (the launcher compiles once for
// all ranks), and calls the entry through its packed C interface with host
// buffers as memref descriptors.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_ENTRY_H
#define MUON_TOOLS_MUONRUN_ENTRY_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
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
  /// When `objectFile` is not empty, the compiled code (packed wrappers
  /// included) is also written there for CompiledEntry::load.
  static std::unique_ptr<CompiledEntry>
  create(mlir::ModuleOp module, const std::string &entry, int optLevel,
         std::string &error, const std::string &objectFile = "");

  /// Loads an object file written by create() and looks the entry up. The
  /// runtime's symbols come from this process; memrefCopy from MLIR's C
  /// runner utilities. Returns null and sets `error` on failure.
  static std::unique_ptr<CompiledEntry> load(const std::string &objectFile,
                                             const std::string &entry,
                                             std::string &error);

  /// Calls the entry: one contiguous row-major f32 buffer per argument,
  /// then one per result (out-buffers of the caller's shape). Returns the
  /// error text ("" on success).
  std::string invoke(std::vector<std::vector<float>> &args,
                     const std::vector<std::vector<int64_t>> &argShapes,
                     std::vector<std::vector<float>> &results,
                     const std::vector<std::vector<int64_t>> &resultShapes);

private:
  CompiledEntry() = default;

  // One of the two owns the code; `packed` is the entry's packed wrapper
  // (void(void **): one pointer per argument and result descriptor).
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*packed)(void **) = nullptr;
};

/// The path of MLIR's C runner utilities (memrefCopy) that compiled steps
/// link against: MUON_C_RUNNER_UTILS, else the build machine's.
std::string cRunnerUtilsPath();

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_ENTRY_H
