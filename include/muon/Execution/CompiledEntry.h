//===- CompiledEntry.h - The JIT-compiled entry point of a step -*- C++ -*-===//
//
// Compiles a lowered module with LLVM's ORC JIT, or loads the object
// file another process compiled (muon-run's launcher compiles once for all
// ranks), and calls the entry through its packed C interface with host
// buffers as memref descriptors. Used by muon-run and by the C API (and so
// by the Python package).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_EXECUTION_COMPILEDENTRY_H
#define MUON_EXECUTION_COMPILEDENTRY_H

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace muon {
namespace exec {

/// One argument of the entry: a caller's row-major f32 buffer and its shape
/// (a memref), or, when `scalar` is set, an f64 value (a hyper-parameter
/// the step reads at run time).
struct BufferView {
  float *data = nullptr;
  std::vector<int64_t> shape;
  std::optional<double> scalar;
};

class CompiledEntry {
public:
  /// JIT-compiles `module` at `optLevel` and looks the entry up, so that
  /// code generation happens now, not on the first call. Returns null and
  /// sets `error` on failure.
  /// When `objectFile` is not empty, the compiled code (packed wrappers
  /// included) is also written there for CompiledEntry::load, with
  /// `objectKey` (what names this step's code, e.g. a cache key) inside.
  static std::unique_ptr<CompiledEntry>
  create(mlir::ModuleOp module, const std::string &entry, int optLevel,
         std::string &error, const std::string &objectFile = "",
         const std::vector<std::string> &extraLibraries = {},
         const std::string &objectKey = "");

  /// Loads an object file written by create() and looks the entry up. The
  /// runtime's symbols (memrefCopy included) come from this process. When
  /// `objectKey` is not empty, a file that holds another key (another
  /// step's code under this one's name) is refused. Returns null and sets
  /// `error` on failure.
  static std::unique_ptr<CompiledEntry> load(const std::string &objectFile,
                                             const std::string &entry,
                                             std::string &error,
                                             const std::string &objectKey = "");

  /// Whether `objectFile` holds compiled code create() could have written
  /// (every object in it parses); a damaged or foreign file does not, nor,
  /// when `objectKey` is not empty, one that holds another key.
  static bool isReadable(const std::string &objectFile,
                         const std::string &objectKey = "");

  /// Calls the entry: one contiguous row-major f32 buffer per argument,
  /// then one per result (out-buffers of the caller's shape). Argument a is
  /// the f64 `argScalars[a]` instead where that is set (`argScalars` empty:
  /// no scalars). Returns the error text ("" on success).
  std::string invoke(std::vector<std::vector<float>> &args,
                     const std::vector<std::vector<int64_t>> &argShapes,
                     std::vector<std::vector<float>> &results,
                     const std::vector<std::vector<int64_t>> &resultShapes,
                     const std::vector<std::optional<double>> &argScalars = {});

  /// The same over the caller's buffers, arguments then results, without
  /// copying them.
  void invoke(const std::vector<BufferView> &buffers);

  /// The address of a symbol of the compiled code (a global such as the
  /// role table __muon_roles_<entry>), or null when there is none.
  const void *lookupSymbol(const std::string &name);

private:
  CompiledEntry() = default;
  /// Links compiled objects into a JIT with the process's symbols and
  /// those of `libraries`, and looks the entry up.
  static std::unique_ptr<CompiledEntry>
  fromObjects(const std::vector<std::unique_ptr<llvm::MemoryBuffer>> &objects,
              const std::vector<std::string> &libraries,
              const std::string &entry, std::string &error);

  // Owns the code; `packed` is the entry's packed wrapper (void(void **):
  // one pointer per argument and result descriptor).
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*packed)(void **) = nullptr;
  /// The module's static constructors (target=cuda: loading the kernels),
  /// run once, before the first call; null when there are none.
  void (*init)() = nullptr;
  std::once_flag initOnce;
};

/// Libraries the compiled code may call besides the process's symbols: the
/// environment's MUON_C_RUNNER_UTILS when set (a library of MLIR C runner
/// utilities), else none. The runtime provides memrefCopy, the one utility
/// compiled steps call.
std::vector<std::string> extraLibrariesFromEnvironment();

} // namespace exec
} // namespace muon

#endif // MUON_EXECUTION_COMPILEDENTRY_H
