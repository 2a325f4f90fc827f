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
#include "NewtonSchulz.h"
#include "State.h"
#include "Trace.h"

#include "muon/Runtime/muon_runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

/// libmuon_runtime_cuda.so beside this library (the build and install
/// layouts both put them in one directory).
std::string besideThisLibrary() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&besideThisLibrary), &info) ||
      !info.dli_fname)
    return "";
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return slash == std::string::npos
             ? ""
             : self.substr(0, slash + 1) + "libmuon_runtime_cuda.so";
}

/// This process's index among the ranks of its node, from the launcher's
/// environment (no collective: only owners reach Newton-Schulz).
int localRank() {
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                          "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                          "LOCAL_RANK"})
    if (const char *v = std::getenv(var))
      return std::atoi(v);
  return 0;
}

template <typename F> void symbol(void *handle, const char *name, F &out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (!out)
    fatal(kOp, kComm,
          std::string("the GPU library has no ") + name +
              " (a libmuon_runtime_cuda.so of another version?)");
}

CudaLibrary &library() {
  static CudaLibrary lib = [] {
    CudaLibrary l{};
    std::string tried;
    void *handle = nullptr;
    // An explicit MUON_RT_CUDA_LIBRARY is the only candidate: a wrong path
    // is an error, not a silent fallback to another copy.
    std::vector<std::string> candidates = {besideThisLibrary(),
                                           "libmuon_runtime_cuda.so"};
    if (const char *env = std::getenv("MUON_RT_CUDA_LIBRARY"); env && *env)
      candidates = {env};
    for (const std::string &path : candidates) {
      if (path.empty())
        continue;
      if ((handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
    }
    if (!handle)
      fatal(kOp, kComm,
            "cannot load the GPU library libmuon_runtime_cuda.so (" + tried +
                "): build with the CUDA toolkit, or set "
                "MUON_RT_CUDA_LIBRARY");
    symbol(handle, "muon_cuda_device_count", l.deviceCount);
    symbol(handle, "muon_cuda_set_device", l.setDevice);
    symbol(handle, "muon_cuda_ns_create", l.create);
    symbol(handle, "muon_cuda_ns_error", l.error);
    symbol(handle, "muon_cuda_ns_host", l.nsHost);
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
