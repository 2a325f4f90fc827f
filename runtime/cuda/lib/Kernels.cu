//===- Kernels.cu - Elementwise CUDA kernels of Newton-Schulz -------------===//
//
// All of them are memory-bound and touch each element once (the transposes
// go through a 32 x 33 shared tile so that reads and writes are coalesced).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cuda_bf16.h>

using namespace muon::cuda;

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8; // blockDim = (32, 8): 4 rows per thread

template <typename T> __device__ T fromFloat(float v);
template <> __device__ float fromFloat<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
__device__ float toFloat(float v) { return v; }
__device__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

__global__ void sumSquares(const float *g, int64_t elems, double *partial) {
  const float *x = g + blockIdx.y * elems;
  double acc = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < elems;
       i += (int64_t)gridDim.x * blockDim.x)
    acc += (double)x[i] * x[i];
  __shared__ double lane[256];
  lane[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      lane[threadIdx.x] += lane[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partial[blockIdx.y * gridDim.x + blockIdx.x] = lane[0];
}

__global__ void inverseNorms(const double *partial, int64_t batch, double eps,
                             float *scale) {
  int64_t b = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  double sum = 0;
  for (int i = 0; i < kNormBlocks; ++i)
    sum += partial[b * kNormBlocks + i];
  scale[b] = (float)(1.0 / (sqrt(sum) + eps));
}

/// dst (rows x cols, row-major) = f(src) where src is cols x rows row-major
/// (a transpose), per batch entry. f scales and converts.
template <typename S, typename D>
__global__ void transposeConvert(const S *src, D *dst, int64_t rows,
                                 int64_t cols, const float *scale) {
  __shared__ float tile[kTile][kTile + 1];
  int64_t b = blockIdx.z;
  src += b * rows * cols;
  dst += b * rows * cols;
  float s = scale ? scale[b] : 1.0f;
  // This block: dst rows [r0, r0+32), dst cols [c0, c0+32).
  int64_t r0 = (int64_t)blockIdx.y * kTile, c0 = (int64_t)blockIdx.x * kTile;
  // Read src rows c0.. (dst cols), src cols r0.. (dst rows): coalesced in x.
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    int64_t sr = c0 + k, sc = r0 + threadIdx.x;
    if (sr < cols && sc < rows)
      tile[k][threadIdx.x] = toFloat(src[sr * rows + sc]);
  }
  __syncthreads();
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    int64_t dr = r0 + k, dc = c0 + threadIdx.x;
    if (dr < rows && dc < cols)
      dst[dr * cols + dc] = fromFloat<D>(s * tile[threadIdx.x][k]);
  }
}

template <typename S, typename D>
__global__ void convert(const S *src, D *dst, int64_t elems,
                        const float *scale) {
  int64_t b = blockIdx.y;
  float s = scale ? scale[b] : 1.0f;
  src += b * elems;
  dst += b * elems;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < elems;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = fromFloat<D>(s * toFloat(src[i]));
}

__global__ void scaleInPlace(float *x, int64_t n, float s) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    x[i] *= s;
}

template <typename T>
__global__ void completeSymmetric(T *a, T *lowerCopy, int64_t p,
                                  int64_t tile, float diag) {
  __shared__ T buf[kTile][kTile + 1];
  int64_t b = blockIdx.z;
  a += b * p * p;
  if (lowerCopy)
    lowerCopy += b * p * p;
  // This block: rows [r0, r0+32), cols [c0, c0+32) of the column-major a.
  int64_t r0 = (int64_t)blockIdx.x * kTile, c0 = (int64_t)blockIdx.y * kTile;
  bool upper = r0 / tile < c0 / tile;
  if (upper) {
    // a(r, c) = a(c, r): read the lower block coalesced, write transposed.
    for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
      int64_t sr = c0 + threadIdx.x, sc = r0 + k;
      if (sr < p && sc < p)
        buf[k][threadIdx.x] = a[sr + sc * p];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
      int64_t r = r0 + threadIdx.x, c = c0 + k;
      if (r < p && c < p)
        a[r + c * p] = buf[threadIdx.x][k];
    }
    return;
  }
  for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
    int64_t r = r0 + threadIdx.x, c = c0 + k;
    if (r >= p || c >= p)
      continue;
    T v = a[r + c * p];
    if (r == c && diag != 0.0f) {
      v = fromFloat<T>(toFloat(v) + diag);
      a[r + c * p] = v;
    }
    if (lowerCopy)
      lowerCopy[r + c * p] = v;
  }
}

