//===- GpuLibrary.h - Loading the runtime's GPU libraries -----*- C++ -*-===//
//
// The GPU parts of the runtime (libmuon_runtime_cuda: Newton-Schulz;
// libmuon_runtime_nccl: the NCCL transport) are loaded on first use, so that
// libmuon_runtime.so, and every CPU step, runs on machines without CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_GPULIBRARY_H
#define MUON_RUNTIME_GPULIBRARY_H

#include "Errors.h"

#include <dlfcn.h>

#include <string>

namespace muon {
namespace rt {

/// dlopen of `file` (e.g. "libmuon_runtime_cuda.so"): the path in the
/// environment variable `envVar` when it is set (then only that one: a wrong
/// path is an error, not a silent fallback to another copy), else the file
/// beside libmuon_runtime.so (the build and install layouts both put them in
/// one directory), else the loader's search path. Null when none loads;
/// `tried` then holds the loader's reasons.
void *openGpuLibrary(const char *file, const char *envVar, std::string &tried);

/// This process's index among the ranks of its node, from the launcher's
/// environment (no collective: it picks the GPU, local rank mod devices).
int localRank();

/// The function `name` of a loaded GPU library; a fatal error naming `op`
/// and `comm` when it is missing (a library of another version).
template <typename F>
void gpuSymbol(void *handle, const char *name, F &out, const char *op,
               const char *comm) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (!out)
    fatal(op, comm,
          std::string("the GPU library has no ") + name +
              " (a library of another version?)");
}

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_GPULIBRARY_H
