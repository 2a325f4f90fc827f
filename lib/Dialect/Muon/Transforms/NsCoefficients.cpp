//===- NsCoefficients.cpp - Whether Newton-Schulz stays bounded -----------===//

#include "muon/Dialect/Muon/Transforms/NsCoefficients.h"

#include <algorithm>
#include <cmath>

using namespace muon;
using namespace muon::optim;

std::optional<NsGrowth>
muon::optim::nsGrowthPastBound(llvm::ArrayRef<std::array<double, 3>> triples,
                               double from, double to) {
  constexpr int kSamples = 4096;
  std::optional<NsGrowth> worst;
  for (int k = 0; k <= kSamples; ++k) {
    double start = from + (to - from) * k / kSamples;
    double s = start;
    for (const auto &[a, b, c] : triples) {
      if (!std::isfinite(s))
        break;
      // Horner's form, as docs/muon-dialect.md gives it.
      double s2 = s * s;
      s = s * (a + s2 * (b + s2 * c));
    }
    double size = std::isfinite(s) ? std::fabs(s) : INFINITY;
    if (size > kNsGrowthBound && (!worst || size > std::fabs(worst->end)))
      worst = NsGrowth{start, std::isfinite(s) ? s : INFINITY};
  }
  return worst;
}
