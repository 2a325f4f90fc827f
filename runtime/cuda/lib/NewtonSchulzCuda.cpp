//===- NewtonSchulzCuda.cpp - Newton-Schulz on cuBLAS ---------------------===//
//
// One iteration is three cuBLAS calls and two memory-bound kernels:
//
//   A  = W^T W           lower tiles only (batched GEMM over tile pairs)
//   complete A           upper tiles by transposition; all of A -> B
//   B  = c A^T A + b B   lower tiles only, beta = b on the copy of A
//   complete B; B += aI  the coefficient a goes on B's diagonal
//   W' = W B             (aI + B) X = a X + B X: one GEMM, beta = 0
//
// where W is X in cuBLAS's column-major view (q x p). A and B are symmetric,
// so computing the tiles (I, J) with I >= J of an nb x nb tiling does
// (nb + 1) / (2 nb) of the work; the completion reads the computed tiles
// once and writes the upper ones (and, for A, a copy). Tiles are uniform (tile divides p), so one batched call with
// pointer arrays computes all of them, for every matrix of the batch.
//
// Folding a into B's diagonal turns X = a X + B X into a single product
// without reading X twice; the diagonal is formed in fp32 before rounding to
// the operand precision.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime_cuda.h"

#include "Kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace muon::cuda;

namespace {

thread_local std::string createError;

/// An allocation that only grows: device memory, or pinned host memory.
template <cudaError_t (*Allocate)(void **, size_t),
          cudaError_t (*Free)(void *)>
struct GrowingBuffer {
  void *ptr = nullptr;
  size_t bytes = 0;
  cudaError_t reserve(size_t want) {
    if (want <= bytes)
      return cudaSuccess;
    release();
    cudaError_t err = Allocate(&ptr, want);
    if (err == cudaSuccess)
      bytes = want;
    else
      ptr = nullptr;
    return err;
  }
  void release() {
    if (ptr)
      Free(ptr);
    ptr = nullptr;
    bytes = 0;
  }
};
using DeviceBuffer = GrowingBuffer<cudaMalloc, cudaFree>;
/// The host entry's staging.
using PinnedBuffer = GrowingBuffer<cudaMallocHost, cudaFreeHost>;

/// A host call captured once and replayed: the copy in from the pinned
/// block, Newton-Schulz on the staging buffer and the copy out, as one graph
/// launch instead of some 30 launches and two pageable copies. Its key is
/// everything the capture baked in: the call (shape, steps, coefficients,
/// eps, precision, tile) and every buffer's address.
struct HostGraph {
  std::string call, buffers;
  cudaGraphExec_t exec = nullptr;
};

/// The device pointer arrays of one tiled product (A, B and C operands of
/// every tile pair of every matrix), built once per buffer/shape.
struct TileArrays {
  const void *w = nullptr, *c = nullptr;
  int64_t p = 0, k = 0, tile = 0, batch = 0;
  size_t elemBytes = 0;
  int64_t count = 0;
  DeviceBuffer dev; // 3 * count pointers: A's, then B's, then C's
};

/// The first failure of a call, if any: every step returns false after
/// recording it, and the C entry points turn that into a status.
struct Status {
  std::string error;
  bool fail(std::string what) {
    if (error.empty())
      error = std::move(what);
    return false;
  }
};

std::string cublasName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  default: return "cuBLAS status " + std::to_string(static_cast<int>(s));
  }
}

bool ok(Status &s, cudaError_t err, const char *what) {
  return err == cudaSuccess ||
         s.fail(std::string(what) + ": " + cudaGetErrorString(err));
}
bool ok(Status &s, cublasStatus_t st, const char *what) {
  return st == CUBLAS_STATUS_SUCCESS ||
         s.fail(std::string(what) + ": " + cublasName(st));
}

} // namespace

