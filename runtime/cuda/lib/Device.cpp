//===- Device.cpp - Device memory, copies and generated kernels ----------===//
//
// muon_runtime_cuda_device.h over the CUDA runtime API. Kernels come from
// the image the compiler embedded (cudaLibraryLoadData takes a cubin or
// PTX), so the library needs no driver-API link of its own.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime_cuda_device.h"

#include "Kernels.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace {
thread_local std::string lastError;

/// 0 on success; else the error text, named after `what`, and 1.
int check(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return 0;
  lastError = std::string(what) + ": " + cudaGetErrorString(err);
  cudaGetLastError(); // a non-sticky error must not reach the next check
  return 1;
}
} // namespace

extern "C" {

const char *muon_cuda_device_error(void) { return lastError.c_str(); }

int muon_cuda_alloc(void **out, size_t bytes) {
  *out = nullptr;
  // The default pool gives freed memory back to the system at every
  // synchronisation (release threshold 0): keep it for the next step.
  thread_local int poolDevice = -1;
  int device = 0;
  if (check(cudaGetDevice(&device), "cudaGetDevice"))
    return 1;
  if (device != poolDevice) {
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    if (check(cudaDeviceGetDefaultMemPool(&pool, device),
              "cudaDeviceGetDefaultMemPool") ||
        check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                      &keep),
              "cudaMemPoolSetAttribute"))
      return 1;
    poolDevice = device;
  }
  if (bytes == 0)
    bytes = 1; // a distinct pointer for an empty buffer, as malloc gives
  return check(cudaMallocAsync(out, bytes, cudaStreamLegacy),
               "cudaMallocAsync");
}

int muon_cuda_free(void *ptr) {
  if (!ptr)
    return 0;
  return check(cudaFreeAsync(ptr, cudaStreamLegacy), "cudaFreeAsync");
}

int muon_cuda_pointer_device(const void *ptr, int *device) {
  cudaPointerAttributes attributes;
  if (check(cudaPointerGetAttributes(&attributes, ptr),
            "cudaPointerGetAttributes"))
    return 1;
  bool onDevice = attributes.type == cudaMemoryTypeDevice ||
                  attributes.type == cudaMemoryTypeManaged;
  *device = onDevice ? attributes.device : -1;
  return 0;
}

int muon_cuda_copy(void *dst, const void *src, size_t bytes, int kind) {
  if (bytes == 0)
    return 0;
  switch (kind) {
  case 1:
    return check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
                 "cudaMemcpy (to device)");
  case 2:
    return check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
                 "cudaMemcpy (to host)");
  case 3:
    return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                 cudaStreamLegacy),
                 "cudaMemcpyAsync (device to device)");
  }
  lastError = "copy kind " + std::to_string(kind) + " (1, 2 or 3 expected)";
  return 1;
}

int muon_cuda_copy_rows(void *dst, size_t dst_pitch, const void *src,
                        size_t src_pitch, size_t row_bytes, size_t rows) {
  if (row_bytes == 0 || rows == 0)
    return 0;
  return check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes,
                                 rows, cudaMemcpyDeviceToDevice,
                                 cudaStreamLegacy),
               "cudaMemcpy2DAsync (device to device)");
}

int muon_cuda_scale(float *x, int64_t n, float s) {
  if (n <= 0)
    return 0;
  return check(muon::cuda::launchScale(x, n, s, cudaStreamLegacy),
               "the scaling kernel");
}

int muon_cuda_synchronize(void) {
  return check(cudaStreamSynchronize(cudaStreamLegacy),
               "cudaStreamSynchronize");
}

int muon_cuda_module_load(void **module, const void *image) {
  cudaLibrary_t library = nullptr;
  int status = check(cudaLibraryLoadData(&library, image, nullptr, nullptr, 0,
                                         nullptr, nullptr, 0),
                     "cudaLibraryLoadData (the step's kernels)");
  *module = library;
  return status;
}

int muon_cuda_module_unload(void *module) {
  return check(cudaLibraryUnload(static_cast<cudaLibrary_t>(module)),
               "cudaLibraryUnload");
}

int muon_cuda_module_function(void **function, void *module,
                              const char *name) {
  cudaKernel_t kernel = nullptr;
  int status = check(
      cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(module), name),
      (std::string("cudaLibraryGetKernel (") + name + ")").c_str());
  *function = kernel;
  return status;
}

int muon_cuda_launch(void *function, int64_t gx, int64_t gy, int64_t gz,
                     int64_t bx, int64_t by, int64_t bz, int32_t shared,
                     void *stream, void **params) {
  dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
            static_cast<unsigned>(gz));
  dim3 block(static_cast<unsigned>(bx), static_cast<unsigned>(by),
             static_cast<unsigned>(bz));
  cudaStream_t s =
      stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  return check(cudaLaunchKernel(reinterpret_cast<const void *>(function), grid,
                                block, params, static_cast<size_t>(shared), s),
               "cudaLaunchKernel");
}

} // extern "C"
