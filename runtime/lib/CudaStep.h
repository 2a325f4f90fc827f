//===- CudaStep.h - The buffers of a target=cuda step ----------*- C++ -*-===//
//
// Between muon_rt_cuda_step_begin and muon_rt_cuda_step_end (which a
// target=cuda step calls first and last) every buffer the runtime is
// handed is in device memory: the step's heap allocates there, Newton-
// Schulz runs in place on the device, and a collective works on host
// mirrors of its buffers (HostMirror), written back when it completes.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CUDASTEP_H
#define MUON_RUNTIME_CUDASTEP_H

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace muon {
namespace rt {

/// Whether a target=cuda step is running on this thread (its buffers are on
/// the device).
bool deviceResident();

/// Step heap blocks in device memory (deviceResident() only).
void *deviceAllocate(size_t bytes);
/// Frees `ptr` if it is a device block of the step heap; false otherwise.
bool deviceRelease(void *ptr, size_t &bytes);

/// A host copy of `count` floats of device memory at `device`, made when
/// constructed; copied back when destroyed if `writeBack`.
class HostMirror {
public:
  /// `op` names the collective in errors.
  HostMirror(float *device, size_t count, bool writeBack, std::string op);
  ~HostMirror();
  HostMirror(const HostMirror &) = delete;
  HostMirror &operator=(const HostMirror &) = delete;
  float *data() { return host.data(); }

private:
  float *on;
  std::vector<float> host;
  bool writeBack;
  std::string op; // the mirror outlives the call that named it
};

using Mirrors = std::vector<std::shared_ptr<HostMirror>>;

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_CUDASTEP_H
