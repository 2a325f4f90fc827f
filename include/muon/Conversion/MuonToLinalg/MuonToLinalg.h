//===- MuonToLinalg.h - Elementwise muon ops to linalg ----------*- C++ -*-===//

#ifndef MUON_CONVERSION_MUONTOLINALG_MUONTOLINALG_H
#define MUON_CONVERSION_MUONTOLINALG_MUONTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace muon {

/// muon.momentum_update and muon.apply_update on local f32 tensors ->
/// elementwise linalg.generic with the exact formulas of the step semantics
/// (docs/muon-dialect.md). Target-independent: every target bufferizes and
/// lowers linalg its own way.
void populateMuonToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace muon

#endif // MUON_CONVERSION_MUONTOLINALG_MUONTOLINALG_H
