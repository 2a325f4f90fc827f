//===- EraseDead.cpp - Erasing what became dead ---------------------------===//

#include "muon/Support/EraseDead.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

void muon::eraseDeadDefinitions(ArrayRef<Operation *> roots) {
  SmallVector<Operation *> work;
  for (Operation *root : roots)
    if (root)
      work.push_back(root);
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!work.empty()) {
    Operation *next = work.pop_back_val();
    // Compared, never read: a pointer to an erased op.
    if (erased.contains(next) || !next->use_empty() ||
        !isOpTriviallyDead(next))
      continue;
    for (Value operand : next->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
    erased.insert(next);
    next->erase();
  }
}
