//===- NsCoefficients.h - Whether Newton-Schulz stays bounded ---*- C++ -*-===//
//
// Newton-Schulz maps each singular value s of the normalised matrix through
// s <- a_i s + b_i s^3 + c_i s^5, once per iteration. Normalisation puts
// every s in [0, 1]; bf16 rounding of X can put one a little above. Some
// published coefficient schedules (Polar Express without its safety
// factor) send such a value to infinity within a few iterations, and the
// step's result with it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_MUON_TRANSFORMS_NSCOEFFICIENTS_H
#define MUON_DIALECT_MUON_TRANSFORMS_NSCOEFFICIENTS_H

#include "muon/Dialect/Muon/IR/MuonOps.h"

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <optional>

namespace muon {
namespace optim {

/// Where a singular value ends up growing the most.
struct NsGrowth {
  double start = 0; ///< the singular value after normalisation
  double end = 0;   ///< what the iterations make of it, signed (inf when
                    ///< it is not finite)
};

/// The iteration s <- s (a_i + s^2 (b_i + s^2 c_i)) (in double), one
/// iteration per triple of `triples` (the step's first
/// min(ns_steps, kNsGrowthIterations)), started from `from` + k (`to` -
/// `from`) / 4096 for k = 0..4096: the first start whose |end| is largest
/// (a non-finite end counting as infinite), when that is above
/// kNsGrowthBound; nullopt when every end is within it.
std::optional<NsGrowth>
nsGrowthPastBound(llvm::ArrayRef<std::array<double, 3>> triples, double from,
                  double to);

/// How many of a step's iterations the check follows, at most.
constexpr int64_t kNsGrowthIterations = 100;
/// The bound on |end| it checks (an orthogonalisation ends near 1).
constexpr double kNsGrowthBound = 2.0;

/// A warning at `step` when its coefficients do not keep the singular
/// values of the normalised matrix near 1 (nsGrowthPastBound over its
/// first kNsGrowthIterations triples): over [0, 1] they diverge in any
/// precision; with bf16, one rounding above 1 (which the rounding of X
/// reaches) is checked too, where unsafe schedules diverge
/// (docs/muon-dialect.md, "Coefficients that diverge").
void warnIfNsDiverges(StepOp step);

} // namespace optim
} // namespace muon

#endif // MUON_DIALECT_MUON_TRANSFORMS_NSCOEFFICIENTS_H
