//===- ObjectCode.h - A lowered step to machine code ------------*- C++ -*-===//
//
// Private to MuonExecution: turns a module in the LLVM dialect into object
// code for this host (the kernels optimised, the glue not: ObjectCode.cpp),
// and several objects into one file and back (muon-run's launcher writes
// the file its ranks load).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_LIB_EXECUTION_OBJECTCODE_H
#define MUON_LIB_EXECUTION_OBJECTCODE_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace muon {
namespace exec {

using ObjectList = std::vector<std::unique_ptr<llvm::MemoryBuffer>>;

/// The function that runs a compiled module's static constructors
/// (kInitPrefix + entry; absent when it has none): called once before the
/// entry's first call.
inline constexpr const char *kInitPrefix = "__muon_init_";

/// Compiles `module` for this host, with `_mlir__mlir_ciface_<entry>`, the
/// packed wrapper of the entry's C interface, and the module's static
/// constructors called from kInitPrefix + entry. Functions the lowering marked
/// optnone (the step's glue) are compiled without optimisation; the others
/// (the kernels) are optimised and compiled at `optLevel`, in an object of
/// their own.
llvm::Expected<ObjectList> compileToObjects(mlir::ModuleOp module,
                                            const std::string &entry,
                                            int optLevel);

/// The objects as the bytes of one file: a tag, the length and bytes of
/// `key` (what the file holds the code of; muon-run's cache key, or
/// empty), the count, then each object's size, checksum (xxh3) and bytes.
std::string packObjects(const ObjectList &objects, llvm::StringRef key);

/// The objects of a file packObjects wrote, each checked against its
/// checksum, and its key in `*key` when given (empty for a file of an
/// earlier version, which had none); a plain object file (what the first
/// version wrote) is one object.
llvm::Expected<ObjectList> unpackObjects(llvm::MemoryBufferRef file,
                                         std::string *key = nullptr);

} // namespace exec
} // namespace muon

#endif // MUON_LIB_EXECUTION_OBJECTCODE_H
