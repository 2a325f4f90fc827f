//===- CudaNewtonSchulz.cpp - Newton-Schulz of target=cuda ----------------===//
//
// Newton-Schulz, nearly all of the step's FLOPs, on the GPU library
// (libmuon_runtime_cuda). Inside a target=cuda step (muon_rt_cuda_step_begin
// .. end) the buffers are in device memory and the call is queued on the
// stream; outside one (a caller with host buffers) the buffer is copied to
// the device, orthogonalised and copied back.
//
//===----------------------------------------------------------------------===//

#include "CudaLibrary.h"
#include "CudaStep.h"
#include "Errors.h"
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
  CudaLibrary &lib = cudaLibrary(kOp);
  bool onDevice = deviceResident();
  // The library works in place: start from the operand in the result
  // buffer.
  size_t bytes = sizeof(float) * call.batch * call.m * call.n;
  if (call.out.data != call.x.data) {
    if (!onDevice)
      std::memcpy(call.out.data, call.x.data, bytes);
    else if (lib.copy(call.out.data, call.x.data, bytes, DeviceToDevice))
      cudaFailed(kOp, call.x.shapeStr());
  }
  double start = tracing() ? traceNow() : 0.0;
  // Batches of at most 65535 matrices per call (the library's limit).
  for (int64_t first = 0; first < call.batch; first += 65535) {
    int64_t count = std::min<int64_t>(65535, call.batch - first);
    if ((onDevice ? lib.ns : lib.nsHost)(
            lib.context, call.out.data + first * call.m * call.n, count,
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