struct muon_cuda_ns_context {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceBuffer w0, w1, a, b, partial, scale;
  DeviceBuffer stage; // muon_cuda_ns_host's device copy of the matrices
  /// cuBLAS's workspace, ours so that a captured graph owns no allocation
  /// and every call (captured or not) runs the same GEMM algorithms.
  DeviceBuffer workspace;
  std::vector<TileArrays> tiles; // a few entries: W0, W1 and A products
  // muon_cuda_ns_host's graphs (whole products only) on a stream of its own
  // (capture needs one; the caller's may be the legacy default stream).
  cudaStream_t hostStream = nullptr;
  cudaEvent_t callerDone = nullptr; // orders hostStream after `stream`
  PinnedBuffer pinned;
  std::vector<HostGraph> graphs;
  bool useGraphs = true; // MUON_RT_CUDA_GRAPHS=0: plain launches
  std::string error;
};

namespace {

using Ctx = muon_cuda_ns_context;

cudaDataType dataType(Elem e) {
  return e == Elem::F32 ? CUDA_R_32F : CUDA_R_16BF;
}
// fp32 mode is exact fp32: the pedantic compute type keeps TF32 (and any
// other reduced-precision shortcut) out, whatever NVIDIA_TF32_OVERRIDE says.
cublasComputeType_t computeType(Elem e) {
  return e == Elem::F32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
}

/// The pointer arrays of C = W^T W over the lower tiles (cached).
TileArrays *tileArrays(Ctx &ctx, Status &st, const void *w, void *c,
                       int64_t p, int64_t k, int64_t tile, int64_t batch,
                       size_t es) {
  for (TileArrays &t : ctx.tiles)
    if (t.w == w && t.c == c && t.p == p && t.k == k && t.tile == tile &&
        t.batch == batch && t.elemBytes == es)
      return &t;
  if (ctx.tiles.size() >= 8) {
    for (TileArrays &t : ctx.tiles)
      t.dev.release();
    ctx.tiles.clear();
  }
  ctx.tiles.emplace_back();
  TileArrays &t = ctx.tiles.back();
  t.w = w, t.c = c, t.p = p, t.k = k, t.tile = tile, t.batch = batch;
  t.elemBytes = es;
  int64_t nb = p / tile;
  t.count = batch * nb * (nb + 1) / 2;
  std::vector<const void *> host(3 * t.count);
  const char *wb = static_cast<const char *>(w);
  char *cb = static_cast<char *>(c);
  int64_t i = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t I = 0; I < nb; ++I)
      for (int64_t J = 0; J <= I; ++J, ++i) {
        // C(I, J) = W(:, I)^T W(:, J); column-major, W's ld is k.
        const char *wm = wb + b * p * k * es;
        host[i] = wm + I * tile * k * es;
        host[t.count + i] = wm + J * tile * k * es;
        host[2 * t.count + i] =
            cb + (b * p * p + I * tile + J * tile * p) * es;
      }
  // On the context's stream, so that the GEMM after it (same stream) sees
  // the pointers whatever kind of stream the caller gave; from pageable
  // memory the call returns once `host` has been read.
  if (!ok(st, t.dev.reserve(host.size() * sizeof(void *)), "cudaMalloc") ||
      !ok(st,
          cudaMemcpyAsync(t.dev.ptr, host.data(), host.size() * sizeof(void *),
                          cudaMemcpyHostToDevice, ctx.stream),
          "cudaMemcpyAsync (tile pointers)")) {
    t.dev.release();
    ctx.tiles.pop_back();
    return nullptr;
  }
  return &t;
}

/// C = alpha W^T W + beta C for `batch` matrices (W: k x p column-major,
/// C: p x p), only the lower tiles when tile < p.
bool symmetricProduct(Ctx &ctx, Status &st, Elem e, const void *w, int64_t k,
                      void *c, int64_t p, int64_t tile, int64_t batch,
                      float alpha, float beta) {
  size_t es = e == Elem::F32 ? 4 : 2;
  cudaDataType dt = dataType(e);
  if (tile >= p)
    return ok(st,
              cublasGemmStridedBatchedEx(
                  ctx.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)p, (int)p, (int)k,
                  &alpha, w, dt, (int)k, p * k, w, dt, (int)k, p * k, &beta,
                  c, dt, (int)p, p * p, (int)batch, computeType(e),
                  CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx (symmetric product)");
  TileArrays *t = tileArrays(ctx, st, w, c, p, k, tile, batch, es);
  if (!t)
    return false;
  void *const *arrays = static_cast<void *const *>(t->dev.ptr);
  return ok(st,
            cublasGemmBatchedEx(ctx.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)tile,
                                (int)tile, (int)k, &alpha, arrays, dt, (int)k,
                                arrays + t->count, dt, (int)k, &beta,
                                arrays + 2 * t->count, dt, (int)p,
                                (int)t->count, computeType(e),
                                CUBLAS_GEMM_DEFAULT),
            "cublasGemmBatchedEx (symmetric tiles)");
}

