/*===- muon_runtime_cuda_device.h - Device memory and kernels -----*- C -*-===
 *
 * What a target=cuda step needs from the GPU beside Newton-Schulz: its
 * buffers in device memory, copies, and the launches of the kernels the
 * compiler generated (a cubin embedded in the compiled step). Part of
 * libmuon_runtime_cuda; plain C, no MPI. Every call works on the calling
 * thread's current device and the legacy default stream (the stream
 * Newton-Schulz runs on when its context was made with a NULL stream), so
 * kernels, Newton-Schulz and copies run in program order. A failure
 * returns non-zero with the reason in muon_cuda_device_error().
 *===----------------------------------------------------------------------===*/

#ifndef MUON_RUNTIME_MUON_RUNTIME_CUDA_DEVICE_H
#define MUON_RUNTIME_MUON_RUNTIME_CUDA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The reason of this thread's last failure of a call below. */
const char *muon_cuda_device_error(void);

/* Device memory, ordered on the stream, from the device's default pool,
 * which keeps freed blocks for reuse (its release threshold is set to the
 * maximum at the first allocation on each device). */
int muon_cuda_alloc(void **out, size_t bytes);
int muon_cuda_free(void *ptr);

/* The device whose memory `ptr` points into, or -1 for host memory (also
 * memory CUDA does not know). */
int muon_cuda_pointer_device(const void *ptr, int *device);

/* Copies `bytes`; `kind` is 1 host to device, 2 device to host, 3 device
 * to device. Host copies wait for the stream's earlier work and complete
 * before returning; device-to-device copies are queued. */
int muon_cuda_copy(void *dst, const void *src, size_t bytes, int kind);

/* Queues a device-to-device copy of `rows` rows of `row_bytes` bytes, row
 * r from src + r * src_pitch to dst + r * dst_pitch (a block of a tensor
 * split along an inner dim, packed or unpacked by a collective). */
int muon_cuda_copy_rows(void *dst, size_t dst_pitch, const void *src,
                        size_t src_pitch, size_t row_bytes, size_t rows);

/* Queues x[i] *= s for the `n` floats at `x` (the division of an average
 * reduction). */
int muon_cuda_scale(float *x, int64_t n, float s);

/* Waits for everything queued on the stream. */
int muon_cuda_synchronize(void);

/* A module of kernels from a cubin or PTX image. */
int muon_cuda_module_load(void **module, const void *image);
int muon_cuda_module_unload(void *module);
int muon_cuda_module_function(void **function, void *module,
                              const char *name);
/* Queues `function` with kernel parameters `params` (pointers to each
 * argument, as cuLaunchKernel takes them). */
int muon_cuda_launch(void *function, int64_t gx, int64_t gy, int64_t gz,
                     int64_t bx, int64_t by, int64_t bz, int32_t shared,
                     void *stream, void **params);

#ifdef __cplusplus
}
#endif

#endif /* MUON_RUNTIME_MUON_RUNTIME_CUDA_DEVICE_H */
