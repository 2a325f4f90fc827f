//===- CudaStep.cpp - Device buffers and kernels of a target=cuda step ----===//
//
// The functions a target=cuda step calls beside Newton-Schulz and the
// collectives: its start and end, and the mgpu* functions that MLIR's
// translation of gpu.binary and gpu.launch_func calls (Debian ships no
// libmlir_cuda_runtime; these are the runtime's, over the GPU library).
// Also the step heap's device blocks and the copies a host (muon-run) uses
// to hand a step device buffers.
//
//===----------------------------------------------------------------------===//

#include "CudaStep.h"
#include "CudaLibrary.h"
#include "Errors.h"

#include "muon/Runtime/muon_runtime.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

using namespace muon::rt;

namespace {
/// Nesting depth of the target=cuda steps running on this thread (one step
/// may call another public function of its module); a CPU step on another
/// thread keeps host memory.
thread_local int depth = 0;

std::mutex blocksMutex;
std::unordered_map<void *, size_t> &deviceBlocks() {
  static std::unordered_map<void *, size_t> blocks;
  return blocks;
}
/// The kernels looked up so far, per module and name.
std::mutex kernelsMutex;
std::unordered_map<void *, std::unordered_map<std::string, void *>> &
kernels() {
  static std::unordered_map<void *, std::unordered_map<std::string, void *>>
      byModule;
  return byModule;
}
} // namespace

bool muon::rt::deviceResident() { return depth > 0; }

void *muon::rt::deviceAllocate(size_t bytes) {
  CudaLibrary &lib = cudaLibrary("allocation");
  void *ptr = nullptr;
  if (lib.alloc(&ptr, bytes))
    cudaFailed("allocation",
               "a step buffer of " + std::to_string(bytes) + " bytes");
  std::lock_guard<std::mutex> lock(blocksMutex);
  deviceBlocks()[ptr] = bytes;
  return ptr;
}

bool muon::rt::deviceRelease(void *ptr, size_t &bytes) {
  {
    std::lock_guard<std::mutex> lock(blocksMutex);
    auto it = deviceBlocks().find(ptr);
    if (it == deviceBlocks().end())
      return false;
    bytes = it->second;
    deviceBlocks().erase(it);
  }
  if (cudaLibrary("free").free(ptr))
    cudaFailed("free", "a step buffer");
  return true;
}

void muon::rt::checkOnThisGpu(const std::string &what, const void *ptr) {
  CudaLibrary &lib = cudaLibrary("check_arg");
  int device = -1;
  if (lib.pointerDevice(ptr, &device))
    cudaFailed("check_arg", what);
  if (device == lib.device)
    return;
  fatal("check_arg", "cuda",
        what +
            (device < 0 ? " is in host memory"
                        : " is in the memory of GPU " + std::to_string(device)) +
            ": this rank's target=cuda step runs on GPU " +
            std::to_string(lib.device) +
            " (local rank mod device count) and takes buffers there");
}

extern "C" {

void *muon_rt_cuda_step_begin(void) {
  CudaLibrary &lib = cudaLibrary("step_begin");
  // The device is a thread's: a step called from another thread than the
  // one that loaded the library must run on this rank's GPU too.
  if (lib.setDevice(lib.device) != 0)
    fatal("step_begin", "cuda",
          "GPU " + std::to_string(lib.device) + ": " + lib.error(nullptr));
  ++depth;
  return nullptr; // the legacy default stream, Newton-Schulz's too
}

void muon_rt_cuda_step_end(void) {
  if (depth == 0)
    fatal("step_end", "cuda", "no target=cuda step is running");
  if (--depth == 0 && cudaLibrary("step_end").synchronize())
    cudaFailed("step_end", "the step's work on the GPU");
}

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  void *module = nullptr;
  if (cudaLibrary("module_load").moduleLoad(&module, data))
    cudaFailed("module_load", "the step's kernels");
  return module;
}

void mgpuModuleUnload(void *module) {
  {
    std::lock_guard<std::mutex> lock(kernelsMutex);
    kernels().erase(module);
  }
  cudaLibrary("module_unload").moduleUnload(module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  // The generated code looks a kernel up before every launch; the library
  // lookup is done once per kernel (names are the module's constants).
  std::lock_guard<std::mutex> lock(kernelsMutex);
  void *&function = kernels()[module][name];
  if (!function &&
      cudaLibrary("launch").moduleFunction(&function, module, name))
    cudaFailed("launch", std::string("kernel ") + name);
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t shared,
                      void *stream, void **params, void ** /*extra*/,
                      size_t /*paramsCount*/) {
  if (cudaLibrary("launch").launch(function, gx, gy, gz, bx, by, bz, shared,
                                   stream, params))
    cudaFailed("launch", "a kernel of the step");
}

float *muon_rt_cuda_to_device(const float *host, int64_t count) {
  CudaLibrary &lib = cudaLibrary("to_device");
  void *device = nullptr;
  size_t bytes = sizeof(float) * static_cast<size_t>(count);
  if (lib.alloc(&device, bytes) ||
      (count && lib.copy(device, host, bytes, ToDevice)))
    cudaFailed("to_device", std::to_string(count) + " floats");
  return static_cast<float *>(device);
}

void muon_rt_cuda_to_host(float *host, const float *device, int64_t count) {
  if (count && cudaLibrary("to_host").copy(
                   host, device, sizeof(float) * static_cast<size_t>(count),
                   ToHost))
    cudaFailed("to_host", std::to_string(count) + " floats");
}

void muon_rt_cuda_free(float *device) {
  if (cudaLibrary("free").free(device))
    cudaFailed("free", "a device buffer");
}

} // extern "C"