unsigned blocksFor(int64_t elems) {
  int64_t blocks = (elems + 255) / 256;
  return (unsigned)(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

template <typename T>
cudaError_t pack(const float *g, T *w, int64_t m, int64_t n, int64_t batch,
                 const float *scale, cudaStream_t stream) {
  if (m <= n) {
    convert<<<dim3(blocksFor(m * n), (unsigned)batch), 256, 0, stream>>>(
        g, w, m * n, scale);
  } else {
    // w is n x m: rows n, cols m.
    dim3 grid((unsigned)((m + kTile - 1) / kTile),
              (unsigned)((n + kTile - 1) / kTile), (unsigned)batch);
    transposeConvert<<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(
        g, w, n, m, scale);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t unpack(const T *w, float *g, int64_t m, int64_t n, int64_t batch,
                   cudaStream_t stream) {
  if (m <= n) {
    convert<<<dim3(blocksFor(m * n), (unsigned)batch), 256, 0, stream>>>(
        w, g, m * n, (const float *)nullptr);
  } else {
    dim3 grid((unsigned)((n + kTile - 1) / kTile),
              (unsigned)((m + kTile - 1) / kTile), (unsigned)batch);
    transposeConvert<<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(
        w, g, m, n, (const float *)nullptr);
  }
  return cudaGetLastError();
}

} // namespace

cudaError_t muon::cuda::launchInverseNorms(const float *g, int64_t elems,
                                           int64_t batch, double eps,
                                           double *partial, float *scale,
                                           cudaStream_t stream) {
  sumSquares<<<dim3(kNormBlocks, (unsigned)batch), 256, 0, stream>>>(
      g, elems, partial);
  inverseNorms<<<(unsigned)((batch + 127) / 128), 128, 0, stream>>>(
      partial, batch, eps, scale);
  return cudaGetLastError();
}

cudaError_t muon::cuda::launchPack(const float *g, void *w, Elem elem,
                                   int64_t m, int64_t n, int64_t batch,
                                   const float *scale, cudaStream_t stream) {
  if (elem == Elem::F32)
    return pack(g, static_cast<float *>(w), m, n, batch, scale, stream);
  return pack(g, static_cast<__nv_bfloat16 *>(w), m, n, batch, scale,
              stream);
}

cudaError_t muon::cuda::launchUnpack(const void *w, float *g, Elem elem,
                                     int64_t m, int64_t n, int64_t batch,
                                     cudaStream_t stream) {
  if (elem == Elem::F32)
    return unpack(static_cast<const float *>(w), g, m, n, batch, stream);
  return unpack(static_cast<const __nv_bfloat16 *>(w), g, m, n, batch,
                stream);
}

cudaError_t muon::cuda::launchCompleteSymmetric(void *a, void *lowerCopy,
                                                Elem elem, int64_t p,
                                                int64_t tile, int64_t batch,
                                                float diag,
                                                cudaStream_t stream) {
  unsigned blocks = (unsigned)((p + kTile - 1) / kTile);
  dim3 grid(blocks, blocks, (unsigned)batch);
  dim3 block(kTile, kRowsPerPass);
  if (elem == Elem::F32)
    completeSymmetric<<<grid, block, 0, stream>>>(
        static_cast<float *>(a), static_cast<float *>(lowerCopy), p, tile,
        diag);
  else
    completeSymmetric<<<grid, block, 0, stream>>>(
        static_cast<__nv_bfloat16 *>(a),
        static_cast<__nv_bfloat16 *>(lowerCopy), p, tile, diag);
  return cudaGetLastError();
}

cudaError_t muon::cuda::launchScale(float *x, int64_t n, float s,
                                    cudaStream_t stream) {
  scaleInPlace<<<blocksFor(n), 256, 0, stream>>>(x, n, s);
  return cudaGetLastError();
}
