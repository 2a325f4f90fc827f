//===- Target.h - Where target-dependent ops lower to -----------*- C++ -*-===//
//
// The target hook of the lowering. Newton-Schulz and the collectives are the
// only ops whose lowering depends on the hardware: each target names the
// patterns for them (and, at run time, the runtime backend that serves the
// calls). Momentum, update and the function boundary are shared by every
// target. Adding a target means adding an enumerator to muon::Target and
// its name to the three `target` option lists (Passes.td's targetOptions,
// MuonToLLVMOptions and muon-run's --target), a row in
// lib/Conversion/Targets.cpp with its patterns, and a runtime backend: the
// existing patterns are not edited.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_CONVERSION_TARGET_H
#define MUON_CONVERSION_TARGET_H

#include "muon/Conversion/DistToRuntime/DistToRuntime.h"
#include "muon/Conversion/Passes.h"

namespace muon {

struct TargetLowering {
  Target target;
  llvm::StringRef name;
  llvm::StringRef description;
  /// Whether a muon.newton_schulz (its types) can be lowered; an error at
  /// the op when not.
  mlir::LogicalResult (*checkNewtonSchulz)(mlir::Operation *op);
  /// muon.newton_schulz on local tensors.
  void (*populateNewtonSchulzPatterns)(RuntimeCalls &rt,
                                       mlir::RewritePatternSet &patterns);
  /// dist collectives and rank queries on local tensors.
  void (*populateCollectivePatterns)(RuntimeCalls &rt,
                                     CommunicatorTable &comms,
                                     mlir::RewritePatternSet &patterns);
};

/// The lowering of `target`.
const TargetLowering &getTargetLowering(Target target);

/// Every target, in enum order (for option lists and messages).
llvm::ArrayRef<TargetLowering> getAllTargetLowerings();

/// The target called `name`, if there is one.
const TargetLowering *lookupTargetLowering(llvm::StringRef name);

} // namespace muon

#endif // MUON_CONVERSION_TARGET_H
