//===- ShardToDist.h - Import MLIR `shard` annotations into dist -*- C++ -*-===//
//
// Upstream MLIR's `shard` dialect annotates plain tensors with shardings
// (shard.grid, shard.sharding, shard.shard). The import turns grids into
// dist meshes and gives annotated function arguments, global-view
// muon.steps and their results the !dist.tensor types of their
// annotations, so a compiler that annotates with `shard` can feed muon.step
// directly (docs/dist-dialect.md, "Importing MLIR shard annotations").
//
//===----------------------------------------------------------------------===//

#ifndef MUON_CONVERSION_SHARDTODIST_SHARDTODIST_H
#define MUON_CONVERSION_SHARDTODIST_SHARDTODIST_H

#include "muon/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace muon {

/// The attribute on a shard.grid naming its axes for the imported mesh
/// (`{dist.axis_names = ["dp", "tp"]}`); without it axis i is `a<i>`.
inline constexpr llvm::StringLiteral kAxisNamesAttr = "dist.axis_names";

/// The dist layout `sharding` gives a tensor of `shape` on `mesh` (the mesh
/// imported from the sharding's grid, same axis order). Refuses, through
/// `emitError`, what dist cannot express: halo sizes, dynamic offsets, and
/// shard sizes other than dist's chunk rule (given by sharded_dims_offsets,
/// or shard's own rule for uneven splits without them).
mlir::FailureOr<dist::LayoutAttr>
importSharding(mlir::shard::ShardingOp sharding, llvm::ArrayRef<int64_t> shape,
               dist::MeshOp mesh,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Imports every shard.grid, annotation and global-view muon.step of
/// `module` (nothing to do leaves it unchanged). Emits a diagnostic at the
/// offending op and fails on what has no dist counterpart.
mlir::LogicalResult importShardAnnotations(mlir::ModuleOp module);

} // namespace muon

#endif // MUON_CONVERSION_SHARDTODIST_SHARDTODIST_H
