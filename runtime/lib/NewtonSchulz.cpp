//===- NewtonSchulz.cpp - Newton-Schulz orthogonalisation on BLAS ---------===//
//
// X <- G; if m > n: X <- X^T; X <- X / (||X||_F + eps)
// per iteration i: A <- X X^T; B <- b_i A + c_i A A; X <- a_i X + B X
// if transposed: X <- X^T
//
// Working on the short side keeps the Gram matrix p x p (p = min(m, n)). The
// counters record the standard count, 4 p^2 q + 2 p^3 FLOPs per iteration;
// the two symmetric products (A = X X^T and A A) are computed one triangle
// at a time (ssyrk), so the work done is 3 p^2 q + p^3. a joins B's
// diagonal, so that X' = (aI + B) X is one product, which reads B's upper
// triangle only (ssymm).
//
// bf16 mode emulates bf16 operands with fp32 accumulation (what tensor
// cores do): every product's operands are rounded to bf16 (nearest even),
// its sums stay fp32; a joins B's diagonal in fp32 before B is rounded, so
// X' = (aI + B) X is one product. X, A and B themselves stay fp32 between
// products (the GPU library stores them in bf16: docs/muon-dialect.md).
//
//===----------------------------------------------------------------------===//

#include "NewtonSchulz.h"
#include "Call.h"
#include "Cblas.h"
#include "Errors.h"
#include "State.h"
#include "Tensor.h"
#include "Trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

using namespace muon::rt;

namespace {

/// Side of the square tiles that the transposing copies below go through:
/// a tile's rows of source and destination (32 x 128 bytes each) stay in
/// the L1 cache, where an element-by-element transpose of a large matrix
/// fetches a cache line per element of the strided side.
constexpr int64_t kTile = 32;

/// Copies the upper triangle of the row-major p x p matrix `a` into its
/// lower triangle (what ssyrk leaves unwritten), tile by tile.
void mirrorUpper(float *a, int64_t p) {
  for (int64_t i0 = 0; i0 < p; i0 += kTile)
    for (int64_t j0 = 0; j0 <= i0; j0 += kTile)
      for (int64_t i = i0; i < std::min(i0 + kTile, p); ++i)
        for (int64_t j = j0; j < std::min({j0 + kTile, p, i}); ++j)
          a[i * p + j] = a[j * p + i];
}

/// to = s from^T, `from` row-major rows x cols, tile by tile.
void transpose(float *to, const float *from, int64_t rows, int64_t cols,
               float s) {
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0; i < std::min(i0 + kTile, rows); ++i)
        for (int64_t j = j0; j < std::min(j0 + kTile, cols); ++j)
          to[j * rows + i] = s * from[i * cols + j];
}

/// b[i][j] += s a[i][j] for j >= i, then d added to the diagonal: the upper
/// triangle of the row-major p x p matrix `b` (the lower is not touched).
void addUpper(float *b, const float *a, int64_t p, float s, float d) {
  for (int64_t i = 0; i < p; ++i) {
    float *bi = b + i * p;
    const float *ai = a + i * p;
    for (int64_t j = i; j < p; ++j)
      bi[j] += s * ai[j];
    bi[i] += d;
  }
}

/// `v` rounded to the nearest bf16 (ties to even), as an fp32 value.
float roundToBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) // inf, nan: keep
    return v;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

void roundAll(float *v, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    v[k] = roundToBf16(v[k]);
}

/// Working memory of `n` floats, not initialised: every use writes it
/// before reading it (zeroing it was a pass over memory per call).
using Scratch = std::unique_ptr<float[]>;
Scratch scratch(int64_t n) { return Scratch(new float[n > 0 ? n : 1]); }

/// One iteration with bf16 operands: A = X X^T, B = b A + c A A,
/// X' = (a I + B) X.
void bf16Iteration(Scratch &x, Scratch &y, float *a, float *b, int64_t p,
                   int64_t q, float ca, float cb, float cc) {
  std::vector<float> xr(x.get(), x.get() + p * q);
  roundAll(xr.data(), p * q);
  progressRequests();
  muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, q, 1.0f,
                    xr.data(), q, 0.0f, a, p);
  mirrorUpper(a, p);
  std::vector<float> ar(a, a + p * p);
  roundAll(ar.data(), p * p);
  for (int64_t k = 0; k < p * p; ++k)
    b[k] = cb * a[k];
  progressRequests();
  muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, p, cc,
                    ar.data(), p, 1.0f, b, p);
  mirrorUpper(b, p);
  for (int64_t k = 0; k < p; ++k)
    b[k * p + k] += ca;
  roundAll(b, p * p);
  progressRequests();
  muon_cblas(sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, p, q, p, 1.0f, b,
                    p, xr.data(), q, 0.0f, y.get(), q);
  x.swap(y);
}

