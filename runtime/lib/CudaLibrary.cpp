//===- CudaLibrary.cpp - Loading libmuon_runtime_cuda ---------------------===//
//
// The GPU library is loaded at the first target=cuda call (dlopen), so that
// this runtime, and every CPU-only step, runs on machines without CUDA.
//
//===----------------------------------------------------------------------===//

#include "CudaLibrary.h"
#include "Errors.h"
#include "GpuLibrary.h"

using namespace muon::rt;

namespace {
const char *const kComm = "cuda";
} // namespace

CudaLibrary &muon::rt::cudaLibrary(const char *op) {
  static CudaLibrary lib = [op] {
    CudaLibrary l{};
    std::string tried;
    void *handle = openGpuLibrary("libmuon_runtime_cuda.so",
                                  "MUON_RT_CUDA_LIBRARY", tried);
    if (!handle)
      fatal(op, kComm,
            "cannot load the GPU library libmuon_runtime_cuda.so (" + tried +
                "): build with the CUDA toolkit, or set "
                "MUON_RT_CUDA_LIBRARY");
    gpuSymbol(handle, "muon_cuda_device_count", l.deviceCount, op, kComm);
    gpuSymbol(handle, "muon_cuda_set_device", l.setDevice, op, kComm);
    gpuSymbol(handle, "muon_cuda_ns_create", l.create, op, kComm);
    gpuSymbol(handle, "muon_cuda_ns_error", l.error, op, kComm);
    gpuSymbol(handle, "muon_cuda_ns", l.ns, op, kComm);
    gpuSymbol(handle, "muon_cuda_ns_host", l.nsHost, op, kComm);
    gpuSymbol(handle, "muon_cuda_device_error", l.deviceError, op, kComm);
    gpuSymbol(handle, "muon_cuda_alloc", l.alloc, op, kComm);
    gpuSymbol(handle, "muon_cuda_free", l.free, op, kComm);
    gpuSymbol(handle, "muon_cuda_pointer_device", l.pointerDevice, op,
              kComm);
    gpuSymbol(handle, "muon_cuda_copy", l.copy, op, kComm);
    gpuSymbol(handle, "muon_cuda_copy_rows", l.copyRows, op, kComm);
    gpuSymbol(handle, "muon_cuda_scale", l.scale, op, kComm);
    gpuSymbol(handle, "muon_cuda_synchronize", l.synchronize, op, kComm);
    gpuSymbol(handle, "muon_cuda_module_load", l.moduleLoad, op, kComm);
    gpuSymbol(handle, "muon_cuda_module_unload", l.moduleUnload, op, kComm);
    gpuSymbol(handle, "muon_cuda_module_function", l.moduleFunction, op,
              kComm);
    gpuSymbol(handle, "muon_cuda_launch", l.launch, op, kComm);
    int devices = l.deviceCount();
    if (devices < 1)
      fatal(op, kComm,
            "no CUDA device on this machine (target=cuda needs an NVIDIA "
            "GPU; compile with target=cpu to run on the host)");
    l.device = localRank() % devices;
    if (l.setDevice(l.device) != 0 || l.create(&l.context, nullptr) != 0)
      fatal(op, kComm,
            "GPU " + std::to_string(l.device) + ": " + l.error(nullptr));
    return l;
  }();
  return lib;
}

void muon::rt::cudaFailed(const char *op, const std::string &what) {
  fatal(op, kComm, what + ": " + cudaLibrary(op).deviceError());
}
