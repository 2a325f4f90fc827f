//===- Passes.h - dist dialect passes ---------------------------*- C++ -*-===//

#ifndef MUON_DIALECT_DIST_TRANSFORMS_PASSES_H
#define MUON_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "muon/Dialect/Dist/IR/DistDialect.h"
#include "muon/Dialect/Dist/Transforms/ReducedAnalysis.h"

namespace muon {
namespace dist {

#define GEN_PASS_DECL
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dist
} // namespace muon

#endif // MUON_DIALECT_DIST_TRANSFORMS_PASSES_H
