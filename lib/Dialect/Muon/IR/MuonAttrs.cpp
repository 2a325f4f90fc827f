//===- MuonAttrs.cpp - muon dialect attributes ----------------------------===//

#include "muon/Dialect/Muon/IR/MuonAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace muon::optim;

#define GET_ATTRDEF_CLASSES
#include "muon/Dialect/Muon/IR/MuonAttrs.cpp.inc"

void MuonDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "muon/Dialect/Muon/IR/MuonAttrs.cpp.inc"
      >();
}

// #muon.param<"name" (, expert = ep[3] | , stage = pp[1])?
//             (, split = d [s0, s1, ...])?>
Attribute ParamAttr::parse(AsmParser &parser, Type) {
  std::string name;
  if (parser.parseLess() || parser.parseString(&name))
    return {};
  LocalKind kind = LocalKind::Global;
  std::string axis;
  int64_t index = -1, splitDim = -1;
  SmallVector<int64_t> sizes;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    std::string keyword;
    if (parser.parseKeywordOrString(&keyword))
      return {};
    if (keyword == "split") {
      if (splitDim >= 0) {
        parser.emitError(loc, "`split` is given twice");
        return {};
      }
      if (parser.parseEqual() || parser.parseInteger(splitDim) ||
          parser.parseLSquare() ||
          parser.parseCommaSeparatedList([&]() -> ParseResult {
            return parser.parseInteger(sizes.emplace_back());
          }) ||
          parser.parseRSquare())
        return {};
      if (splitDim < 0) {
        parser.emitError(loc, "`split` needs a non-negative dim, got ")
            << splitDim;
        return {};
      }
      continue;
    }
    std::optional<LocalKind> parsed = symbolizeLocalKind(keyword);
    if (!parsed || *parsed == LocalKind::Global) {
      parser.emitError(loc, "expected `expert`, `stage` or `split`, got '")
          << keyword << "'";
      return {};
    }
    if (kind != LocalKind::Global) {
      parser.emitError(loc, "a parameter lives in one expert group or one "
                            "stage, not both");
      return {};
    }
    kind = *parsed;
    if (parser.parseEqual() || parser.parseKeywordOrString(&axis) ||
        parser.parseLSquare() || parser.parseInteger(index) ||
        parser.parseRSquare())
      return {};
  }
  if (parser.parseGreater())
    return {};
  MLIRContext *ctx = parser.getContext();
  return ParamAttr::get(ctx, StringAttr::get(ctx, name), kind,
                        StringAttr::get(ctx, axis), index, splitDim, sizes);
}

void ParamAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printString(getName().getValue());
  if (isLocal())
    printer << ", " << stringifyLocalKind(getKind()) << " = "
            << getAxis().getValue() << "[" << getIndex() << "]";
  if (isSplit()) {
    printer << ", split = " << getSplitDim() << " [";
    llvm::interleaveComma(getSplitSizes(), printer);
    printer << "]";
  }
  printer << ">";
}