bool validTile(int64_t tile, int64_t p) {
  return tile > 0 && tile < p && p % tile == 0 && tile % 32 == 0;
}

/// The work buffers a call of this shape needs, reserved before a capture
/// (a graph must not see them move) and by run() itself.
bool reserveWork(Ctx &ctx, Status &st, int64_t batch, int64_t m, int64_t n,
                 int precision) {
  int64_t p = m < n ? m : n, q = m < n ? n : m;
  size_t es = precision == MUON_CUDA_FP32 ? 4 : 2;
  return ok(st, ctx.w0.reserve(batch * p * q * es), "cudaMalloc (work)") &&
         ok(st, ctx.w1.reserve(batch * p * q * es), "cudaMalloc (work)") &&
         ok(st, ctx.a.reserve(batch * p * p * es), "cudaMalloc (Gram)") &&
         ok(st, ctx.b.reserve(batch * p * p * es), "cudaMalloc (Gram)") &&
         ok(st,
            ctx.partial.reserve(batch * normBlocks(p * q) * sizeof(double)),
            "cudaMalloc (norm)") &&
         ok(st, ctx.scale.reserve(batch * sizeof(float)), "cudaMalloc (norm)");
}

/// A MUON_CUDA_TILE_* value or a tile size, made a tile size for one product
/// of a p x p result (p when whole); false if it is not a valid one.
bool resolveTile(int64_t &tile, int64_t p, int precision) {
  if (tile == MUON_CUDA_TILE_AUTO)
    tile = muon_cuda_ns_auto_tile(p, precision);
  else if (tile == MUON_CUDA_TILE_FULL)
    tile = p;
  return tile == p || validTile(tile, p);
}

