//===- SymbolReferences.cpp - Every symbol reference under an op ----------===//

#include "muon/Support/SymbolReferences.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace {

/// Attributes that hold no other attribute or type, so no reference.
bool isLeaf(Attribute value) {
  return isa<IntegerAttr, FloatAttr, StringAttr, UnitAttr, DenseArrayAttr,
             DenseIntOrFPElementsAttr>(value);
}

/// The references nested in attributes, per attribute: attributes are
/// uniqued, and a step's ops repeat a few (a calling convention, a tail
/// call kind on every call), which a walk of their sub-elements would
/// visit tens of thousands of times.
class Scanner {
public:
  explicit Scanner(function_ref<void(Operation *, SymbolRefAttr)> visit)
      : visit(visit) {}

  void scan(Operation *user, Attribute value) {
    if (!value || isLeaf(value))
      return;
    if (auto ref = dyn_cast<SymbolRefAttr>(value)) {
      visit(user, ref);
      return;
    }
    auto [it, fresh] = nested.try_emplace(value);
    if (fresh)
      value.walk([&, &refs = it->second](SymbolRefAttr ref) {
        refs.push_back(ref);
      });
    for (SymbolRefAttr ref : it->second)
      visit(user, ref);
  }

private:
  function_ref<void(Operation *, SymbolRefAttr)> visit;
  llvm::DenseMap<Attribute, SmallVector<SymbolRefAttr, 0>> nested;
};

} // namespace

LogicalResult
muon::walkSymbolReferences(Operation *root,
                           function_ref<void(SymbolRefAttr)> visit) {
  return walkSymbolReferences(
      root, [&](Operation *, SymbolRefAttr ref) { visit(ref); });
}

LogicalResult muon::walkSymbolReferences(
    Operation *root, function_ref<void(Operation *, SymbolRefAttr)> visit) {
  Scanner scanner(visit);
  WalkResult walked = root->walk([&](Operation *op) {
    if (!op->isRegistered() && op->getNumRegions() != 0)
      return WalkResult::interrupt();
    // Every attribute of an op without properties; the discardable ones
    // of an op with them, whose inherent ones are read one by one.
    for (NamedAttribute attr : op->getRawDictionaryAttrs())
      scanner.scan(op, attr.getValue());
    if (op->getPropertiesStorageSize() != 0)
      for (StringAttr name : op->getName().getAttributeNames())
        if (std::optional<Attribute> value = op->getInherentAttr(name))
          scanner.scan(op, *value);
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

FailureOr<DenseSet<StringAttr>> muon::referencedRootNames(Operation *root) {
  DenseSet<StringAttr> names;
  if (failed(walkSymbolReferences(root, [&](SymbolRefAttr ref) {
        names.insert(ref.getRootReference());
      })))
    return failure();
  return names;
}
