//===- AggregateLeaves.cpp - Fields an insertvalue chain set ---------------===//

#include "muon/Support/AggregateLeaves.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

Value muon::insertedAt(Value aggregate, ArrayRef<int64_t> position) {
  while (true) {
    if (auto insert = aggregate.getDefiningOp<LLVM::InsertValueOp>()) {
      ArrayRef<int64_t> at = insert.getPosition();
      if (position.take_front(at.size()) == at) {
        // The field is in the value inserted (or is it).
        aggregate = insert.getValue();
        position = position.drop_front(at.size());
        if (position.empty())
          return aggregate;
        continue;
      }
      if (at.take_front(position.size()) == position)
        return {}; // Part of the field was overwritten.
      aggregate = insert.getContainer();
      continue;
    }
    if (auto extract = aggregate.getDefiningOp<LLVM::ExtractValueOp>()) {
      SmallVector<int64_t> whole(extract.getPosition());
      whole.append(position.begin(), position.end());
      return insertedAt(extract.getContainer(), whole);
    }
    return {};
  }
}

Value muon::extractLeaf(OpBuilder &b, Location loc, Value aggregate,
                        ArrayRef<int64_t> position) {
  if (Value inserted = insertedAt(aggregate, position))
    return inserted;
  return LLVM::ExtractValueOp::create(b, loc, aggregate, position);
}
