//===- NewtonSchulzTest.cpp - The runtime's Newton-Schulz on the CPU ------===//
//
// muon_rt_newton_schulz against a float64 reference of the formula in
// docs/muon-dialect.md, on shapes around the 32-element tiles its copies
// work in (wide, tall: transposed, batches, in place), and on an operand
// whose norm is subnormal with eps = 0 (1 / norm then exceeds the f32
// range) or zero with eps = 0 (it stays zero, not NaN), in both modes.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include "NewtonSchulzReference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

const double kCoeffs[] = {3.4445, -4.7750, 2.0315};

/// A ranked descriptor over `data` with `shape`, row-major.
struct Memref {
  std::vector<int64_t> fields;
  muon_rt_memref ref;
  Memref(float *data, std::vector<int64_t> shape) {
    fields = {reinterpret_cast<int64_t>(data), reinterpret_cast<int64_t>(data),
              0};
    fields.insert(fields.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * shape[i + 1];
    fields.insert(fields.end(), strides.begin(), strides.end());
    ref = {static_cast<int64_t>(shape.size()), fields.data()};
  }
};

/// Runs a batch of `batch` m x n matrices (in place or not) and compares
/// every one with the reference.
void check(int64_t batch, int64_t m, int64_t n, bool inPlace, float scale,
           double eps, double tolerance) {
  std::mt19937 gen(static_cast<unsigned>(batch * 1000003 + m * 1009 + n));
  std::normal_distribution<float> normal;
  std::vector<float> g(batch * m * n);
  for (float &v : g)
    v = normal(gen) * scale;
  std::vector<float> x = g, out(g.size(), NAN);
  std::vector<int64_t> shape = {m, n};
  if (batch > 1)
    shape.insert(shape.begin(), batch);
  Memref in(x.data(), shape), result(inPlace ? x.data() : out.data(), shape);
  double coeffs[] = {kCoeffs[0], kCoeffs[1], kCoeffs[2]};
  muon_rt_f64_array c = {coeffs, coeffs, 0, 3, 1};
  _mlir_ciface_muon_rt_newton_schulz(&in.ref, &result.ref, 5, &c, eps,
                                     MUON_RT_NS_FP32);
  const std::vector<float> &got = inPlace ? x : out;
  for (int64_t k = 0; k < batch; ++k) {
    std::vector<double> want = muon::test::newtonSchulzReference(
        g.data() + k * m * n, m, n, 5, {kCoeffs[0], kCoeffs[1], kCoeffs[2]},
        eps);
    for (int64_t e = 0; e < m * n; ++e) {
      ASSERT_NEAR(got[k * m * n + e], want[e], tolerance)
          << batch << "x" << m << "x" << n << " matrix " << k << " element "
          << e;
    }
  }
  if (!inPlace) {
    EXPECT_EQ(x, g) << "the operand was written";
  }
}

TEST(RuntimeNewtonSchulz, WideTallAndSquareAroundTiles) {
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{1, 7},
                                                              {7, 1},
                                                              {31, 33},
                                                              {33, 31},
                                                              {32, 32},
                                                              {33, 70},
                                                              {70, 33},
                                                              {65, 65}})
    check(1, m, n, /*inPlace=*/false, 1.0f, 1e-7, 2e-5);
}

TEST(RuntimeNewtonSchulz, BatchesInPlace) {
  check(3, 33, 20, /*inPlace=*/true, 1.0f, 1e-7, 2e-5);
  check(2, 20, 33, /*inPlace=*/true, 1.0f, 1e-7, 2e-5);
  check(2, 40, 40, /*inPlace=*/false, 1.0f, 1e-7, 2e-5);
}

TEST(RuntimeNewtonSchulz, SubnormalNormWithoutEps) {
  // ||G|| about 1e-39: 1 / ||G|| is past the largest f32, yet X is finite.
  check(1, 1, 1, /*inPlace=*/false, 1e-39f, 0.0, 2e-5);
  check(1, 4, 6, /*inPlace=*/false, 1e-41f, 0.0, 2e-5);
}

TEST(RuntimeNewtonSchulz, ZeroWithoutEpsStaysZero) {
  // 1 / (0 + 0) would make every element NaN; the result is zero instead.
  for (int mode : {MUON_RT_NS_FP32, MUON_RT_NS_BF16})
    for (auto [m, n] :
         std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {5, 3}}) {
      std::vector<float> g(m * n, 0.0f), out(m * n, NAN);
      Memref in(g.data(), {m, n}), result(out.data(), {m, n});
      double coeffs[] = {kCoeffs[0], kCoeffs[1], kCoeffs[2]};
      muon_rt_f64_array c = {coeffs, coeffs, 0, 3, 1};
      _mlir_ciface_muon_rt_newton_schulz(&in.ref, &result.ref, 5, &c, 0.0,
                                         mode);
      for (float v : out)
        ASSERT_EQ(v, 0.0f) << m << "x" << n << " mode " << mode;
    }
}

} // namespace
