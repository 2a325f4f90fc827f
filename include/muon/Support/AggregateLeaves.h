//===- AggregateLeaves.h - The scalar fields of an LLVM aggregate -*- C++ -*-===//
//
// The scalar fields of an LLVM-dialect struct or array, with their
// positions as `extractvalue`/`insertvalue` write them, and the value a
// chain of `insertvalue`s put at one of them. The passes that take memref
// descriptors apart field by field use it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_AGGREGATELEAVES_H
#define MUON_SUPPORT_AGGREGATELEAVES_H

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace muon {

/// A scalar field of an aggregate: its position and type.
struct AggregateLeaf {
  llvm::SmallVector<int64_t> position;
  mlir::Type type;
};

namespace detail {
inline bool collectLeaves(mlir::Type type, llvm::SmallVector<int64_t> &position,
                          llvm::SmallVector<AggregateLeaf> &leaves,
                          size_t maxLeaves) {
  auto visit = [&](int64_t index, mlir::Type field) {
    position.push_back(index);
    bool ok = collectLeaves(field, position, leaves, maxLeaves);
    position.pop_back();
    return ok;
  };
  if (auto st = llvm::dyn_cast<mlir::LLVM::LLVMStructType>(type)) {
    // A packed struct's fields are not naturally aligned: an access per
    // field would claim alignment the data does not have.
    if (st.isPacked() || st.isOpaque())
      return false;
    for (auto [i, field] : llvm::enumerate(st.getBody()))
      if (!visit(i, field))
        return false;
    return true;
  }
  if (auto array = llvm::dyn_cast<mlir::LLVM::LLVMArrayType>(type)) {
    if (array.getNumElements() > maxLeaves)
      return false;
    for (unsigned i = 0; i < array.getNumElements(); ++i)
      if (!visit(i, array.getElementType()))
        return false;
    return true;
  }
  leaves.push_back({position, type});
  return leaves.size() <= maxLeaves;
}
} // namespace detail

/// The scalar fields of `type` in order (a scalar is its own one field, at
/// the empty position); none when there are more than `maxLeaves` or a
/// struct in it is packed or opaque.
inline llvm::SmallVector<AggregateLeaf> aggregateLeaves(mlir::Type type,
                                                        size_t maxLeaves) {
  llvm::SmallVector<int64_t> position;
  llvm::SmallVector<AggregateLeaf> leaves;
  if (!detail::collectLeaves(type, position, leaves, maxLeaves))
    leaves.clear();
  return leaves;
}

/// The value at `position` of `aggregate` where the insertvalue chain that
/// built it says (also through a field read of a field, and through a
/// whole struct inserted as a field), else null (also where a later
/// insertion overwrote part of the field).
mlir::Value insertedAt(mlir::Value aggregate, llvm::ArrayRef<int64_t> position);

/// `aggregate`'s field at `position`: the value inserted there, or a field
/// read created at `b`.
mlir::Value extractLeaf(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value aggregate,
                        llvm::ArrayRef<int64_t> position);

} // namespace muon

#endif // MUON_SUPPORT_AGGREGATELEAVES_H
