//===- NsCoefficients.cpp - Whether Newton-Schulz stays bounded -----------===//

#include "muon/Dialect/Muon/Transforms/NsCoefficients.h"

#include <algorithm>
#include <cmath>

using namespace muon;
using namespace muon::optim;

std::optional<NsGrowth>
muon::optim::nsGrowthPastBound(llvm::ArrayRef<double> coeffs, int64_t steps,
                               double from, double to) {
  if (coeffs.size() < 3)
    return std::nullopt;
  int64_t n = std::min(steps, kNsGrowthIterations);
  constexpr int kSamples = 4096;
  std::optional<NsGrowth> worst;
  for (int k = 0; k <= kSamples; ++k) {
    double start = from + (to - from) * k / kSamples;
    double s = start;
    for (int64_t i = 0; i < n && std::isfinite(s); ++i) {
      size_t at = coeffs.size() == 3 ? 0 : static_cast<size_t>(3 * i);
      if (at + 2 >= coeffs.size()) // fewer than the verifier requires
        break;
      // Horner's form, as docs/muon-dialect.md gives it.
      double s2 = s * s;
      s = s * (coeffs[at] + s2 * (coeffs[at + 1] + s2 * coeffs[at + 2]));
    }
    double size = std::isfinite(s) ? std::fabs(s) : INFINITY;
    if (size > kNsGrowthBound && (!worst || size > std::fabs(worst->end)))
      worst = NsGrowth{start, std::isfinite(s) ? s : INFINITY};
  }
  return worst;
}
