//===- CudaStep.h - The buffers of a target=cuda step ----------*- C++ -*-===//
//
// Between muon_rt_cuda_step_begin and muon_rt_cuda_step_end (which a
// target=cuda step calls first and last) every buffer the runtime is
// handed is in device memory: the step's heap allocates there, Newton-
// Schulz runs in place on the device, and collectives pack on the device
// and hand their backend device pointers (Staging.h, HostStaging.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CUDASTEP_H
#define MUON_RUNTIME_CUDASTEP_H

#include <cstddef>
#include <string>

namespace muon {
namespace rt {

/// Whether a target=cuda step is running on this thread (its buffers are on
/// the device).
bool deviceResident();

/// Step heap blocks in device memory (deviceResident() only).
void *deviceAllocate(size_t bytes);
/// Frees `ptr` if it is a device block of the step heap; false otherwise.
bool deviceRelease(void *ptr, size_t &bytes);

/// A fatal error naming `what` unless `ptr` is memory of this rank's GPU
/// (host memory, or another GPU's, handed to a target=cuda step).
void checkOnThisGpu(const std::string &what, const void *ptr);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_CUDASTEP_H
