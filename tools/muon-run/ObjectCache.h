//===- ObjectCache.h - Compiled steps kept across runs --------*- C++ -*-===//
//
// The launcher compiles a step once per job (every rank loads that object);
// the object is also kept in a cache directory under a key made of the
// lowered module's text, the optimisation level, the LLVM version and the
// host CPU (the JIT generates code for this CPU's features), so that
// running the same step again loads it instead of compiling it.
// MUON_RUN_CACHE names the directory (`off` or `0` disables the cache); the
// default is $XDG_CACHE_HOME/muon-run, else $HOME/.cache/muon-run.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_OBJECTCACHE_H
#define MUON_TOOLS_MUONRUN_OBJECTCACHE_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace muon {
namespace run {

/// The key of the object `lowered` compiles to at `optLevel` on this
/// machine (32 hex digits: a 128-bit digest). The object file holds it too
/// (a renamed entry, another step's code, is not loaded), and ranks compare
/// it with the launcher's before loading the launcher's object.
std::string objectKey(mlir::ModuleOp lowered, int optLevel);

/// The cache file for `key` (an absolute path), or "" when the cache is off
/// or its directory cannot be created (then `note` says why). The file may
/// not exist yet.
std::string cachedObjectPath(const std::string &key, std::string &note);

/// Whether `path` holds an object file LLVM can read, compiled under `key`
/// (a truncated or foreign cache entry, or another step's, is not used).
bool isReadableObject(const std::string &path, const std::string &key);

/// Copies `objectFile` into the cache as `cachePath`: written and synced
/// under a private name, then renamed (a concurrent launcher sees the whole
/// file or none). Returns whether it did.
bool storeInCache(const std::string &objectFile, const std::string &cachePath);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_OBJECTCACHE_H
