//===- DistTypes.cpp - dist dialect types ---------------------------------===//

#include "muon/Dialect/Dist/IR/DistTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace muon::dist;

LogicalResult
DistTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> shape, Type elementType,
                       LayoutAttr layout) {
  for (auto [i, d] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(d) || d < 0)
      return emitError() << "!dist.tensor needs a static global shape; "
                            "dimension "
                         << i << " is dynamic";
  if (!elementType.isIntOrIndexOrFloat())
    return emitError() << "!dist.tensor element type must be an integer, "
                          "index or float type, got "
                       << elementType;
  if (!layout)
    return emitError() << "!dist.tensor needs a layout";
  return success();
}

// !dist.tensor<16x8xf32, @mesh, [shard<0>, replicate], storage = ...>
Type DistTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true) ||
      parser.parseType(elementType) || parser.parseComma())
    return {};
  FailureOr<LayoutAttr> layout = LayoutAttr::parseBody(parser);
  if (failed(layout) || parser.parseGreater())
    return {};
  return parser.getChecked<DistTensorType>(loc, parser.getContext(), shape,
                                           elementType, *layout);
}

void DistTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", ";
  getLayout().printBody(printer);
  printer << ">";
}

#define GET_TYPEDEF_CLASSES
#include "muon/Dialect/Dist/IR/DistTypes.cpp.inc"

void DistDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "muon/Dialect/Dist/IR/DistTypes.cpp.inc"
      >();
}
