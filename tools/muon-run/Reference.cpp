//===- Reference.cpp - Single-device Muon, written plainly ----------------===//

#include "Reference.h"

#include <array>

#include <cblas.h>

#include <algorithm>
#include <cmath>

using namespace muon::run;

namespace {

/// C = A (r x k) * B (k x c), all row-major, fp32.
std::vector<float> matmul(const std::vector<float> &a,
                          const std::vector<float> &b, int64_t r, int64_t k,
                          int64_t c) {
  std::vector<float> out(r * c, 0.0f);
  if (r && c && k)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, c, k, 1.0f,
                a.data(), k, b.data(), c, 0.0f, out.data(), c);
  return out;
}

std::vector<float> transpose(const std::vector<float> &a, int64_t r,
                             int64_t c) {
  std::vector<float> t(a.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      t[j * r + i] = a[i * c + j];
  return t;
}

/// Newton-Schulz on one rows x cols matrix, returned as a new matrix.
std::vector<float> newtonSchulz(std::vector<float> x, int64_t rows,
                                int64_t cols, const Hyper &h) {
  bool tall = rows > cols;
  if (tall) {
    x = transpose(x, rows, cols);
    std::swap(rows, cols);
  }
  double sq = 0;
  for (float v : x)
    sq += static_cast<double>(v) * v;
  // Scaled in f64: a subnormal norm (eps = 0) gives an s past the f32
  // range, and an all-zero matrix (eps = 0) stays zero.
  double d = std::sqrt(sq) + h.eps;
  double s = d > 0 ? 1.0 / d : 0.0;
  for (float &v : x)
    v = static_cast<float>(v * s);
  for (int64_t it = 0; it < h.nsSteps; ++it) {
    size_t base = h.coeffs.size() == 3 ? 0 : 3 * it;
    float a = h.coeffs[base], b = h.coeffs[base + 1], c = h.coeffs[base + 2];
    std::vector<float> xt = transpose(x, rows, cols);
    std::vector<float> A = matmul(x, xt, rows, cols, rows);
    std::vector<float> AA = matmul(A, A, rows, rows, rows);
    std::vector<float> B(A.size());
    for (size_t i = 0; i < A.size(); ++i)
      B[i] = b * A[i] + c * AA[i];
    std::vector<float> BX = matmul(B, x, rows, rows, cols);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = a * x[i] + BX[i];
  }
  return tall ? transpose(x, rows, cols) : x;
}

} // namespace

double muon::run::referenceNsFlops(int64_t rows, int64_t cols, int64_t steps) {
  double p = std::min(rows, cols), q = std::max(rows, cols);
  return steps * (2 * p * p * q + 2 * p * p * p + 2 * p * p * q);
}

void muon::run::referenceStep(std::vector<float> &p, std::vector<float> &m,
                              const std::vector<float> &g,
                              const std::vector<int64_t> &shape, const Hyper &h,
                              const std::vector<int64_t> &blockSizes,
                              bool blockRows) {
  size_t r = shape.size();
  int64_t rows = shape[r - 2], cols = shape[r - 1];
  float beta = static_cast<float>(h.momentum);
  float oneMinusBeta = static_cast<float>(1.0 - h.momentum);
  std::vector<float> u(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    // lerp(x, y, w) = x + w (y - x), as torch.lerp
    m[i] = h.sumForm ? beta * m[i] + g[i] : m[i] + oneMinusBeta * (g[i] - m[i]);
    u[i] = !h.nesterov ? m[i]
           : h.sumForm ? g[i] + beta * m[i]
                       : g[i] + beta * (m[i] - g[i]);
  }
  float lr = static_cast<float>(h.lr);
  float decay = static_cast<float>(1.0 - h.lr * h.weightDecay);
  // The blocks of one matrix as (first row, first col, rows, cols).
  std::vector<std::array<int64_t, 4>> blocks;
  if (blockSizes.empty()) {
    blocks.push_back({0, 0, rows, cols});
  } else {
    int64_t at = 0;
    for (int64_t size : blockSizes) {
      blocks.push_back(blockRows ? std::array<int64_t, 4>{at, 0, size, cols}
                                 : std::array<int64_t, 4>{0, at, rows, size});
      at += size;
    }
  }
  int64_t mat = rows * cols;
  for (size_t off = 0; mat && off < p.size(); off += mat) {
    for (const auto &[r0, c0, br, bc] : blocks) {
      std::vector<float> one(br * bc);
      for (int64_t i = 0; i < br; ++i)
        for (int64_t j = 0; j < bc; ++j)
          one[i * bc + j] = u[off + (r0 + i) * cols + c0 + j];
      std::vector<float> o = newtonSchulz(one, br, bc, h);
      double ratio = static_cast<double>(br) / static_cast<double>(bc);
      double scale =
          h.lrScale == LrScale::MatchRmsAdamW
              ? 0.2 * std::sqrt(static_cast<double>(std::max(br, bc)))
          : h.lrScale == LrScale::SpectralUnclamped
              ? std::sqrt(ratio)
              : std::sqrt(std::max(1.0, ratio));
      float s = static_cast<float>(scale);
      for (int64_t i = 0; i < br; ++i)
        for (int64_t j = 0; j < bc; ++j) {
          float &x = p[off + (r0 + i) * cols + c0 + j];
          x = x * decay - lr * (o[i * bc + j] * s);
        }
    }
  }
}
