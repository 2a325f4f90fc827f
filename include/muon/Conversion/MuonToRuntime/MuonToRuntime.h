//===- MuonToRuntime.h - Newton-Schulz to the runtime -----------*- C++ -*-===//

#ifndef MUON_CONVERSION_MUONTORUNTIME_MUONTORUNTIME_H
#define MUON_CONVERSION_MUONTORUNTIME_MUONTORUNTIME_H

#include "muon/Conversion/RuntimeCalls.h"

#include "mlir/IR/PatternMatch.h"

namespace muon {

/// muon.newton_schulz on a local f32 tensor, in f32 -> a copy of the operand
/// and muon_rt_newton_schulz on it (in place, CBLAS GEMMs, counted in the
/// runtime's NS counters). The CPU target's Newton-Schulz lowering.
void populateNewtonSchulzToRuntimePatterns(RuntimeCalls &rt,
                                           mlir::RewritePatternSet &patterns);

} // namespace muon

#endif // MUON_CONVERSION_MUONTORUNTIME_MUONTORUNTIME_H
