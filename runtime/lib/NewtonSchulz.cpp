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
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "State.h"
#include "Tensor.h"
#include "Trace.h"

#include <cblas.h>

#include <cmath>
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

void orthogonalise(float *g, int64_t m, int64_t n, int64_t steps,
                   const std::vector<double> &coeffs, double eps) {
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
    // A = X X^T: symmetric, so one triangle (ssyrk, p^2 q FLOPs instead of
    // 2 p^2 q), mirrored.
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, p, q, 1.0f,
                x.data(), q, 0.0f, a.data(), p);
    mirrorUpper(a.data(), p);
    // B = b A + c A A: A A = A A^T is symmetric too (p^3 instead of 2 p^3).
    for (int64_t k = 0; k < p * p; ++k)
      b[k] = cb * a[k];
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, p, p, cc, a.data(),
                p, 1.0f, b.data(), p);
    mirrorUpper(b.data(), p);
    // X = a X + B X
    for (int64_t k = 0; k < p * q; ++k)
      y[k] = ca * x[k];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p, q, p, 1.0f,
                b.data(), p, x.data(), q, 1.0f, y.data(), q);
    x.swap(y);
  }

  if (transposed) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        g[i * n + j] = x[j * m + i];
  } else {
    std::copy(x.begin(), x.end(), g);
  }
  muon_rt_counters &c = counters();
  c.ns_matrices++;
  c.ns_flops += static_cast<double>(steps) *
                (4.0 * p * p * q + 2.0 * p * p * p);
}

} // namespace

extern "C" void _mlir_ciface_muon_rt_newton_schulz(muon_rt_memref *xm,
                                                   int64_t steps,
                                                   muon_rt_f64_array *c,
                                                   double eps) {
  TensorView x = viewOf(xm, "newton_schulz", "");
  if (x.shape.size() < 2)
    fatal("newton_schulz", "", "operand " + x.shapeStr() + " has fewer than 2 dims");
  std::vector<double> coeffs;
  for (int64_t i = 0; c && i < c->size; ++i)
    coeffs.push_back(c->aligned[c->offset + i * c->stride]);
  if (steps < 1 ||
      (coeffs.size() != 3 && static_cast<int64_t>(coeffs.size()) != 3 * steps))
    fatal("newton_schulz", "",
          std::to_string(coeffs.size()) + " coefficients for " +
              std::to_string(steps) + " steps (need 3 or 3 * steps)");
  int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t m = x.shape[r - 2], n = x.shape[r - 1];
  int64_t batch = x.numElements() / std::max<int64_t>(1, m * n);
  counters().ns_calls++;
  if (m == 0 || n == 0)
    return;
  double start = tracing() ? traceNow() : 0.0;
  for (int64_t i = 0; i < batch; ++i)
    orthogonalise(x.data + i * m * n, m, n, steps, coeffs, eps);
  if (tracing())
    traceEvent(TraceLane::Compute, "newton_schulz " + x.shapeStr(), start,
               traceNow());
}
