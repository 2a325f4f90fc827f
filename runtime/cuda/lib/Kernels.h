//===- Kernels.h - Elementwise CUDA kernels of Newton-Schulz ---*- C++ -*-===//
//
// The memory-bound parts around the GEMMs: the Frobenius norm, packing the
// fp32 input into the working precision (scaled, transposed to the short
// side), unpacking, and completing a symmetric matrix of which only the
// lower tiles were computed. Every launcher returns the launch's error.
//
// Layouts are cuBLAS's (column-major). The working matrix of a p x q problem
// (p <= q) is W: column-major q x p (ld q), i.e. X row-major p x q.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CUDA_KERNELS_H
#define MUON_RUNTIME_CUDA_KERNELS_H

#include <cuda_runtime.h>

#include <cstdint>

namespace muon {
namespace cuda {

enum class Elem { F32, BF16 };

/// Blocks per matrix of the norm's partial sums: one per 16K elements (64
/// per thread), at most 1024, so that a large matrix keeps the memory busy
/// and a small one does not pay for idle blocks. Fixed by the size: the sum
/// is the same on every run.
inline int64_t normBlocks(int64_t elems) {
  int64_t blocks = (elems + 16383) / 16384;
  return blocks < 1 ? 1 : blocks > 1024 ? 1024 : blocks;
}

/// scale[b] = 1 / (||g_b||_F + eps) for each of `batch` matrices of `elems`
/// floats; `partial` holds normBlocks(elems) * batch doubles.
cudaError_t launchInverseNorms(const float *g, int64_t elems, int64_t batch,
                               double eps, double *partial, float *scale,
                               cudaStream_t stream);

/// w_b = scale[b] * g_b in `elem` precision: g_b is row-major m x n; w_b is
/// row-major p x q (g_b itself when m <= n, its transpose otherwise).
cudaError_t launchPack(const float *g, void *w, Elem elem, int64_t m,
                       int64_t n, int64_t batch, const float *scale,
                       cudaStream_t stream);

/// The inverse of launchPack without the scale: g_b = w_b (transposed back
/// when m > n), converted to fp32.
cudaError_t launchUnpack(const void *w, float *g, Elem elem, int64_t m,
                         int64_t n, int64_t batch, cudaStream_t stream);

/// Completes batch symmetric p x p matrices `a` (column-major, stride p*p)
/// of which the tiles (I, J) with I >= J of size tile x tile hold the
/// product: the strictly upper tiles are filled by transposition. Then adds
/// `diag` to every diagonal element. When `copy` is set, the completed
/// matrix is also copied there (what the next product reads as its C, with
/// tiles of its own size). tile divides p and is a multiple of 32;
/// tile == p means there is nothing to mirror.
cudaError_t launchCompleteSymmetric(void *a, void *copy, Elem elem,
                                    int64_t p, int64_t tile, int64_t batch,
                                    float diag, cudaStream_t stream);

/// x[i] *= s for i < n.
cudaError_t launchScale(float *x, int64_t n, float s, cudaStream_t stream);

} // namespace cuda
} // namespace muon

#endif // MUON_RUNTIME_CUDA_KERNELS_H
