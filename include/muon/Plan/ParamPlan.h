//===- ParamPlan.h - How one parameter's Muon update moves ------*- C++ -*-===//
//
// For one parameter of a distributed Muon step: what every mesh axis means
// for it, which splits the gather to the owner must undo and in which order
// (innermost first, derived from the layout's nesting, never hard-coded),
// which ranks may own it, and what Newton-Schulz costs on the owner.
//
// Plain C++ over muon::layout, shared by the muon.step verifier, the
// muon-assign-owners / muon-expand-step / muon-report passes and the tests.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_PLAN_PARAMPLAN_H
#define MUON_PLAN_PARAMPLAN_H

#include "muon/Layout/Layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace muon {
namespace plan {

/// What a mesh axis is for one parameter.
enum class AxisRole {
  /// Splits a matrix dim (compute shard or storage split): gathered to the
  /// owner, scattered back.
  Gather,
  /// Every rank holds the same data: the owner's result is broadcast.
  Replicate,
  /// Splits a batch (leading) dim, e.g. experts over `ep`: every coordinate
  /// orthogonalises its own slice, nothing crosses the axis.
  Independent,
  /// Whole storage: only the storage owner's coordinate holds the tensor.
  Whole,
  /// EP/PP annotation: the parameter exists only at one coordinate.
  Local,
};

/// One split the gather undoes.
struct Split {
  enum class Kind { Compute, Storage, Flat };
  Kind kind = Kind::Compute;
  int axis = -1;
  /// The tensor dim it splits (0 of the flattened tensor for Flat).
  int64_t dim = -1;
  /// Weighted storage split: one weight per coordinate of `axis`.
  std::vector<int64_t> weights;
};

/// Where the parameter lives beyond its layout (EP expert / PP stage).
struct LocalTo {
  int axis = -1; // -1: everywhere
  int64_t index = -1;
};

/// Newton-Schulz in blocks: tensor dim `dim` (a matrix dim) cut into
/// consecutive blocks of `sizes`. Empty: the matrix is one block.
struct NsBlocks {
  int64_t dim = -1;
  std::vector<int64_t> sizes;
};

struct ParamPlan {
  std::vector<AxisRole> roles;  // per mesh axis
  std::vector<int64_t> fixed;   // per axis: required owner coordinate or -1
  std::vector<Split> chain;     // gather order, innermost split first
  std::vector<int> replicateAxes;
  std::vector<int> independentAxes;
  int64_t m = 0, n = 0;         // matrix dims (last two)
  int64_t batch = 1;            // matrices per global tensor
  bool flat = false;            // chain starts with a flat element split
  /// Blocked Newton-Schulz (NsBlocks::dim < 0: none). `localBlocks`: the
  /// blocks one owner orthogonalises, in order along `blocks.dim`: all of
  /// them, or those of one shard when the outermost split of that dim
  /// cuts only between blocks, leaving the same block sizes on every
  /// coordinate (that axis is then Independent: nothing is gathered over
  /// it).
  NsBlocks blocks;
  std::vector<int64_t> localBlocks;
  int blockAxis = -1;          // the axis made Independent, or -1
  bool blocksAlongRows = true; // blocks.dim is the row dim (else columns)
};

/// Builds the plan of a parameter of `shape` and (verified) `layout`.
/// Returns "" or a message (e.g. an annotation that contradicts the layout).
std::string planParam(const std::vector<int64_t> &shape,
                      const layout::Layout &layout, const layout::Mesh &mesh,
                      LocalTo local, ParamPlan &out,
                      const NsBlocks &blocks = {});

/// The (rows, cols) of each matrix Newton-Schulz runs on for one owner:
/// the m x n matrix, or its local blocks.
std::vector<std::pair<int64_t, int64_t>> nsMatrices(const ParamPlan &plan);

/// The layout after the first `undone` splits of the chain are undone (the
/// layout of the data a gather step produces, or a scatter step consumes).
layout::Layout layoutAfter(const ParamPlan &plan, const layout::Layout &layout,
                           size_t undone);

/// Whether the rank at `coords` is in the parameter's group: its coordinate
/// matches every Whole/Local requirement.
bool inGroup(const ParamPlan &plan, const std::vector<int64_t> &coords);

/// The axes on which a rank's coordinate must equal the owner's for it to
/// hold data before chain step `j`: the replicate axes (one replica works)
/// and the axes of the splits already gathered.
std::vector<int> holderAxes(const ParamPlan &plan, size_t j);

/// Why `rank` cannot own the parameter ("" when it can): a coordinate that
/// differs from a Whole/Local requirement, or a non-zero coordinate on an
/// Independent axis (owners are named by their group-0 representative).
std::string whyNotOwner(const ParamPlan &plan, const layout::Mesh &mesh,
                        int64_t rank);

/// Every rank that may own the parameter, ascending.
std::vector<int64_t> ownerCandidates(const ParamPlan &plan,
                                     const layout::Mesh &mesh);

/// The ranks that run Newton-Schulz for an owner: the owner itself, with
/// every Independent axis coordinate varied (one per expert group).
std::vector<int64_t> ownerRanks(const ParamPlan &plan,
                                const layout::Mesh &mesh, int64_t owner);

/// One step of a parameter's update, in program order: the collective plan
/// as data. muon-expand-step emits IR from it, muon-report counts bytes
/// from it, and a schedule may reorder or batch it across parameters.
struct CommStep {
  enum class Kind {
    /// Reduction of a partial gradient over `axes` with `reduce`: an
    /// all_reduce, or (`dim` >= 0) a reduce_scatter into the parameter's
    /// storage split along `dim` (`weights`; flat: `sizes` of the
    /// flattened gradient).
    ReduceGrad,
    /// Rooted gather over `axes` (one axis) along `dim` to `root`.
    Gather,
    /// Newton-Schulz on the fully gathered matrix (no communication).
    NewtonSchulz,
    /// Rooted scatter over `axes` (one axis) along `dim` from `root`.
    Scatter,
    /// Broadcast over the replicate `axes` from `root`.
    Broadcast,
  };
  Kind kind = Kind::Gather;
  /// The communicator: mesh axes, in the order that numbers its members.
  std::vector<int> axes;
  /// Split dim (Gather/Scatter, a reduce-scatter ReduceGrad; 0 of the
  /// flattened tensor for a flat split), else -1.
  int64_t dim = -1;
  /// The owner's index inside the communicator (layout::groupIndex).
  int64_t root = -1;
  /// Which ranks take part: those of the parameter's group (inGroup) whose
  /// coordinates on these axes equal the owner's. Empty: the whole group.
  std::vector<int> holderAxes;
  /// What the split is (Gather/Scatter).
  Split::Kind split = Split::Kind::Compute;
  /// Weighted storage split: one weight per member.
  std::vector<int64_t> weights;
  /// Flat split: elements per member.
  std::vector<int64_t> sizes;
  /// ReduceGrad only.
  layout::ReduceKind reduce = layout::ReduceKind::Sum;
  /// ReduceGrad only: what the reduced data is divided by. 1, or, for one
  /// all-reduce summing over both sum and avg axes, the product of the avg
  /// axes' sizes.
  int64_t divisor = 1;
  /// A flat split over an axis of size 1 (a gather, a scatter or a
  /// reduce-scatter of the gradient): the one member's element range is its
  /// whole matrix, so no data moves and no collective is issued; only the
  /// reshape between the range and the matrix is left. Kept as a step so
  /// that the data's layouts stay in order; costs and counts leave it out.
  bool reshapeOnly = false;
  /// The layout of the data the step consumes and produces.
  layout::Layout from, to;
};

/// The ordered steps of the update of a parameter (`plan`, `layout`) whose
/// gradient has `gradLayout`, owned by `owner`: gradient reductions (a
/// reduce-scatter per storage split over a partial axis, outer first, then
/// one all-reduce of the other partial axes, with `divisor` when it sums
/// over avg axes too), gathers innermost split first, Newton-Schulz,
/// scatters outermost first, broadcast over replicate axes.
std::vector<CommStep> planSteps(const ParamPlan &plan,
                                const layout::Layout &layout,
                                const layout::Layout &gradLayout,
                                const layout::Mesh &mesh, int64_t owner);

/// Whether the rank at `coords` takes part in `step` for an owner at
/// `ownerCoords` (in the parameter's group and on the holder axes).
bool takesPart(const ParamPlan &plan, const CommStep &step,
               const std::vector<int64_t> &coords,
               const std::vector<int64_t> &ownerCoords);

/// One point-to-point movement a step implies (rooted gather/scatter and
/// broadcast as direct transfers; reductions are not listed).
struct Transfer {
  int64_t from = -1, to = -1;
  int64_t elements = 0;
};
std::vector<Transfer> transfersOf(const ParamPlan &plan, const CommStep &step,
                                  const std::vector<int64_t> &shape,
                                  const layout::Mesh &mesh, int64_t owner);

/// Elements the rank at `coords` sends (and receives) in a gradient
/// reduction step, as a ring algorithm moves them: 2 (n - 1) / n of what it
/// holds for an all-reduce, (n - 1) / n for a reduce-scatter, over a
/// communicator of n ranks.
double reductionElements(const CommStep &step,
                         const std::vector<int64_t> &shape,
                         const layout::Mesh &mesh,
                         const std::vector<int64_t> &coords);

/// The gradient reduction without the parameter's storage: one all-reduce
/// of the whole gradient over every partial axis (what a plan that reduced
/// first and sliced after would move), or nullopt-like empty `axes` when
/// the gradient is not partial. For the report's comparison.
CommStep allReduceOfGradient(const layout::Layout &gradLayout,
                             const layout::Mesh &mesh);

/// A one-line description ("gather dp dim 0 root 1 holders [tp]"), for
/// tests and dumps.
std::string describe(const CommStep &step, const layout::Mesh &mesh);

/// Newton-Schulz FLOPs for one m x n matrix: steps * (4 p^2 q + 2 p^3) with
/// p = min(m, n), q = max(m, n) (X X^T, A*A, B*X on the short side).
double nsFlops(int64_t m, int64_t n, int64_t steps);

/// Elements of what the owner `owner` orthogonalises: its local shard once
/// every gather of the chain is done (batch dims included).
int64_t gatheredElements(const ParamPlan &plan,
                         const std::vector<int64_t> &shape,
                         const layout::Layout &layout, const layout::Mesh &mesh,
                         int64_t owner);

/// NS FLOPs one owner rank spends on the parameter: its largest group slice.
double ownerFlops(const ParamPlan &plan, const std::vector<int64_t> &shape,
                  const layout::Layout &layout, const layout::Mesh &mesh,
                  int64_t steps);

} // namespace plan
} // namespace muon

#endif // MUON_PLAN_PARAMPLAN_H
