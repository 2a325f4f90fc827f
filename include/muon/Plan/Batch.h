//===- Batch.h - The collective calls of a round ---------------*- C++ -*-===//
//
// In a round, every owner gathers, orthogonalises and redistributes one
// parameter at once. The gathers (and scatters) of the round's parameters
// that run over the same communicator, on the same ranks, at the same
// position of their chains are one batched call (dist.gather_batch /
// dist.scatter_batch: one all-to-all instead of one rooted call each).
// This file decides which steps share a call; muon-expand-step emits the
// calls and the schedule estimate costs them, so both see the same calls.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_PLAN_BATCH_H
#define MUON_PLAN_BATCH_H

#include "muon/Plan/ParamPlan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace muon {
namespace plan {

/// Which ranks take part in `step` of a parameter owned at `ownerCoords`:
/// per mesh axis the coordinate a rank must have there, or -1 for any. The
/// parameter's group (Whole / Local axes), and for gathers and scatters the
/// holder axes; the same ranks as takesPart.
std::vector<int64_t> participants(const ParamPlan &plan, const CommStep &step,
                                  const std::vector<int64_t> &ownerCoords);

/// Whether `step` may share a call with other parameters' steps (and, with
/// prefetch, run asynchronously): a rooted gather or scatter of any split
/// (chunk rule, weighted or flat: a batch item carries its own per-member
/// sizes or weights), or a broadcast to the replicas. Not a step that is a
/// reshape only (CommStep::reshapeOnly: no call at all).
bool batchable(const CommStep &step);

/// One parameter of a round.
struct RoundParam {
  const ParamPlan *plan = nullptr;
  const std::vector<CommStep> *steps = nullptr;
  std::vector<int64_t> ownerCoords;
};

/// One collective call: (parameter index in the round, step index) pairs,
/// one per parameter, in round order. More than one item only for a batch.
struct RoundCall {
  std::vector<std::pair<size_t, size_t>> items;
  /// The position of its steps in their phase (0: first gather, or first
  /// step after Newton-Schulz). A call depends only on calls of lower
  /// levels.
  size_t level = 0;
};

/// The collective calls of one phase of a round, in issue order.
/// `afterNs` false: the gathers before Newton-Schulz (gradient reductions
/// are not part of it); true: every step after Newton-Schulz (scatters,
/// broadcasts). Level j holds the j-th step of the phase of every
/// parameter; levels run in order. In a level, with `batch`, batchable
/// steps of equal kind, axes and participants form one call; every other
/// step is a call alone. Calls of a level are ordered by their first item.
std::vector<RoundCall> roundCalls(const std::vector<RoundParam> &round,
                                  bool afterNs, bool batch);

} // namespace plan
} // namespace muon

#endif // MUON_PLAN_BATCH_H
