/*===- muon_runtime_cuda.h - Newton-Schulz on an NVIDIA GPU -------*- C -*-===
 *
 * The GPU compute library of the Muon runtime: Newton-Schulz
 * orthogonalisation of fp32 matrices in device memory, on tensor cores
 * (bf16 operands, fp32 accumulation) or in exact fp32 (no TF32), with the
 * two symmetric products computed a lower triangle of tiles at a time.
 * Plain C, no MPI: a failure returns a non-zero status and leaves a message
 * in the context; the caller decides (the step runtime turns it into its
 * one-line fatal error). See docs/gpu.md.
 *===----------------------------------------------------------------------===*/

#ifndef MUON_RUNTIME_MUON_RUNTIME_CUDA_H
#define MUON_RUNTIME_MUON_RUNTIME_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operand precision of the products. */
enum {
  MUON_CUDA_FP32 = 0, /* fp32 operands and accumulation, TF32 off */
  MUON_CUDA_BF16 = 1  /* bf16 operands on tensor cores, fp32 accumulation */
};

/* How the symmetric products A = X X^T and A A are computed. */
enum {
  MUON_CUDA_TILE_AUTO = 0, /* muon_cuda_ns_auto_tile's choice */
  MUON_CUDA_TILE_FULL = -1 /* whole products (a plain GEMM chain) */
  /* > 0: that tile size; it must divide p and be a multiple of 32 */
};

/* Handles (cuBLAS) and device work buffers, reused across calls; one
 * context per thread. Work is queued on `stream` (a cudaStream_t; NULL is
 * the default stream). */
typedef struct muon_cuda_ns_context muon_cuda_ns_context;

/* Returns 0 and a context in *out, or non-zero (no device, no driver,
 * cuBLAS failure) with *out = NULL and the reason in muon_cuda_ns_error of
 * NULL. */
int muon_cuda_ns_create(muon_cuda_ns_context **out, void *stream);
void muon_cuda_ns_destroy(muon_cuda_ns_context *ctx);

/* The last failure's message ("" when none). NULL names the failure of the
 * last muon_cuda_ns_create on this thread. */
const char *muon_cuda_ns_error(const muon_cuda_ns_context *ctx);

/* Orthogonalises `batch` row-major m x n fp32 matrices at `x` (device
 * memory, one after another) in place:
 *   X <- G (or G^T when m > n: the Gram matrix is p x p, p = min(m, n))
 *   X <- X / (||X||_F + eps)
 *   per iteration i: A <- X X^T; B <- b_i A + c_i A A; X <- a_i X + B X
 * `coeffs` (host memory) holds 3 values used in every iteration, or
 * 3 * steps. `tile` is a MUON_CUDA_TILE_* value or a tile size. Queues the
 * work on the context's stream and returns without synchronising; 0 on
 * success, else non-zero with the reason in muon_cuda_ns_error(ctx). */
int muon_cuda_ns(muon_cuda_ns_context *ctx, float *x, int64_t batch,
                 int64_t m, int64_t n, int64_t steps, const double *coeffs,
                 int64_t ncoeffs, double eps, int precision, int64_t tile);

/* muon_cuda_ns with a tile for each symmetric product: `tile_gram` for
 * A = X X^T (inner dimension q = max(m, n)) and `tile_square` for A A
 * (inner dimension p). muon_cuda_ns(..., tile) is this with both = tile. */
int muon_cuda_ns_tiles(muon_cuda_ns_context *ctx, float *x, int64_t batch,
                       int64_t m, int64_t n, int64_t steps,
                       const double *coeffs, int64_t ncoeffs, double eps,
                       int precision, int64_t tile_gram, int64_t tile_square);

/* The same on `batch` matrices in host memory: copied to the device, and
 * back once done; waits for the stream (the result is in `x` on return). */
int muon_cuda_ns_host(muon_cuda_ns_context *ctx, float *x, int64_t batch,
                      int64_t m, int64_t n, int64_t steps,
                      const double *coeffs, int64_t ncoeffs, double eps,
                      int precision, int64_t tile);

/* Makes device `index` this thread's current device (before
 * muon_cuda_ns_create). 0 on success, else non-zero with the reason in
 * muon_cuda_ns_error(NULL). */
int muon_cuda_set_device(int index);

/* The tile size MUON_CUDA_TILE_AUTO picks for a p x p Gram matrix
 * (p when the products are computed whole). */
int64_t muon_cuda_ns_auto_tile(int64_t p, int precision);

/* The standard FLOP count of one call: steps * (4 p^2 q + 2 p^3) per
 * matrix (whole products), whatever the tiles actually compute. */
double muon_cuda_ns_flops(int64_t batch, int64_t m, int64_t n, int64_t steps);

/* Number of CUDA devices this process can use (0 when none or no driver). */
int muon_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif /* MUON_RUNTIME_MUON_RUNTIME_CUDA_H */
