//===- Kernels.cu - Elementwise CUDA kernels of Newton-Schulz -------------===//
//
// All of them are memory-bound and touch each element once (the transposes
// go through a shared tile so that reads and writes are coalesced).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cuda_bf16.h>

using namespace muon::cuda;

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8; // blockDim = (32, 8): 4 rows per thread
constexpr int kMirror = 64;     // completeSymmetric's block: 64 x 64

template <typename T> __device__ T fromFloat(float v);
template <> __device__ float fromFloat<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
__device__ float toFloat(float v) { return v; }
__device__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

/// The sum of every thread's `acc` over a block of 256 threads, by a tree
/// in shared memory (a fixed order), returned to every thread. Once per
/// kernel: a second call would reuse the shared lanes unsynchronised.
__device__ double blockSum(double acc) {
  __shared__ double lane[256];
  lane[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      lane[threadIdx.x] += lane[threadIdx.x + s];
    __syncthreads();
  }
  return lane[0];
}

/// Per block, the sum of squares of a grid-stride share of one matrix, in
/// float4 loads where the matrix is 16-byte aligned (the order of the sums
/// depends on the grid and the alignment only: the same on every run).
__global__ void sumSquares(const float *g, int64_t elems, double *partial) {
  const float *x = g + blockIdx.y * elems;
  double acc = 0;
  int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t vecs = reinterpret_cast<uintptr_t>(x) % 16 == 0 ? elems / 4 : 0;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  for (int64_t i = first; i < vecs; i += stride) {
    float4 v = x4[i];
    acc += (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z +
           (double)v.w * v.w;
  }
  for (int64_t i = 4 * vecs + first; i < elems; i += stride)
    acc += (double)x[i] * x[i];
  double sum = blockSum(acc);
  if (threadIdx.x == 0)
    partial[blockIdx.y * gridDim.x + blockIdx.x] = sum;
}

/// One block of 256 threads per matrix: each thread sums a strided share of
/// the matrix's partials, then a tree in shared memory (a fixed order).
__global__ void inverseNorms(const double *partial, int64_t blocks,
                             double eps, float *scale) {
  int64_t b = blockIdx.x;
  partial += b * blocks;
  double acc = 0;
  for (int64_t i = threadIdx.x; i < blocks; i += blockDim.x)
    acc += partial[i];
  double sum = blockSum(acc);
  // An all-zero entry with eps = 0 stays zero (1 / 0 would make it NaN).
  double d = sqrt(sum) + eps;
  if (threadIdx.x == 0)
    scale[b] = d > 0 ? (float)(1.0 / d) : 0.0f;
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

/// Two adjacent elements as one access (8 or 4 bytes).
template <typename T> struct PairOf;
template <> struct PairOf<float> { using type = float2; };
template <> struct PairOf<__nv_bfloat16> { using type = __nv_bfloat162; };

/// at[0], at[1] (at[1] only when `both`); one vector access when `vec` (the
/// pair is aligned, and both are in range).
template <typename T>
__device__ void load2(const T *at, bool both, bool vec, T &v0, T &v1) {
  if (vec) {
    auto v = *reinterpret_cast<const typename PairOf<T>::type *>(at);
    v0 = v.x, v1 = v.y;
    return;
  }
  v0 = at[0];
  v1 = both ? at[1] : v0;
}
template <typename T>
__device__ void store2(T *at, bool both, bool vec, T v0, T v1) {
  if (vec) {
    typename PairOf<T>::type v;
    v.x = v0, v.y = v1;
    *reinterpret_cast<typename PairOf<T>::type *>(at) = v;
    return;
  }
  at[0] = v0;
  if (both)
    at[1] = v1;
}

/// One 64 x 64 block (rows [r0, r0+64), cols [c0, c0+64) of the column-major
/// a) per thread block; thread (x, y) takes rows r0 + 2x and r0 + 2x + 1 of
/// the columns c0 + y + 8j as one pair. Elements of the strictly lower tiles
/// are read once: written back to `copy`, and transposed (through shared
/// memory) into the upper tile of `a` and of `copy`. Diagonal tiles were
/// computed whole: only copied (and the diagonal shifted). Upper tiles are
/// never read. A block with nothing to do (entirely upper tiles; with no
/// copy, no strictly lower element and no diagonal to shift) exits at once,
/// so the completion without a copy reads half the matrix.
template <typename T>
__global__ void completeSymmetric(T *a, T *copy, int64_t p, int64_t tile,
                                  float diag) {
  int64_t r0 = (int64_t)blockIdx.x * kMirror;
  int64_t c0 = (int64_t)blockIdx.y * kMirror;
  int64_t lastRow = min(r0 + kMirror, p) - 1;
  if (lastRow / tile < c0 / tile)
    return; // all in upper tiles: the mirror of the transposed block
  bool mirrors = lastRow / tile > c0 / tile;
  bool onDiag = r0 == c0 && diag != 0.0f;
  if (!copy && !mirrors && !onDiag)
    return;
  int64_t b = blockIdx.z;
  a += b * p * p;
  if (copy)
    copy += b * p * p;
  // Pairs start at even rows; with p even they are aligned and whole.
  bool vec = p % 2 == 0;
  __shared__ T buf[kMirror][kMirror + 1]; // [local col][local row]
  constexpr int kPasses = kMirror / kRowsPerPass;
  int64_t r = r0 + 2 * threadIdx.x;
  bool both = r + 1 < p;
  // Tiles are multiples of 32 (or p itself, one tile) and r0, c0 multiples
  // of 64, so each 32-aligned half of the block's rows, and of its columns,
  // lies in one tile: four divisions per block give every element's tile
  // instead of a 64-bit division per element.
  static_assert(kMirror == 64 && kPasses / 2 * kRowsPerPass == 32);
  const int64_t rowTileLo = r0 / tile, rowTileHi = (r0 + 32) / tile;
  const int64_t colTileLo = c0 / tile, colTileHi = (c0 + 32) / tile;
  const int64_t rowTile = threadIdx.x < 16 ? rowTileLo : rowTileHi;
  T v0[kPasses], v1[kPasses];
  bool live[kPasses];
  // Every load first, then the stores: eight independent loads in flight
  // per thread (a store may alias a later load, so interleaving them would
  // leave one).
#pragma unroll
  for (int j = 0; j < kPasses; ++j) {
    int64_t c = c0 + threadIdx.y + j * kRowsPerPass;
    // Out of range, or an upper tile (a pair never straddles a tile: tiles
    // are multiples of 32, pairs start at even rows).
    live[j] = r < p && c < p && rowTile >= (j < kPasses / 2 ? colTileLo : colTileHi);
    if (live[j])
      load2(a + r + c * p, both, vec, v0[j], v1[j]);
  }
#pragma unroll
  for (int j = 0; j < kPasses; ++j) {
    if (!live[j])
      continue;
    int k = threadIdx.y + j * kRowsPerPass;
    int64_t c = c0 + k;
    if (onDiag && (r == c || r + 1 == c)) {
      if (r == c)
        v0[j] = fromFloat<T>(toFloat(v0[j]) + diag);
      else
        v1[j] = fromFloat<T>(toFloat(v1[j]) + diag);
      store2(a + r + c * p, both, vec, v0[j], v1[j]);
    }
    if (copy)
      store2(copy + r + c * p, both, vec, v0[j], v1[j]);
    buf[k][2 * threadIdx.x] = v0[j];
    buf[k][2 * threadIdx.x + 1] = v1[j];
  }
  if (!mirrors)
    return;
  __syncthreads();
  // a(dr, dc) = a(dc, dr) where (dc, dr) lies in a strictly lower tile; the
  // source is buf[dr - c0][dc - r0].
  int64_t dr = c0 + 2 * threadIdx.x;
  const int64_t drTile = threadIdx.x < 16 ? colTileLo : colTileHi;
  for (int k = threadIdx.y; k < kMirror; k += kRowsPerPass) {
    int64_t dc = r0 + k;
    if (dr >= p || dc >= p || (k < 32 ? rowTileLo : rowTileHi) <= drTile)
      continue;
    bool destBoth = dr + 1 < p;
    T w0 = buf[2 * threadIdx.x][k], w1 = buf[2 * threadIdx.x + 1][k];
    store2(a + dr + dc * p, destBoth, vec, w0, w1);
    if (copy)
      store2(copy + dr + dc * p, destBoth, vec, w0, w1);
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
  int64_t blocks = normBlocks(elems);
  sumSquares<<<dim3((unsigned)blocks, (unsigned)batch), 256, 0, stream>>>(
      g, elems, partial);
  inverseNorms<<<(unsigned)batch, 256, 0, stream>>>(partial, blocks, eps,
                                                    scale);
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

cudaError_t muon::cuda::launchCompleteSymmetric(void *a, void *copy,
                                                Elem elem, int64_t p,
                                                int64_t tile, int64_t batch,
                                                float diag,
                                                cudaStream_t stream) {
  unsigned blocks = (unsigned)((p + kMirror - 1) / kMirror);
  dim3 grid(blocks, blocks, (unsigned)batch);
  dim3 block(kTile, kRowsPerPass);
  if (elem == Elem::F32)
    completeSymmetric<<<grid, block, 0, stream>>>(
        static_cast<float *>(a), static_cast<float *>(copy), p, tile,
        diag);
  else
    completeSymmetric<<<grid, block, 0, stream>>>(
        static_cast<__nv_bfloat16 *>(a),
        static_cast<__nv_bfloat16 *>(copy), p, tile, diag);
  return cudaGetLastError();
}

cudaError_t muon::cuda::launchScale(float *x, int64_t n, float s,
                                    cudaStream_t stream) {
  scaleInPlace<<<blocksFor(n), 256, 0, stream>>>(x, n, s);
  return cudaGetLastError();
}
