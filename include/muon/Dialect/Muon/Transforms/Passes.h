//===- Passes.h - muon dialect passes ---------------------------*- C++ -*-===//

#ifndef MUON_DIALECT_MUON_TRANSFORMS_PASSES_H
#define MUON_DIALECT_MUON_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "muon/Dialect/Muon/IR/MuonDialect.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Support/NumberOption.h"

namespace muon {
namespace optim {

#define GEN_PASS_DECL
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"

struct StepFacts;
/// The tables muon-report prints for one step with owners (StepReport.h has
/// them as data and as JSON).
void printStepReport(StepOp step, const StepFacts &facts,
                     llvm::raw_ostream &os, bool schedules = false);

} // namespace optim
} // namespace muon

#endif // MUON_DIALECT_MUON_TRANSFORMS_PASSES_H
