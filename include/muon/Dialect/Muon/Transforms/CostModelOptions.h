//===- CostModelOptions.h - The machine the estimates assume ---*- C++ -*-===//
//
// The cost-model options muon-report, muon-timeline and muon-expand-step
// share (docs/schedule.md, "The cost model and the estimates"): the
// defaults describe 8 H100 per node; a cluster of another machine sets its
// own figures.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_MUON_TRANSFORMS_COSTMODELOPTIONS_H
#define MUON_DIALECT_MUON_TRANSFORMS_COSTMODELOPTIONS_H

#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Plan/Schedule.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>

namespace muon {
namespace optim {

/// The figures of the cost model, in the options' units.
struct CostModelOptions {
  int64_t ranksPerNode = 8;
  double intraNodeGBps = 360, intraNodeLatencyUs = 3;
  double interNodeGBps = 50, interNodeLatencyUs = 10;
  /// Newton-Schulz rate; 0: by the step's ns_dtype (989 for bf16, dense
  /// tensor cores; 67 for f32, without TF32).
  double nsTflops = 0;

  /// Whether these are the defaults (the H100 model).
  bool isDefault() const;
};

/// The options of a pass's six figures, checked: an error at `loc` naming
/// `pass` and the option when a figure is out of range (ranks per node
/// below 1, a bandwidth outside 1e-9 .. 1e9 GB/s, a latency outside
/// 0 .. 1e9 us, a rate other than 0 outside 1e-9 .. 1e9 TFLOP/s, so that no
/// estimate overflows; or any that is not finite).
mlir::FailureOr<CostModelOptions>
costModelOptions(mlir::Location loc, llvm::StringRef pass, int64_t ranksPerNode,
                 double intraNodeGBps, double intraNodeLatencyUs,
                 double interNodeGBps, double interNodeLatencyUs,
                 double nsTflops);

/// The model of `options` for `step` (its ns_dtype picks the default
/// Newton-Schulz rate).
plan::CostModel costModelFor(StepOp step, const CostModelOptions &options = {});

} // namespace optim
} // namespace muon

#endif // MUON_DIALECT_MUON_TRANSFORMS_COSTMODELOPTIONS_H
