//===- ReducedAnalysis.h - Which local values are reduced, which vary -*- C++
//-*-===//
//
// The local view loses the layout: after dist.to_local a tensor is a plain
// tensor until dist.from_local gives it a layout again. This analysis follows
// two facts per mesh axis through the ops in between:
//
//   varying  the value can differ between the ranks of the axis (it comes
//            from a shard, a partial value or a storage piece that was not
//            gathered or reduced over the axis);
//   reduced  every rank holds the same data, and its gradient must be summed
//            over the axis (a `reduced` input, or an all_gather marked
//            `reduced`).
//
// The two are exclusive on one axis. dist-propagate-reduced writes `reduced`
// into the layouts dist.from_local declares; dist-verify-reduced checks them.
// docs/reduced.md states the rules.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_DIST_TRANSFORMS_REDUCEDANALYSIS_H
#define MUON_DIALECT_DIST_TRANSFORMS_REDUCEDANALYSIS_H

#include "muon/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>
#include <optional>
#include <string>

namespace muon {
namespace dist {

/// How an op that is not a dist op combines the `reduced` facts of its
/// operands (varying is always the union).
enum class ReducedRule {
  /// Reduced on an axis when any operand is (and the result does not vary
  /// there): DTensor's rule.
  Uniform,
  /// Reduced on an axis when every operand the analysis follows is: the
  /// local-tensor rule.
  Intersection,
};

/// The facts about one local tensor, per axis of `mesh`.
struct ReducedState {
  MeshOp mesh;
  /// Reduced by the rule; reduced where any reduced value reaches (the
  /// uniform rule, whatever the rule); may differ between ranks.
  llvm::SmallBitVector reduced, reachedByReduced, varying;
};

/// What a dist.from_local declares on one axis against what the value is.
struct LayoutFinding {
  enum class Kind {
    /// Declared replicate; the value is reduced: the obligation to sum its
    /// gradient would be dropped.
    DropsReduction,
    /// Declared replicate or reduced; the value differs between ranks.
    Varies,
    /// Declared reduced; no reduced value reaches it over the axis (an
    /// explicit `reduced` on a value the intersection rule leaves
    /// ambiguous is accepted).
    NotReduced,
  };
  Kind kind;
  int axis;
};

class ReducedAnalysis {
public:
  /// Analyses every function body under `root` (a callee before the call
  /// that uses what it returns; block arguments are not followed).
  ReducedAnalysis(mlir::Operation *root, ReducedRule rule);

  /// The facts about `v`, or null when the analysis does not follow it (not
  /// derived from a distributed value or a rank query).
  const ReducedState *lookup(mlir::Value v) const;

  /// The findings at a dist.from_local whose input the analysis follows.
  std::vector<LayoutFinding> check(FromLocalOp op) const;

private:
  using Facts = llvm::DenseMap<mlir::Value, ReducedState>;
  /// Visits `f`'s ops into `into`.
  void run(mlir::FunctionOpInterface f, Facts &into);
  void visit(mlir::Operation *op);
  /// The facts of `v` in the function being visited.
  const ReducedState *find(mlir::Value v) const;
  std::optional<ReducedState> fromType(DistTensorType type,
                                       mlir::Operation *at);
  std::optional<ReducedState> combine(llvm::ArrayRef<mlir::Value> values);
  /// What a call of `callee` returns when its arguments have `args`; none
  /// for a call back into a function being visited.
  std::optional<llvm::SmallVector<std::optional<ReducedState>>>
  callResults(mlir::FunctionOpInterface callee,
              llvm::ArrayRef<std::optional<ReducedState>> args);
  /// An entry of a constant table indexed by dist.rank.
  std::optional<ReducedState> rankTableEntry(mlir::tensor::ExtractOp extract);

  ReducedRule rule;
  mutable mlir::SymbolTableCollection tables;
  /// Each function's own facts (its arguments not followed), and where
  /// visit writes now (a callee's body runs into facts of its own).
  Facts states;
  Facts *cur = &states;
  /// The functions being visited (a recursive call is every other op), and
  /// what each callee returned for each facts of its arguments.
  llvm::DenseSet<mlir::Operation *> inProgress;
  std::map<std::string, llvm::SmallVector<std::optional<ReducedState>>>
      summaries;
};

} // namespace dist
} // namespace muon

#endif // MUON_DIALECT_DIST_TRANSFORMS_REDUCEDANALYSIS_H
