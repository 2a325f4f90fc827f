//===- SymbolReferences.h - Every symbol reference under an op -*- C++ -*-===//
//
// `SymbolTable::getSymbolUses` reads each op's attributes through
// `Operation::getAttrDictionary`, which for an op with properties builds
// and uniques a dictionary of its inherent attributes on every call: on
// the tens of thousands of calls of a lowered step that cost more than
// the passes that asked. This walk reads an op's inherent attributes one
// by one instead, does not enter attributes that cannot hold a reference
// (numbers, strings, dense arrays and elements), and walks each other
// distinct attribute once (a walk per op of the attributes every call
// carries took more than the pass that asked).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_SYMBOLREFERENCES_H
#define MUON_SUPPORT_SYMBOLREFERENCES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"

namespace muon {

/// Calls `visit` with every symbol reference held by the attributes of
/// `root` and of every op nested in it (nested symbol tables included),
/// also references inside arrays, dictionaries and other attributes and
/// types. Fails, possibly after some visits, at an unregistered op with
/// regions: it may hold references of its own that nobody can list.
mlir::LogicalResult
walkSymbolReferences(mlir::Operation *root,
                     llvm::function_ref<void(mlir::SymbolRefAttr)> visit);

/// The same, with the op whose attributes hold each reference.
mlir::LogicalResult walkSymbolReferences(
    mlir::Operation *root,
    llvm::function_ref<void(mlir::Operation *, mlir::SymbolRefAttr)> visit);

/// The root names of every symbol `root` and the ops nested in it refer
/// to (walkSymbolReferences), or failure where an op may hold references
/// nobody can list.
mlir::FailureOr<llvm::DenseSet<mlir::StringAttr>>
referencedRootNames(mlir::Operation *root);

} // namespace muon

#endif // MUON_SUPPORT_SYMBOLREFERENCES_H
