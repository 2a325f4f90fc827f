//===- CudaLibrary.h - libmuon_runtime_cuda, loaded on first use -*- C++ -*-===//
//
// The entry points of the GPU compute library (muon_runtime_cuda.h and
// muon_runtime_cuda_device.h) that the runtime calls, looked up by name
// when the first target=cuda call needs them: Newton-Schulz, device
// memory, copies and the compiler's kernels. Loading also picks this
// rank's GPU (local rank mod device count) and makes its Newton-Schulz
// context; a failure is the runtime's fatal error naming `op`.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CUDALIBRARY_H
#define MUON_RUNTIME_CUDALIBRARY_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace muon {
namespace rt {

struct CudaLibrary {
  int (*deviceCount)();
  int (*setDevice)(int);
  int (*create)(void **, void *);
  const char *(*error)(const void *);
  int (*ns)(void *, float *, int64_t, int64_t, int64_t, int64_t,
            const double *, int64_t, double, int, int64_t);
  int (*nsHost)(void *, float *, int64_t, int64_t, int64_t, int64_t,
                const double *, int64_t, double, int, int64_t);
  const char *(*deviceError)();
  int (*alloc)(void **, size_t);
  int (*free)(void *);
  int (*pointerDevice)(const void *, int *);
  int (*copy)(void *, const void *, size_t, int);
  int (*copyRows)(void *, size_t, const void *, size_t, size_t, size_t);
  int (*scale)(float *, int64_t, float);
  int (*synchronize)();
  int (*moduleLoad)(void **, const void *);
  int (*moduleUnload)(void *);
  int (*moduleFunction)(void **, void *, const char *);
  int (*launch)(void *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                int32_t, void *, void **);
  void *context = nullptr; ///< The Newton-Schulz context.
  int device = 0;          ///< This rank's GPU.
};

/// The loaded library; a fatal error on `op` (communicator "cuda") when it
/// cannot be loaded or no GPU answers.
CudaLibrary &cudaLibrary(const char *op);

/// A call of the device part that returned non-zero: the fatal error on
/// `op`, with the library's reason.
[[noreturn]] void cudaFailed(const char *op, const std::string &what);

/// Copy kinds of muon_cuda_copy.
enum CudaCopy { ToDevice = 1, ToHost = 2, DeviceToDevice = 3 };

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_CUDALIBRARY_H
