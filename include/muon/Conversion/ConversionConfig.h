//===- ConversionConfig.h - How muon's dialect conversions run --*- C++ -*-===//
//
// Every dialect conversion of the muon-to-llvm pipeline runs with this
// configuration, so that they differ only in their targets and patterns.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_CONVERSION_CONVERSIONCONFIG_H
#define MUON_CONVERSION_CONVERSIONCONFIG_H

#include "mlir/Transforms/DialectConversion.h"

namespace muon {

/// MLIR's default configuration, without folding: by default the driver
/// first tries to fold every op it has to convert, and the ops of a step
/// (constants, casts, calls, branches) fold to nothing the patterns would
/// not produce anyway. The attempts cost about 2% of lowering a 405B step
/// and changed no byte of the lowered steps (docs/design-decisions.md,
/// "The lowering is linear in the step's length").
inline mlir::ConversionConfig conversionConfig() {
  mlir::ConversionConfig config;
  config.foldingMode = mlir::DialectConversionFoldingMode::Never;
  return config;
}

} // namespace muon

#endif // MUON_CONVERSION_CONVERSIONCONFIG_H
