//===- EraseDead.h - Erasing what became dead --------------------*- C++ -*-===//
//
// After a rewrite replaces a value's uses, the ops that built it (field
// constants, a descriptor's insertvalue chain) are often dead; later
// passes would fold them away, but only after the translation and the
// JIT's verifier had paid for them.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_ERASEDEAD_H
#define MUON_SUPPORT_ERASEDEAD_H

#include "mlir/IR/Operation.h"

namespace muon {

/// Erases each of `roots` that is trivially dead, and in turn the ops
/// defining its operands once they are; an op reached twice (it defines
/// several of the values, or two operands) is erased once.
void eraseDeadDefinitions(llvm::ArrayRef<mlir::Operation *> roots);

} // namespace muon

#endif // MUON_SUPPORT_ERASEDEAD_H
