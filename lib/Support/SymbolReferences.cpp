//===- SymbolReferences.cpp - Every symbol reference under an op ----------===//

#include "muon/Support/SymbolReferences.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace {

/// Attributes that hold no other attribute or type, so no reference.
bool isLeaf(Attribute value) {
  return isa<IntegerAttr, FloatAttr, StringAttr, UnitAttr, DenseArrayAttr,
             DenseIntOrFPElementsAttr>(value);
}

void scan(Attribute value, function_ref<void(SymbolRefAttr)> visit) {
  if (!value || isLeaf(value))
    return;
  if (auto ref = dyn_cast<SymbolRefAttr>(value)) {
    visit(ref);
    return;
  }
  value.walk([&](SymbolRefAttr ref) { visit(ref); });
}

} // namespace

LogicalResult
muon::walkSymbolReferences(Operation *root,
                           function_ref<void(SymbolRefAttr)> visit) {
  WalkResult walked = root->walk([&](Operation *op) {
    if (!op->isRegistered() && op->getNumRegions() != 0)
      return WalkResult::interrupt();
    // Every attribute of an op without properties; the discardable ones
    // of an op with them, whose inherent ones are read one by one.
    for (NamedAttribute attr : op->getRawDictionaryAttrs())
      scan(attr.getValue(), visit);
    if (op->getPropertiesStorageSize() != 0)
      for (StringAttr name : op->getName().getAttributeNames())
        if (std::optional<Attribute> value = op->getInherentAttr(name))
          scan(*value, visit);
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}
