//===- Reference.h - Single-device Muon, written plainly ------*- C++ -*-===//
//
// The independent reference muon-run checks the compiled distributed step
// against: the step semantics of docs/muon-dialect.md on full tensors in
// fp32, sharing no code with the compiler or the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_REFERENCE_H
#define MUON_TOOLS_MUONRUN_REFERENCE_H

#include <cstdint>
#include <vector>

namespace muon {
namespace run {

/// The update's scale for an m x n matrix: sqrt(max(1, m/n)) (Original),
/// 0.2 sqrt(max(m, n)) (MatchRmsAdamW) or sqrt(m/n) (SpectralUnclamped).
enum class LrScale { Original, MatchRmsAdamW, SpectralUnclamped };

struct Hyper {
  double lr = 0, momentum = 0.95, eps = 1e-7, weightDecay = 0;
  bool nesterov = true, sumForm = false;
  LrScale lrScale = LrScale::Original;
  int64_t nsSteps = 5;
  std::vector<double> coeffs; ///< 3 or 3 * nsSteps
};

/// One Muon step on a full parameter `p` with momentum `m` and gradient `g`
/// (shape: ... x rows x cols; leading dims are a batch of matrices). With
/// `blockSizes`, each matrix is orthogonalised in consecutive blocks of those
/// sizes along its rows (`blockRows`) or columns, each scaled for its own
/// shape.
void referenceStep(std::vector<float> &p, std::vector<float> &m,
                   const std::vector<float> &g,
                   const std::vector<int64_t> &shape, const Hyper &h,
                   const std::vector<int64_t> &blockSizes = {},
                   bool blockRows = true);

/// FLOPs Newton-Schulz takes on one rows x cols matrix.
double referenceNsFlops(int64_t rows, int64_t cols, int64_t steps);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_REFERENCE_H
