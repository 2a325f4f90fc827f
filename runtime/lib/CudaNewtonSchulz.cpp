//===- CudaNewtonSchulz.cpp - Newton-Schulz of target=cuda ----------------===//
//
// The compiled step keeps its tensors in host memory (collectives go over
// MPI); Newton-Schulz, nearly all of the step's FLOPs, runs on the GPU:
// the buffer is copied to the device, orthogonalised by the GPU library
// (libmuon_runtime_cuda) and copied back. Several ranks may share one GPU.
//
// The GPU library is loaded at the first call (dlopen), so that this
// runtime, and every CPU-only step, runs on machines without CUDA.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "GpuLibrary.h"
#include "NewtonSchulz.h"
#include "State.h"
#include "Trace.h"

#include "muon/Runtime/muon_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace muon::rt;

namespace {

const char *const kOp = "newton_schulz";
const char *const kComm = "cuda";

/// The entry points of libmuon_runtime_cuda (muon_runtime_cuda.h) that the
/// runtime uses, looked up by name.
struct CudaLibrary {
  int (*deviceCount)();
  int (*setDevice)(int);
  int (*create)(void **, void *);
  const char *(*error)(const void *);
  int (*nsHost)(void *, float *, int64_t, int64_t, int64_t, int64_t,
                const double *, int64_t, double, int, int64_t);
  void *context = nullptr;
};

CudaLibrary &library() {
  static CudaLibrary lib = [] {
    CudaLibrary l{};
    std::string tried;
    void *handle = openGpuLibrary("libmuon_runtime_cuda.so",
                                  "MUON_RT_CUDA_LIBRARY", tried);
    if (!handle)
      fatal(kOp, kComm,
            "cannot load the GPU library libmuon_runtime_cuda.so (" + tried +
                "): build with the CUDA toolkit, or set "
                "MUON_RT_CUDA_LIBRARY");
    gpuSymbol(handle, "muon_cuda_device_count", l.deviceCount, kOp, kComm);
    gpuSymbol(handle, "muon_cuda_set_device", l.setDevice, kOp, kComm);
    gpuSymbol(handle, "muon_cuda_ns_create", l.create, kOp, kComm);
    gpuSymbol(handle, "muon_cuda_ns_error", l.error, kOp, kComm);
    gpuSymbol(handle, "muon_cuda_ns_host", l.nsHost, kOp, kComm);
    int devices = l.deviceCount();
    if (devices < 1)
      fatal(kOp, kComm,
            "no CUDA device on this machine (target=cuda needs an NVIDIA "
            "GPU; compile with target=cpu to run on the host)");
    int device = localRank() % devices;
    if (l.setDevice(device) != 0 || l.create(&l.context, nullptr) != 0)
      fatal(kOp, kComm,
            "GPU " + std::to_string(device) + ": " + l.error(nullptr));
    return l;
  }();
  return lib;
}

} // namespace

extern "C" void _mlir_ciface_muon_rt_newton_schulz_cuda(
    muon_rt_memref *xm, muon_rt_memref *outm, int64_t steps,
    muon_rt_f64_array *c, double eps, int64_t precision) {
  NsCall call = readNsCall(xm, outm, steps, c, kOp);
  if (precision != 0 && precision != 1)
    fatal(kOp, kComm,
          "precision " + std::to_string(precision) +
              " (0 = fp32, 1 = bf16 expected)");
  if (call.m == 0 || call.n == 0)
    return;
  // The library works in place on host memory: start from the operand in
  // the result buffer (a host copy, small beside the device transfers).
  if (call.out.data != call.x.data)
    std::memcpy(call.out.data, call.x.data,
                sizeof(float) * call.batch * call.m * call.n);
  CudaLibrary &lib = library();
  double start = tracing() ? traceNow() : 0.0;
  // Batches of at most 65535 matrices per call (the library's limit).
  for (int64_t first = 0; first < call.batch; first += 65535) {
    int64_t count = std::min<int64_t>(65535, call.batch - first);
    if (lib.nsHost(lib.context, call.out.data + first * call.m * call.n, count,
                   call.m, call.n, steps, call.coeffs.data(),
                   static_cast<int64_t>(call.coeffs.size()), eps,
                   static_cast<int>(precision), /*tile=auto*/ 0) != 0)
      fatal(kOp, kComm,
            call.x.shapeStr() + ": " + lib.error(lib.context));
  }
  countNsMatrices(call.batch, call.m, call.n, steps);
  if (tracing())
    traceEvent(TraceLane::Compute, "newton_schulz " + call.x.shapeStr(),
               start, traceNow());
}
