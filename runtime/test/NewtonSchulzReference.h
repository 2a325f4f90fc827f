//===- NewtonSchulzReference.h - Newton-Schulz in float64 for checks -*- C++
//-*-===//
//
// The formula of docs/muon-dialect.md in float64, written from the formula
// alone (no BLAS, no symmetry): X <- G (transposed if m > n) / (||G||_F +
// eps); per iteration A = X X^T, B = b A + c A A, X = a X + B X; transposed
// back. The checks of the CPU runtime (unittests) and of the GPU library
// (muon-cuda-ns-check) compare against it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_TEST_NEWTONSCHULZREFERENCE_H
#define MUON_RUNTIME_TEST_NEWTONSCHULZREFERENCE_H

#include <cmath>
#include <cstdint>
#include <vector>

namespace muon {
namespace test {

/// Newton-Schulz of one row-major m x n matrix `g`; `c` holds one (a, b, c)
/// triple or one per iteration.
inline std::vector<double> newtonSchulzReference(const float *g, int64_t m,
                                                 int64_t n, int64_t steps,
                                                 const std::vector<double> &c,
                                                 double eps) {
  bool tr = m > n;
  int64_t p = tr ? n : m, q = tr ? m : n;
  std::vector<double> x(p * q), a(p * p), b(p * p), y(p * q);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      (tr ? x[j * m + i] : x[i * n + j]) = g[i * n + j];
  double norm = 0;
  for (double v : x)
    norm += v * v;
  norm = std::sqrt(norm) + eps;
  for (double &v : x)
    v = norm == 0 ? 0.0 : v / norm; // all zero with eps = 0: stays zero
  for (int64_t s = 0; s < steps; ++s) {
    const double *abc = c.size() == 3 ? c.data() : &c[3 * s];
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < p; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < q; ++k)
          acc += x[i * q + k] * x[j * q + k];
        a[i * p + j] = acc;
      }
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < p; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < p; ++k)
          acc += a[i * p + k] * a[k * p + j];
        b[i * p + j] = abc[1] * a[i * p + j] + abc[2] * acc;
      }
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < q; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < p; ++k)
          acc += b[i * p + k] * x[k * q + j];
        y[i * q + j] = abc[0] * x[i * q + j] + acc;
      }
    x.swap(y);
  }
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      out[i * n + j] = tr ? x[j * m + i] : x[i * n + j];
  return out;
}

} // namespace test
} // namespace muon

#endif // MUON_RUNTIME_TEST_NEWTONSCHULZREFERENCE_H
