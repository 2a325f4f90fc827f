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

/// The CUDA target's: the same private copy, then
/// muon_rt_newton_schulz_cuda(x, steps, coeffs, eps, precision) with the
/// op's compute type as the operand precision (bf16: tensor cores; f32:
/// exact, no TF32). The runtime stages the host buffer through the GPU.
void populateNewtonSchulzToCudaPatterns(RuntimeCalls &rt,
                                        mlir::RewritePatternSet &patterns);

/// What the Newton-Schulz lowerings accept (`op` is a muon.newton_schulz):
/// f32 tensors, in either compute type the op admits (f32, bf16); an error
/// at the op otherwise. The CPU and cuda targets accept the same.
mlir::LogicalResult checkNewtonSchulzOperand(mlir::Operation *op);

} // namespace muon

#endif // MUON_CONVERSION_MUONTORUNTIME_MUONTORUNTIME_H
