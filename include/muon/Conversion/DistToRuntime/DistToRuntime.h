//===- DistToRuntime.h - dist ops to runtime calls --------------*- C++ -*-===//
//
// The pieces of convert-dist-to-runtime, public so that another compiler can
// assemble its own conversion from them:
//
//  * DistToLocalTypeConverter: !dist.tensor -> the executing rank's local
//    tensor type (the ABI of a lowered entry point);
//  * populateDistBoundaryPatterns: function signatures, returns and calls
//    through that converter; dist.to_local / dist.from_local at the boundary
//    fold away;
//  * CommunicatorTable + populateDistCollectiveToRuntimePatterns: one
//    OpConversionPattern per collective and rank query, calling the runtime
//    on communicators created once at the top of each function.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_CONVERSION_DISTTORUNTIME_DISTTORUNTIME_H
#define MUON_CONVERSION_DISTTORUNTIME_DISTTORUNTIME_H

#include "muon/Conversion/RuntimeCalls.h"
#include "muon/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <map>
#include <string>

namespace muon {

/// !dist.tensor -> its local tensor type on the executing rank (a dim is
/// static when every rank holds the same size there); other types unchanged.
/// Meshes are looked up from `symbols`.
class DistToLocalTypeConverter : public mlir::TypeConverter {
public:
  explicit DistToLocalTypeConverter(mlir::Operation *symbols);
};

/// Function signatures, returns and calls through `converter`;
/// dist.to_local of an argument and dist.from_local feeding a return become
/// the local value (a tensor.cast where the declared type differs).
void populateDistBoundaryPatterns(mlir::TypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);

/// The communicators of each function, created at its top by
/// muon_rt_comm in one order on every rank (creation is collective over the
/// world, so no rank may skip one).
class CommunicatorTable {
public:
  /// Creates, at the top of `fn`, a communicator for every (mesh, axes)
  /// pair that a collective or dist.coord in `fn` uses. Fails with a
  /// diagnostic on an unknown mesh.
  mlir::LogicalResult createFor(mlir::func::FuncOp fn, RuntimeCalls &rt);
  /// The communicator handle (i64) for `op`'s (mesh, axes), in the function
  /// around `op`; null when createFor did not prepare that function.
  mlir::Value lookup(mlir::Operation *op) const;
  /// The number of members of `op`'s communicator.
  int64_t groupSize(mlir::Operation *op) const;
  /// The memref<k x i64> that `op` (findsExtentsAtRunTime) fills with its
  /// k members' lengths: a stack slot that createFor made at the top of the
  /// function, one per communicator size, shared by the function's
  /// collectives (each fills it, reads it and hands it to its runtime call,
  /// which copies it, before the next one fills it). Null when createFor
  /// made none.
  mlir::Value extentTable(mlir::Operation *op) const;

private:
  struct Entry {
    mlir::Value handle;
    int64_t size = 1;
  };
  std::map<std::pair<mlir::Operation *, std::string>, Entry> entries;
  /// (function, members) -> its extent table.
  std::map<std::pair<mlir::Operation *, int64_t>, mlir::Value> extentTables;
};

/// Members a collective that finds its extents at run time may have: its
/// table is on the stack, 8 bytes per member (512 KiB here).
constexpr int64_t kMaxRunTimeExtentMembers = int64_t(1) << 16;

/// Whether collective `op` finds its members' lengths along a split dim at
/// run time, for itself or one of its batch items: the op gives no `sizes`
/// and the split length depends on the rank (a storage split of an uneven
/// shard). Elsewhere they are a constant table.
bool findsExtentsAtRunTime(mlir::Operation *op);

/// Collectives (all_gather, gather, scatter, reduce_scatter, all_reduce,
/// broadcast, all_to_all) and rank queries (dist.rank, dist.coord) on local
/// f32 tensors -> calls into the runtime's C ABI, with per-member extents
/// resolved at compile time where they are static and at run time where
/// they depend on the rank. The CPU target's collective lowering.
void populateDistCollectiveToRuntimePatterns(RuntimeCalls &rt,
                                             CommunicatorTable &comms,
                                             mlir::RewritePatternSet &patterns);

} // namespace muon

#endif // MUON_CONVERSION_DISTTORUNTIME_DISTTORUNTIME_H