/// Orthogonalises the m x n matrix `g` into `out` (which may be `g`).
void orthogonalise(const float *g, float *out, int64_t m, int64_t n,
                   int64_t steps, const std::vector<double> &coeffs, double eps,
                   bool bf16) {
  bool transposed = m > n;
  int64_t p = transposed ? n : m, q = transposed ? m : n;
  Scratch x = scratch(p * q), y = scratch(p * q), as = scratch(p * p),
          bs = scratch(p * p);
  float *a = as.get(), *b = bs.get();
  // X = G / (||G||_F + eps), normalised as it is copied (or transposed) in.
  double norm = 0;
  for (int64_t k = 0; k < p * q; ++k)
    norm += static_cast<double>(g[k]) * g[k];
  // An all-zero operand with eps = 0 has nothing to scale: s = 0 keeps it
  // zero (1 / 0 would make it NaN), and zero stays zero through the loop.
  double d = std::sqrt(norm) + eps;
  double s = d > 0 ? 1.0 / d : 0.0;
  // With eps = 0 an operand of subnormal norm has s beyond the f32 range:
  // 2^64 of it is applied afterwards, exactly (a power of two), so X is
  // finite as the formula says.
  bool huge = s > std::numeric_limits<float>::max();
  float inv = static_cast<float>(huge ? s / 0x1p64 : s);
  if (transposed) {
    transpose(x.get(), g, m, n, inv);
  } else {
    for (int64_t k = 0; k < p * q; ++k)
      x[k] = g[k] * inv;
  }
  if (huge)
    for (int64_t k = 0; k < p * q; ++k)
      x[k] *= 0x1p64f;
  // An fp32 result that needs no transposing is written by the last
  // product itself (`out` may be `g`, which is no longer read by then).
  bool lastIntoOut = !bf16 && !transposed && steps > 0;

  for (int64_t i = 0; i < steps; ++i) {
    const double *abc = coeffs.size() == 3 ? coeffs.data() : &coeffs[3 * i];
    float ca = abc[0], cb = abc[1], cc = abc[2];
    if (bf16) {
      bf16Iteration(x, y, a, b, p, q, ca, cb, cc);
      continue;
    }
    // A = X X^T: symmetric, so one triangle (ssyrk, p^2 q FLOPs instead of
    // 2 p^2 q), mirrored: the next product reads A whole. Before each
    // product, collectives in flight (prefetched gathers, the last round's
    // scatters) progress.
    progressRequests();
    muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, q, 1.0f,
                      x.get(), q, 0.0f, a, p);
    mirrorUpper(a, p);
    // B = b A + c A A: A A = A A^T is symmetric too (p^3 instead of 2 p^3),
    // its upper triangle computed into B (beta 0: B's old contents are not
    // read), then b A and a I added to that triangle in one pass, so that
    // X' = a X + B X = (a I + B) X is one product.
    progressRequests();
    muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, p, cc, a, p,
                      0.0f, b, p);
    addUpper(b, a, p, cb, ca);
    // X' = (a I + B) X, B read from its upper triangle (ssymm): no pass to
    // mirror it, none to scale X.
    progressRequests();
    bool last = lastIntoOut && i + 1 == steps;
    muon_cblas(ssymm)(CblasRowMajor, CblasLeft, CblasUpper, p, q, 1.0f, b, p,
                      x.get(), q, 0.0f, last ? out : y.get(), q);
    x.swap(y);
  }

  if (transposed)
    transpose(out, x.get(), n, m, 1.0f);
  else if (!lastIntoOut)
    std::copy(x.get(), x.get() + p * q, out);
  countNsMatrices(1, m, n, steps);
}

} // namespace

NsCall muon::rt::readNsCall(muon_rt_memref *xm, muon_rt_memref *outm,
                            int64_t steps, muon_rt_f64_array *c,
                            const char *op) {
  NsCall call;
  call.x = viewOf(xm, op, "");
  call.out = viewOf(outm, op, "");
  const TensorView &x = call.x;
  if (x.shape.size() < 2)
    fatal(op, "", "operand " + x.shapeStr() + " has fewer than 2 dims");
  if (call.out.shape != x.shape)
    fatal(op, "",
          "result buffer " + call.out.shapeStr() + " for operand " +
              x.shapeStr() + ": the shapes must be equal");
  for (int64_t i = 0; c && i < c->size; ++i)
    call.coeffs.push_back(c->aligned[c->offset + i * c->stride]);
  if (steps < 1)
    fatal(op, "", std::to_string(steps) + " steps; need at least 1");
  if (call.coeffs.size() != 3 &&
      static_cast<int64_t>(call.coeffs.size()) != 3 * steps)
    fatal(op, "",
          std::to_string(call.coeffs.size()) + " coefficients for " +
              std::to_string(steps) + " steps (need 3 or 3 * steps)");
  int64_t r = static_cast<int64_t>(x.shape.size());
  call.m = x.shape[r - 2];
  call.n = x.shape[r - 1];
  call.batch = x.numElements() / std::max<int64_t>(1, call.m * call.n);
  counters().ns_calls++;
  return call;
}

void muon::rt::countNsMatrices(int64_t count, int64_t m, int64_t n,
                               int64_t steps) {
  double p = static_cast<double>(std::min(m, n));
  double q = static_cast<double>(std::max(m, n));
  muon_rt_counters &c = counters();
  c.ns_matrices += count;
  c.ns_flops += static_cast<double>(count) * static_cast<double>(steps) *
                (4.0 * p * p * q + 2.0 * p * p * p);
}

extern "C" void
_mlir_ciface_muon_rt_newton_schulz(muon_rt_memref *xm, muon_rt_memref *outm,
                                   int64_t steps, muon_rt_f64_array *c,
                                   double eps, int64_t precision) {
  if (precision != MUON_RT_NS_FP32 && precision != MUON_RT_NS_BF16)
    fatal("newton_schulz", "",
          "unknown precision " + std::to_string(precision) +
              " (0 = fp32, 1 = bf16)");
  NsCall call = readNsCall(xm, outm, steps, c, "newton_schulz");
  int64_t m = call.m, n = call.n;
  if (m == 0 || n == 0)
    return;
  double start = tracing() ? traceNow() : 0.0;
  for (int64_t i = 0; i < call.batch; ++i)
    orthogonalise(call.x.data + i * m * n, call.out.data + i * m * n, m, n,
                  steps, call.coeffs, eps, precision == MUON_RT_NS_BF16);
  if (tracing())
    traceEvent(TraceLane::Compute, "newton_schulz " + call.x.shapeStr(),
               start, traceNow());
}
