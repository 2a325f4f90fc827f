//===- NewtonSchulz.cpp - Newton-Schulz orthogonalisation on BLAS ---------===//
//
// X <- G; if m > n: X <- X^T; X <- X / (||X||_F + eps)
// per iteration i: A <- X X^T; B <- b_i A + c_i A A; X <- a_i X + B X
// if transposed: X <- X^T
//
// Working on the short side keeps the Gram matrix p x p (p = min(m, n)). The
// counters record the standard count, 4 p^2 q + 2 p^3 FLOPs per iteration;
// the two symmetric products (A = X X^T and A A) are computed one triangle
// at a time (ssyrk), so the work done is 3 p^2 q + p^3.
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
#include <vector>

using namespace muon::rt;

namespace {

/// Copies the upper triangle of the row-major p x p matrix `a` into its
/// lower triangle (what ssyrk leaves unwritten).
void mirrorUpper(float *a, int64_t p) {
  for (int64_t i = 1; i < p; ++i)
    for (int64_t j = 0; j < i; ++j)
      a[i * p + j] = a[j * p + i];
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

void roundAll(std::vector<float> &v) {
  for (float &x : v)
    x = roundToBf16(x);
}

/// One iteration with bf16 operands: A = X X^T, B = b A + c A A,
/// X' = (a I + B) X.
void bf16Iteration(std::vector<float> &x, std::vector<float> &y,
                   std::vector<float> &a, std::vector<float> &b, int64_t p,
                   int64_t q, float ca, float cb, float cc) {
  std::vector<float> xr(x);
  roundAll(xr);
  progressRequests();
  muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, q, 1.0f,
                    xr.data(), q, 0.0f, a.data(), p);
  mirrorUpper(a.data(), p);
  std::vector<float> ar(a);
  roundAll(ar);
  for (int64_t k = 0; k < p * p; ++k)
    b[k] = cb * a[k];
  progressRequests();
  muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, p, cc,
                    ar.data(), p, 1.0f, b.data(), p);
  mirrorUpper(b.data(), p);
  for (int64_t k = 0; k < p; ++k)
    b[k * p + k] += ca;
  roundAll(b);
  progressRequests();
  muon_cblas(sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, p, q, p, 1.0f,
                    b.data(), p, xr.data(), q, 0.0f, y.data(), q);
  x.swap(y);
}

/// Orthogonalises the m x n matrix `g` into `out` (which may be `g`).
void orthogonalise(const float *g, float *out, int64_t m, int64_t n,
                   int64_t steps, const std::vector<double> &coeffs, double eps,
                   bool bf16) {
  bool transposed = m > n;
  int64_t p = transposed ? n : m, q = transposed ? m : n;
  std::vector<float> x(p * q), y(p * q), a(p * p), b(p * p);
  if (transposed) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        x[j * m + i] = g[i * n + j];
  } else {
    std::copy(g, g + p * q, x.begin());
  }
  double norm = 0;
  for (float v : x)
    norm += static_cast<double>(v) * v;
  float inv = static_cast<float>(1.0 / (std::sqrt(norm) + eps));
  for (float &v : x)
    v *= inv;

  for (int64_t i = 0; i < steps; ++i) {
    const double *abc = coeffs.size() == 3 ? coeffs.data() : &coeffs[3 * i];
    float ca = abc[0], cb = abc[1], cc = abc[2];
    if (bf16) {
      bf16Iteration(x, y, a, b, p, q, ca, cb, cc);
      continue;
    }
    // A = X X^T: symmetric, so one triangle (ssyrk, p^2 q FLOPs instead of
    // 2 p^2 q), mirrored. Before each product, collectives in flight
    // (prefetched gathers, the last round's scatters) progress.
    progressRequests();
    muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, q, 1.0f,
                      x.data(), q, 0.0f, a.data(), p);
    mirrorUpper(a.data(), p);
    // B = b A + c A A: A A = A A^T is symmetric too (p^3 instead of 2 p^3).
    for (int64_t k = 0; k < p * p; ++k)
      b[k] = cb * a[k];
    progressRequests();
    muon_cblas(ssyrk)(CblasRowMajor, CblasUpper, CblasNoTrans, p, p, cc,
                      a.data(), p, 1.0f, b.data(), p);
    mirrorUpper(b.data(), p);
    // X = a X + B X
    for (int64_t k = 0; k < p * q; ++k)
      y[k] = ca * x[k];
    progressRequests();
    muon_cblas(sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, p, q, p, 1.0f,
                      b.data(), p, x.data(), q, 1.0f, y.data(), q);
    x.swap(y);
  }

  if (transposed) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] = x[j * m + i];
  } else {
    std::copy(x.begin(), x.end(), out);
  }
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
