//===- NsCoefficients.cpp - Whether Newton-Schulz stays bounded -----------===//

#include "muon/Dialect/Muon/Transforms/NsCoefficients.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
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

void muon::optim::warnIfNsDiverges(StepOp step) {
  int64_t steps = std::min<int64_t>(step.getNsSteps(), kNsGrowthIterations);
  SmallVector<std::array<double, 3>> triples;
  for (int64_t i = 0; i < steps; ++i)
    triples.push_back(step.getCoeffsOf(i));
  bool bf16 = step.getNsElementType().isBF16();
  std::optional<NsGrowth> g = nsGrowthPastBound(triples, 0.0, 1.0);
  if (!g && bf16)
    g = nsGrowthPastBound(triples, 1.0, 1.0 + std::ldexp(1.0, -8));
  if (!g)
    return;
  // At the step's location, without the step printed after it.
  InFlightDiagnostic d = mlir::emitWarning(step.getLoc());
  if (g->start > 1.0)
    d << "ns_coeffs may diverge with ns_dtype = bf16: a singular value of "
      << llvm::formatv("{0:F4}", g->start)
      << " (normalisation gives at most 1; bf16 rounding of X reaches 1 + "
         "2^-8 = 1.0039)";
  else
    d << "ns_coeffs diverge: a singular value of "
      << llvm::formatv("{0:F4}", g->start) << " after normalisation";
  d << " ends at ";
  if (!std::isfinite(g->end))
    d << "infinity";
  else
    d << llvm::formatv("{0:e2}", g->end);
  d << " after " << steps << " iterations";
  if (g->start > 1.0)
    d << "; use coefficients with a safety margin (Polar Express: every "
         "triple but the last as (a/1.01, b/1.01^3, c/1.01^5)) or ns_dtype "
         "= f32";
  else
    d << "; an orthogonalisation takes every singular value in [0, 1] "
         "towards 1";
}
