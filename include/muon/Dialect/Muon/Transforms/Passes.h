//===- Passes.h - muon dialect passes ---------------------------*- C++ -*-===//

#ifndef MUON_DIALECT_MUON_TRANSFORMS_PASSES_H
#define MUON_DIALECT_MUON_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "muon/Dialect/Muon/IR/MuonDialect.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"

namespace muon {
namespace optim {

#define GEN_PASS_DECL
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"

struct StepFacts;
/// The tables muon-report prints for one step with owners (per parameter,
/// per rank with the estimate of its schedule, balance, schedule), from the
/// step's collective plans. With `schedules`, also the estimated step time
/// of every schedule of the step's owners (naive, one at a time, rounds,
/// rounds with prefetch 1 and 2) against the lower bound, on the default
/// H100 cost model (plan::CostModel).
void printStepReport(StepOp step, const StepFacts &facts,
                     llvm::raw_ostream &os, bool schedules = false);

} // namespace optim
} // namespace muon

#endif // MUON_DIALECT_MUON_TRANSFORMS_PASSES_H
