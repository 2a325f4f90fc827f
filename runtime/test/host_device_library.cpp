//===- host_device_library.cpp - The GPU library's memory calls on the host
//===//
//
// A stand-in for libmuon_runtime_cuda whose "device" is host memory: its
// allocations are malloc, its copies memcpy (the strided one row by row, as
// cudaMemcpy2D defines it), its scaling a loop. Loaded through
// MUON_RT_CUDA_LIBRARY, it lets a machine without a GPU run the runtime's
// target=cuda paths for collectives (packing on the device, host staging
// for MPI, scratch freed in order) on data: test/Runtime/collectives.test.
// What needs a real GPU (Newton-Schulz, generated kernels) fails with a
// message naming this library.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

namespace {
const char *lastError = "";
int unsupported(const char *what) {
  lastError = what;
  return 1;
}
} // namespace

extern "C" {

int muon_cuda_device_count(void) { return 1; }
int muon_cuda_set_device(int) { return 0; }
int muon_cuda_ns_create(void **out, void *) {
  *out = nullptr;
  return 0;
}
const char *muon_cuda_ns_error(const void *) { return lastError; }
const char *muon_cuda_device_error(void) { return lastError; }

int muon_cuda_ns(void *, float *, int64_t, int64_t, int64_t, int64_t,
                 const double *, int64_t, double, int, int64_t) {
  return unsupported("Newton-Schulz needs a GPU (host stand-in library)");
}
int muon_cuda_ns_host(void *, float *, int64_t, int64_t, int64_t, int64_t,
                      const double *, int64_t, double, int, int64_t) {
  return unsupported("Newton-Schulz needs a GPU (host stand-in library)");
}

/// The blocks handed out as "device" memory (start -> bytes), so that a
/// pointer elsewhere reads as host memory.
std::map<const char *, size_t> &blocks() {
  static std::map<const char *, size_t> b;
  return b;
}

int muon_cuda_alloc(void **out, size_t bytes) {
  *out = std::malloc(bytes ? bytes : 1);
  if (!*out)
    return unsupported("out of memory");
  blocks()[static_cast<const char *>(*out)] = bytes ? bytes : 1;
  return 0;
}
int muon_cuda_free(void *ptr) {
  blocks().erase(static_cast<const char *>(ptr));
  std::free(ptr);
  return 0;
}
int muon_cuda_pointer_device(const void *ptr, int *device) {
  auto *p = static_cast<const char *>(ptr);
  auto it = blocks().upper_bound(p);
  bool inBlock = it != blocks().begin() &&
                 (--it, p < it->first + it->second);
  *device = inBlock ? 0 : -1;
  return 0;
}
int muon_cuda_copy(void *dst, const void *src, size_t bytes, int kind) {
  if (kind < 1 || kind > 3)
    return unsupported("copy kind (1, 2 or 3 expected)");
  if (bytes)
    std::memcpy(dst, src, bytes);
  return 0;
}
int muon_cuda_copy_rows(void *dst, size_t dstPitch, const void *src,
                        size_t srcPitch, size_t rowBytes, size_t rows) {
  if (rowBytes > dstPitch || rowBytes > srcPitch)
    return unsupported("a row wider than its pitch");
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char *>(dst) + r * dstPitch,
                static_cast<const char *>(src) + r * srcPitch, rowBytes);
  return 0;
}
int muon_cuda_scale(float *x, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i)
    x[i] *= s;
  return 0;
}
int muon_cuda_synchronize(void) { return 0; }

int muon_cuda_module_load(void **module, const void *) {
  *module = nullptr;
  return unsupported("generated kernels need a GPU (host stand-in library)");
}
int muon_cuda_module_unload(void *) { return 0; }
int muon_cuda_module_function(void **function, void *, const char *) {
  *function = nullptr;
  return unsupported("generated kernels need a GPU (host stand-in library)");
}
int muon_cuda_launch(void *, int64_t, int64_t, int64_t, int64_t, int64_t,
                     int64_t, int32_t, void *, void **) {
  return unsupported("generated kernels need a GPU (host stand-in library)");
}

} // extern "C"
