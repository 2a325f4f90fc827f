//===- DistLayout.h - dist attributes <-> the layout model ------*- C++ -*-===//
//
// Bridges the dist dialect's attributes to muon::layout (the one
// implementation of local shapes and offsets) and gives passes the queries
// they need: look up a mesh, check a layout, compute a rank's local block,
// map a layout to its cotangent.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_DIST_IR_DISTLAYOUT_H
#define MUON_DIALECT_DIST_IR_DISTLAYOUT_H

#include "muon/Dialect/Dist/IR/DistOps.h"
#include "muon/Layout/Layout.h"

namespace muon {
namespace dist {

/// Finds the dist.mesh `name` visible from `from`, or null.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr name,
                  mlir::SymbolTableCollection *tables = nullptr);

/// The mesh as a plain layout::Mesh.
layout::Mesh toLayoutMesh(MeshOp mesh);

/// The largest mesh a pass that visits every rank accepts (owner
/// assignment, muon-expand-step, dist-verify-spmd, the lowering's per-rank
/// shape tables, dist-print-layouts): 2^20 ranks, beyond every cluster built
/// today. Their cost is linear in ranks; past this bound they would run for
/// hours, so they stop with a diagnostic instead.
constexpr int64_t kMaxEnumeratedRanks = int64_t(1) << 20;

/// Fails with an error at `at` when `mesh` has more than kMaxEnumeratedRanks
/// ranks; `what` names the work ("muon-expand-step").
mlir::LogicalResult checkEnumerableMesh(mlir::Operation *at, MeshOp mesh,
                                        llvm::StringRef what);

/// Converts `attr` for a tensor on `mesh`. Names that do not resolve (an
/// unknown axis, an unknown flat group) are reported through `emitError`.
mlir::FailureOr<layout::Layout>
toLayout(LayoutAttr attr, MeshOp mesh, mlir::Operation *from,
         llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
         mlir::SymbolTableCollection *tables = nullptr);

/// Checks `type` against the mesh it names, reporting through `emitError`:
/// unknown mesh / axis / group, placement count, shard dims, storage rules.
mlir::LogicalResult
verifyDistTensorType(DistTensorType type, mlir::Operation *from,
                     llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                     mlir::SymbolTableCollection *tables = nullptr);

/// Verifies every !dist.tensor that appears in `root`: operand, result and
/// block-argument types and function signatures, against the mesh visible
/// where it appears. Passes that read layouts call this first, so that no
/// layout accessor ever sees a type that did not verify (a type no dist op
/// touches is not checked by any op verifier). Diagnostics at the op.
mlir::LogicalResult verifyDistTypesIn(mlir::Operation *root);

/// The local block of `type` on the rank at `coords`. The type must verify.
layout::LocalShard localShardOf(DistTensorType type, mlir::Operation *from,
                                llvm::ArrayRef<int64_t> coords);

/// Every rank's local shape of `type` in rank order, as runs of ranks with
/// one shape.
struct LocalShapeRuns {
  /// Dims of a local shape (1 for flat storage, else the tensor's).
  int64_t dims = 0;
  /// For each run its first rank, then the shape (a new run where the
  /// shape changes; the first run starts at rank 0).
  llvm::SmallVector<int64_t> runs;
};

/// The local shapes of `type` on every rank. Ranks that agree on their
/// coordinates on the splitting axes are computed once. The type must
/// verify and its mesh must be enumerable (checkEnumerableMesh).
LocalShapeRuns localShapeRuns(DistTensorType type, mlir::Operation *from);

/// The local tensor type of `type`: a dim is static when every rank holds the
/// same size there, dynamic otherwise. The type must verify.
mlir::RankedTensorType localTensorType(DistTensorType type,
                                       mlir::Operation *from);

/// The local tensor type of a tensor of `shape` with layout `l` over the
/// ranks `ranks`: a dim is static when they all hold the same size there.
mlir::RankedTensorType localTensorType(llvm::ArrayRef<int64_t> shape,
                                       mlir::Type elementType,
                                       const layout::Layout &l,
                                       const layout::Mesh &mesh,
                                       llvm::ArrayRef<int64_t> ranks);

/// Combinations of splitting coordinates past which local shapes are not
/// compared (about a second of work).
constexpr int64_t kMaxLocalShapeCombinations = int64_t(1) << 22;

/// How many combinations of coordinates on the axes that split a tensor of
/// layout `l` the box [lo, hi) holds (saturating at INT64_MAX).
int64_t localShapeCombinations(const layout::Layout &l,
                               const layout::Mesh &mesh,
                               const std::vector<int64_t> &lo,
                               const std::vector<int64_t> &hi);

/// The same for `type` over its whole mesh.
int64_t localShapeCombinations(DistTensorType type, mlir::Operation *from);

/// The same over the ranks whose coordinates lie in the box [lo, hi) (each
/// axis a range of coordinates; the box may be empty). Only the
/// coordinates on axes that split the tensor decide a local shape: one
/// rank per combination of those is computed, however many ranks the box
/// holds. Past kMaxLocalShapeCombinations they are not compared: every
/// dim a splitting axis cuts is dynamic.
mlir::RankedTensorType localTensorType(llvm::ArrayRef<int64_t> shape,
                                       mlir::Type elementType,
                                       const layout::Layout &l,
                                       const layout::Mesh &mesh,
                                       std::vector<int64_t> lo,
                                       std::vector<int64_t> hi);

/// The value `op` (a dist.rank or dist.coord on `mesh`) takes on `rank`.
int64_t rankQueryValue(mlir::Operation *op, MeshOp mesh, int64_t rank);

/// Indices of the mesh axes named in `axes` (names verified), in order.
std::vector<int> axisIndices(MeshOp mesh, mlir::ArrayAttr axes);

/// The index of the rank at `coords` inside the communicator over `axes`
/// (layout::groupIndex: the numbering of `root` and of dist.coord).
int64_t groupIndex(MeshOp mesh, mlir::ArrayAttr axes,
                   llvm::ArrayRef<int64_t> coords);

/// Placement conversions.
layout::Placement toLayoutPlacement(PlacementAttr attr);
PlacementAttr fromLayoutPlacement(mlir::MLIRContext *ctx,
                                  const layout::Placement &p);

/// The cotangent of a placement (layout::cotangent): shard->shard,
/// replicate->replicate, partial->reduced, reduced->partial<sum>.
PlacementAttr getCotangent(PlacementAttr primal);

/// `storage` without its splits over the mesh axes `dropped` accepts: a
/// dim split or a flat or whole storage on such an axis goes, a block keeps
/// its other split as a dim split. Null when nothing is left. A flat
/// group is looked up from `from`.
StorageAttr storageWithout(StorageAttr storage, mlir::Operation *from,
                           llvm::function_ref<bool(llvm::StringRef)> dropped,
                           mlir::SymbolTableCollection *tables = nullptr);

/// The cotangent (gradient) layout of `primal` on `mesh`: every placement
/// mapped by getCotangent, the nesting order kept, and the storage splits
/// over axes that become partial dropped (a partial value is each rank's
/// contribution to the whole compute-local block, so it is not stored in
/// pieces over that axis). On placements it is an involution; storage over
/// a `reduced` axis does not come back.
LayoutAttr getCotangent(LayoutAttr primal, MeshOp mesh);

/// The gradient layout `muon.step` expects for a parameter of layout
/// `param` whose gradient has `gradPlacements`: the parameter's layout with
/// those placements and without the storage splits over the gradient's
/// partial axes (the step reduce-scatters into them).
LayoutAttr gradLayoutFor(LayoutAttr param,
                         llvm::ArrayRef<PlacementAttr> gradPlacements,
                         MeshOp mesh,
                         mlir::SymbolTableCollection *tables = nullptr);

} // namespace dist
} // namespace muon

#endif // MUON_DIALECT_DIST_IR_DISTLAYOUT_H