bool run(Ctx &ctx, Status &st, float *x, int64_t batch, int64_t m, int64_t n,
         int64_t steps, const double *coeffs, int64_t ncoeffs, double eps,
         int precision, int64_t tileGram, int64_t tileSquare) {
  if (!x)
    return st.fail("x is null");
  if (batch < 1 || batch > 65535 || m < 1 || n < 1 || steps < 0)
    return st.fail("bad shape: batch " + std::to_string(batch) + ", " +
                   std::to_string(m) + " x " + std::to_string(n) + ", " +
                   std::to_string(steps) + " steps (batch in [1, 65535], " +
                   "dims >= 1, steps >= 0)");
  if (!coeffs || (ncoeffs != 3 && ncoeffs != 3 * steps))
    return st.fail("coefficients: " + std::to_string(ncoeffs) +
                   " values; 3 or 3 * steps (" + std::to_string(3 * steps) +
                   ") expected");
  if (precision != MUON_CUDA_FP32 && precision != MUON_CUDA_BF16)
    return st.fail("unknown precision " + std::to_string(precision));
  int64_t p = m < n ? m : n, q = m < n ? n : m;
  if (p > INT32_MAX || q > INT32_MAX || p * q > INT64_MAX / 8 / batch)
    return st.fail("matrix too large for cuBLAS's 32-bit dimensions");
  // The transposing kernels put a dimension / 32 on grid.y (at most 65535):
  // the long side of a tall matrix, and p for the Gram matrices.
  const int64_t kGridY = 65535 * 32;
  if (p > kGridY || (m > n && m > kGridY))
    return st.fail("a " + std::to_string(m) + " x " + std::to_string(n) +
                   " matrix: the GPU kernels take dimensions up to " +
                   std::to_string(kGridY) +
                   " (the short side, and the rows of a tall matrix)");
  for (auto [tile, product] : {std::pair{&tileGram, "A = X X^T"},
                               std::pair{&tileSquare, "A A"}})
    if (!resolveTile(*tile, p, precision))
      return st.fail("tile " + std::to_string(*tile) + " (" + product +
                     ") for p = " + std::to_string(p) +
                     ": a tile must divide p and be a multiple of 32");
  Elem e = precision == MUON_CUDA_FP32 ? Elem::F32 : Elem::BF16;

  if (!reserveWork(ctx, st, batch, m, n, precision) ||
      !ok(st, cublasSetStream(ctx.blas, ctx.stream), "cublasSetStream") ||
      !ok(st,
          cublasSetWorkspace(ctx.blas, ctx.workspace.ptr, ctx.workspace.bytes),
          "cublasSetWorkspace"))
    return false;

  auto *partial = static_cast<double *>(ctx.partial.ptr);
  auto *scale = static_cast<float *>(ctx.scale.ptr);
  void *w = ctx.w0.ptr, *wNext = ctx.w1.ptr;
  if (!ok(st,
          launchInverseNorms(x, m * n, batch, eps, partial, scale, ctx.stream),
          "norm kernel") ||
      !ok(st, launchPack(x, w, e, m, n, batch, scale, ctx.stream),
          "pack kernel"))
    return false;
  cudaDataType dt = dataType(e);
  for (int64_t i = 0; i < steps; ++i) {
    const double *abc = ncoeffs == 3 ? coeffs : coeffs + 3 * i;
    float ca = (float)abc[0], cb = (float)abc[1], cc = (float)abc[2];
    float one = 1.0f, zero = 0.0f;
    if (!symmetricProduct(ctx, st, e, w, q, ctx.a.ptr, p, tileGram, batch,
                          1.0f, 0.0f) ||
        !ok(st,
            launchCompleteSymmetric(ctx.a.ptr, ctx.b.ptr, e, p, tileGram,
                                    batch, 0.0f, ctx.stream),
            "symmetric completion kernel") ||
        !symmetricProduct(ctx, st, e, ctx.a.ptr, p, ctx.b.ptr, p, tileSquare,
                          batch, cc, cb) ||
        !ok(st,
            launchCompleteSymmetric(ctx.b.ptr, nullptr, e, p, tileSquare,
                                    batch, ca, ctx.stream),
            "symmetric completion kernel") ||
        !ok(st,
            cublasGemmStridedBatchedEx(
                ctx.blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)q, (int)p, (int)p,
                &one, w, dt, (int)q, p * q, ctx.b.ptr, dt, (int)p, p * p,
                &zero, wNext, dt, (int)q, p * q, (int)batch, computeType(e),
                CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx (update)"))
      return false;
    std::swap(w, wNext);
  }
  return ok(st, launchUnpack(w, x, e, m, n, batch, ctx.stream),
            "unpack kernel");
}

template <typename T> void appendKey(std::string &key, const T &v) {
  key.append(reinterpret_cast<const char *>(&v), sizeof v);
}

/// Turns graphs off for the context after a failed capture or a staging
/// that could not be pinned: the call (and every later one) takes the plain
/// path, which reports any error of the call itself.
bool withoutGraphs(Ctx &ctx, bool &handled) {
  cudaGetLastError(); // the capture's error is not the next call's
  ctx.useGraphs = false;
  handled = false;
  return false;
}

/// Captures one host call (copy in from the pinned block, the iteration on
/// the staging buffer, copy out) on the host stream. Null on failure, the
/// capture ended either way.
cudaGraphExec_t captureHostCall(Ctx &ctx, Status &st, size_t bytes,
                                int64_t batch, int64_t m, int64_t n,
                                int64_t steps, const double *coeffs,
                                int64_t ncoeffs, double eps, int precision,
                                int64_t tileGram, int64_t tileSquare) {
  cudaStream_t caller = ctx.stream;
  ctx.stream = ctx.hostStream;
  float *dev = static_cast<float *>(ctx.stage.ptr);
  bool captured = ok(st,
                     cudaStreamBeginCapture(ctx.hostStream,
                                            cudaStreamCaptureModeThreadLocal),
                     "cudaStreamBeginCapture");
  bool built = captured &&
               ok(st,
                  cudaMemcpyAsync(dev, ctx.pinned.ptr, bytes,
                                  cudaMemcpyHostToDevice, ctx.hostStream),
                  "cudaMemcpyAsync (to device)") &&
               run(ctx, st, dev, batch, m, n, steps, coeffs, ncoeffs, eps,
                   precision, tileGram, tileSquare) &&
               ok(st,
                  cudaMemcpyAsync(ctx.pinned.ptr, dev, bytes,
                                  cudaMemcpyDeviceToHost, ctx.hostStream),
                  "cudaMemcpyAsync (to host)");
  cudaGraph_t graph = nullptr;
  if (captured) {
    cudaError_t end = cudaStreamEndCapture(ctx.hostStream, &graph);
    built = built && ok(st, end, "cudaStreamEndCapture");
  }
  ctx.stream = caller;
  cudaGraphExec_t exec = nullptr;
  built = built && ok(st, cudaGraphInstantiate(&exec, graph, 0),
                      "cudaGraphInstantiate");
  if (graph)
    cudaGraphDestroy(graph);
  if (!built && exec) {
    cudaGraphExecDestroy(exec);
    exec = nullptr;
  }
  return exec;
}

/// The graph of this call and these buffers: cached, else captured. Graphs
/// of buffers since grown can never match again and go first; past 64 live
/// ones, the oldest goes.
cudaGraphExec_t hostGraph(Ctx &ctx, Status &st, size_t bytes, int64_t batch,
                          int64_t m, int64_t n, int64_t steps,
                          const double *coeffs, int64_t ncoeffs, double eps,
                          int precision, int64_t tileGram, int64_t tileSquare) {
  std::string call, buffers;
  for (int64_t v : {batch, m, n, steps, ncoeffs, int64_t(precision), tileGram,
                    tileSquare})
    appendKey(call, v);
  for (int64_t i = 0; i < ncoeffs; ++i)
    appendKey(call, coeffs[i]);
  appendKey(call, eps);
  for (const void *ptr : {ctx.stage.ptr, ctx.pinned.ptr, ctx.w0.ptr, ctx.w1.ptr,
                          ctx.a.ptr, ctx.b.ptr, ctx.partial.ptr, ctx.scale.ptr,
                          ctx.workspace.ptr})
    appendKey(buffers, ptr);
  for (HostGraph &g : ctx.graphs)
    if (g.call == call && g.buffers == buffers)
      return g.exec;
  auto dead = [&](const HostGraph &g) { return g.buffers != buffers; };
  for (HostGraph &g : ctx.graphs)
    if (dead(g))
      cudaGraphExecDestroy(g.exec);
  ctx.graphs.erase(std::remove_if(ctx.graphs.begin(), ctx.graphs.end(), dead),
                   ctx.graphs.end());
  if (ctx.graphs.size() >= 64) {
    cudaGraphExecDestroy(ctx.graphs.front().exec);
    ctx.graphs.erase(ctx.graphs.begin());
  }
  cudaGraphExec_t exec =
      captureHostCall(ctx, st, bytes, batch, m, n, steps, coeffs, ncoeffs, eps,
                      precision, tileGram, tileSquare);
  if (exec)
    ctx.graphs.push_back({call, buffers, exec});
  return exec;
}

/// muon_cuda_ns_host through a graph, when the products are whole (small
/// matrices, where launches cost more than the arithmetic). Returns false
/// with `handled` unset when the call should take the plain path instead.
bool runHostGraph(Ctx &ctx, Status &st, float *x, size_t bytes, int64_t batch,
                  int64_t m, int64_t n, int64_t steps, const double *coeffs,
                  int64_t ncoeffs, double eps, int precision, int64_t tileGram,
                  int64_t tileSquare, bool &handled) {
  handled = false;
  int64_t p = m < n ? m : n;
  if (!ctx.useGraphs || !x || !coeffs || bytes == 0 || batch < 1 ||
      batch > 65535 || steps < 0 || (ncoeffs != 3 && ncoeffs != 3 * steps) ||
      (precision != MUON_CUDA_FP32 && precision != MUON_CUDA_BF16))
    return false;
  for (int64_t tile : {tileGram, tileSquare})
    if (!resolveTile(tile, p, precision) || tile < p)
      return false;
  if (!ctx.hostStream &&
      (cudaStreamCreateWithFlags(&ctx.hostStream, cudaStreamNonBlocking) !=
           cudaSuccess ||
       cudaEventCreateWithFlags(&ctx.callerDone, cudaEventDisableTiming) !=
           cudaSuccess))
    return withoutGraphs(ctx, handled);
  Status reserve;
  if (!ok(reserve, ctx.stage.reserve(bytes), "cudaMalloc (staging)") ||
      !ok(reserve, ctx.pinned.reserve(bytes), "cudaMallocHost (staging)") ||
      !reserveWork(ctx, reserve, batch, m, n, precision))
    return withoutGraphs(ctx, handled);
  Status capture;
  cudaGraphExec_t exec =
      hostGraph(ctx, capture, bytes, batch, m, n, steps, coeffs, ncoeffs, eps,
                precision, tileGram, tileSquare);
  if (!exec)
    return withoutGraphs(ctx, handled);
  handled = true;
  std::memcpy(ctx.pinned.ptr, x, bytes);
  // After whatever the caller's stream still runs on the same buffers
  // (muon_cuda_ns returns without waiting).
  if (!ok(st, cudaEventRecord(ctx.callerDone, ctx.stream), "cudaEventRecord") ||
      !ok(st, cudaStreamWaitEvent(ctx.hostStream, ctx.callerDone, 0),
          "cudaStreamWaitEvent") ||
      !ok(st, cudaGraphLaunch(exec, ctx.hostStream), "cudaGraphLaunch") ||
      !ok(st, cudaStreamSynchronize(ctx.hostStream), "cudaStreamSynchronize"))
    return false;
  std::memcpy(x, ctx.pinned.ptr, bytes);
  return true;
}

} // namespace

extern "C" {

int muon_cuda_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

int muon_cuda_ns_create(muon_cuda_ns_context **out, void *stream) {
  if (!out)
    return 1;
  *out = nullptr;
  if (muon_cuda_device_count() == 0) {
    createError = "no CUDA device (cudaGetDeviceCount found none)";
    return 1;
  }
  auto *ctx = new muon_cuda_ns_context();
  ctx->stream = static_cast<cudaStream_t>(stream);
  cublasStatus_t st = cublasCreate(&ctx->blas);
  if (st != CUBLAS_STATUS_SUCCESS) {
    createError = "cublasCreate: " + cublasName(st);
    delete ctx;
    return 1;
  }
  // 32 MiB: what cuBLAS reserves by default on Hopper.
  cudaError_t err = ctx->workspace.reserve(32u << 20);
  if (err != cudaSuccess) {
    createError = std::string("cudaMalloc (cuBLAS workspace): ") +
                  cudaGetErrorString(err);
    cublasDestroy(ctx->blas);
    delete ctx;
    return 1;
  }
  const char *graphs = std::getenv("MUON_RT_CUDA_GRAPHS");
  ctx->useGraphs = !(graphs && std::strcmp(graphs, "0") == 0);
  createError.clear();
  *out = ctx;
  return 0;
}

void muon_cuda_ns_destroy(muon_cuda_ns_context *ctx) {
  if (!ctx)
    return;
  for (TileArrays &t : ctx->tiles)
    t.dev.release();
  for (HostGraph &g : ctx->graphs)
    cudaGraphExecDestroy(g.exec);
  if (ctx->hostStream)
    cudaStreamDestroy(ctx->hostStream);
  if (ctx->callerDone)
    cudaEventDestroy(ctx->callerDone);
  ctx->pinned.release();
  for (DeviceBuffer *b :
       {&ctx->w0, &ctx->w1, &ctx->a, &ctx->b, &ctx->partial, &ctx->scale,
        &ctx->stage, &ctx->workspace})
    b->release();
  cublasDestroy(ctx->blas);
  delete ctx;
}

const char *muon_cuda_ns_error(const muon_cuda_ns_context *ctx) {
  return ctx ? ctx->error.c_str() : createError.c_str();
}

int muon_cuda_ns(muon_cuda_ns_context *ctx, float *x, int64_t batch,
                 int64_t m, int64_t n, int64_t steps, const double *coeffs,
                 int64_t ncoeffs, double eps, int precision, int64_t tile) {
  return muon_cuda_ns_tiles(ctx, x, batch, m, n, steps, coeffs, ncoeffs, eps,
                            precision, tile, tile);
}

int muon_cuda_ns_tiles(muon_cuda_ns_context *ctx, float *x, int64_t batch,
                       int64_t m, int64_t n, int64_t steps,
                       const double *coeffs, int64_t ncoeffs, double eps,
                       int precision, int64_t tile_gram, int64_t tile_square) {
  if (!ctx)
    return 1;
  // Each launch is checked with cudaGetLastError: start from a clean slate
  // (a caller's earlier not-ready query would otherwise be blamed here).
  cudaGetLastError();
  Status st;
  bool done =
      run(*ctx, st, x, batch, m, n, steps, coeffs, ncoeffs, eps, precision,
          tile_gram, tile_square);
  ctx->error = st.error;
  return done ? 0 : 1;
}

int muon_cuda_ns_host(muon_cuda_ns_context *ctx, float *x, int64_t batch,
                      int64_t m, int64_t n, int64_t steps,
                      const double *coeffs, int64_t ncoeffs, double eps,
                      int precision, int64_t tile) {
  if (!ctx)
    return 1;
  cudaGetLastError(); // as in muon_cuda_ns
  Status st;
  size_t bytes = (size_t)(batch > 0 ? batch : 0) * (size_t)(m > 0 ? m : 0) *
                 (size_t)(n > 0 ? n : 0) * sizeof(float);
  bool handled = false;
  bool done = runHostGraph(*ctx, st, x, bytes, batch, m, n, steps, coeffs,
                           ncoeffs, eps, precision, tile, tile, handled);
  if (handled) {
    ctx->error = st.error;
    return done ? 0 : 1;
  }
  float *dev = nullptr;
  done = x ? true : st.fail("x is null");
  if (done && bytes > 0) {
    done = ok(st, ctx->stage.reserve(bytes), "cudaMalloc (staging)");
    dev = static_cast<float *>(ctx->stage.ptr);
  }
  done = done && (bytes == 0 ||
                  ok(st,
                     cudaMemcpyAsync(dev, x, bytes, cudaMemcpyHostToDevice,
                                     ctx->stream),
                     "cudaMemcpyAsync (to device)"));
  done = done && run(*ctx, st, dev ? dev : x, batch, m, n, steps, coeffs,
                     ncoeffs, eps, precision, tile, tile);
  done = done &&
         ok(st,
            cudaMemcpyAsync(x, dev, bytes, cudaMemcpyDeviceToHost,
                            ctx->stream),
            "cudaMemcpyAsync (to host)") &&
         ok(st, cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize");
  ctx->error = st.error;
  return done ? 0 : 1;
}

int muon_cuda_set_device(int index) {
  cudaError_t err = cudaSetDevice(index);
  if (err != cudaSuccess) {
    createError = "cudaSetDevice(" + std::to_string(index) +
                  "): " + cudaGetErrorString(err);
    return 1;
  }
  return 0;
}

int64_t muon_cuda_ns_auto_tile(int64_t p, int precision) {
  (void)precision;
  // Eight tiles a side: 9/16 of each symmetric product. Smaller Gram
  // matrices gain less than the extra launches and the mirror cost.
  for (int64_t nb : {8, 4}) {
    int64_t t = p / nb;
    if (p % nb == 0 && t >= 512 && t % 128 == 0)
      return t;
  }
  return p;
}

double muon_cuda_ns_flops(int64_t batch, int64_t m, int64_t n, int64_t steps) {
  double p = (double)(m < n ? m : n), q = (double)(m < n ? n : m);
  return (double)batch * (double)steps * (4 * p * p * q + 2 * p * p * p);
}

} // extern "C"
