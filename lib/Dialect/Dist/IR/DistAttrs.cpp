//===- DistAttrs.cpp - dist dialect attributes ----------------------------===//

#include "muon/Dialect/Dist/IR/DistAttrs.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "DistParsing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace muon::dist;

//===----------------------------------------------------------------------===//
// Shared parsing helpers
//===----------------------------------------------------------------------===//

ParseResult muon::dist::detail::parseAxisName(AsmParser &parser,
                                             StringAttr &name) {
  std::string value;
  if (parser.parseKeywordOrString(&value))
    return failure();
  name = parser.getBuilder().getStringAttr(value);
  return success();
}

using muon::dist::detail::parseAxisName;

/// The standalone form of an attribute that also appears bare inside layouts:
/// `<` bare `>`.
template <typename AttrT>
static Attribute parseBracketed(AsmParser &parser) {
  if (parser.parseLess())
    return {};
  AttrT attr = AttrT::parseBare(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

template <typename AttrT>
static void printBracketed(AsmPrinter &printer, AttrT attr) {
  printer << "<";
  attr.printBare(printer);
  printer << ">";
}

static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        values.push_back(v);
        return success();
      });
}

static void printIntList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << "[";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

//===----------------------------------------------------------------------===//
// PlacementAttr
//===----------------------------------------------------------------------===//

PlacementAttr PlacementAttr::getShard(MLIRContext *ctx, int64_t dim) {
  return get(ctx, PlacementKind::Shard, dim, ReduceKind::Sum);
}
PlacementAttr PlacementAttr::getReplicate(MLIRContext *ctx) {
  return get(ctx, PlacementKind::Replicate, -1, ReduceKind::Sum);
}
PlacementAttr PlacementAttr::getPartial(MLIRContext *ctx, ReduceKind r) {
  return get(ctx, PlacementKind::Partial, -1, r);
}
PlacementAttr PlacementAttr::getReduced(MLIRContext *ctx) {
  return get(ctx, PlacementKind::Reduced, -1, ReduceKind::Sum);
}

PlacementAttr PlacementAttr::parseBare(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return {};
  if (keyword == "replicate")
    return getReplicate(ctx);
  if (keyword == "reduced")
    return getReduced(ctx);
  if (keyword == "shard") {
    int64_t dim;
    if (parser.parseLess() || parser.parseInteger(dim) ||
        parser.parseGreater())
      return {};
    return getShard(ctx, dim);
  }
  if (keyword == "partial") {
    ReduceKind reduce = ReduceKind::Sum;
    if (succeeded(parser.parseOptionalLess())) {
      SMLoc kindLoc = parser.getCurrentLocation();
      StringRef name;
      if (parser.parseKeyword(&name))
        return {};
      std::optional<ReduceKind> parsed = symbolizeReduceKind(name);
      if (!parsed) {
        parser.emitError(kindLoc, "unknown reduction '")
            << name << "'; expected sum, avg, max or min";
        return {};
      }
      reduce = *parsed;
      if (parser.parseGreater())
        return {};
    }
    return getPartial(ctx, reduce);
  }
  parser.emitError(loc, "unknown placement '")
      << keyword << "'; expected shard<d>, replicate, partial<op> or reduced";
  return {};
}

void PlacementAttr::printBare(AsmPrinter &printer) const {
  switch (getKind()) {
  case PlacementKind::Shard:
    printer << "shard<" << getDim() << ">";
    return;
  case PlacementKind::Replicate:
    printer << "replicate";
    return;
  case PlacementKind::Partial:
    printer << "partial<" << stringifyReduceKind(getReduce()) << ">";
    return;
  case PlacementKind::Reduced:
    printer << "reduced";
    return;
  }
}

Attribute PlacementAttr::parse(AsmParser &parser, Type) {
  return parseBracketed<PlacementAttr>(parser);
}

void PlacementAttr::print(AsmPrinter &printer) const {
  printBracketed(printer, *this);
}

//===----------------------------------------------------------------------===//
// StorageAttr
//===----------------------------------------------------------------------===//

LogicalResult
StorageAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    StorageKind kind, ArrayRef<int64_t> dims,
                    ArrayRef<StringAttr> axes, ArrayAttr weights,
                    FlatSymbolRefAttr group, int64_t member, int64_t owner) {
  size_t splits = kind == StorageKind::Dim     ? 1
                  : kind == StorageKind::Block ? 2
                                               : 0;
  if (dims.size() != splits)
    return emitError() << stringifyStorageKind(kind) << " storage needs "
                       << splits << " split dimension(s), got " << dims.size();
  size_t wantAxes = kind == StorageKind::Flat ? 0 : std::max<size_t>(splits, 1);
  if (axes.size() != wantAxes)
    return emitError() << stringifyStorageKind(kind) << " storage needs "
                       << wantAxes << " mesh axis(es), got " << axes.size();
  if (weights.size() != splits ||
      !llvm::all_of(weights, llvm::IsaPred<DenseI64ArrayAttr>))
    return emitError() << "storage weights must be one integer array per split";
  if ((kind == StorageKind::Flat) != static_cast<bool>(group))
    return emitError() << "only flat storage names a flat group";
  if (kind == StorageKind::Flat && member < 0)
    return emitError() << "flat storage member index must be non-negative";
  (void)owner;
  return success();
}

/// split := INT `on` axis (`weights` `[` INT, ... `]`)?
static ParseResult parseSplit(AsmParser &parser, SmallVectorImpl<int64_t> &dims,
                              SmallVectorImpl<StringAttr> &axes,
                              SmallVectorImpl<Attribute> &weights) {
  int64_t dim;
  StringAttr axis;
  if (parser.parseInteger(dim) || parser.parseKeyword("on") ||
      parseAxisName(parser, axis))
    return failure();
  SmallVector<int64_t> w;
  SMLoc weightsLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("weights"))) {
    if (parseIntList(parser, w))
      return failure();
    // An empty list would read back as no weights at all.
    if (w.empty())
      return parser.emitError(weightsLoc)
             << "'weights' needs one positive weight per rank of mesh axis '"
             << axis.getValue() << "', got none";
  }
  dims.push_back(dim);
  axes.push_back(axis);
  weights.push_back(DenseI64ArrayAttr::get(parser.getContext(), w));
  return success();
}

StorageAttr StorageAttr::parseBare(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<StorageKind> kind = symbolizeStorageKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown storage sharding '")
        << keyword << "'; expected dim, block, flat or whole";
    return {};
  }
  SmallVector<int64_t> dims;
  SmallVector<StringAttr> axes;
  SmallVector<Attribute> weights;
  FlatSymbolRefAttr group;
  int64_t member = -1, owner = -1;
  if (parser.parseLess())
    return {};
  switch (*kind) {
  case StorageKind::Dim:
  case StorageKind::Block: {
    // Any number of splits, so that a wrong count is reported as such (by
    // the verifier: dim takes one, block two) rather than as a missing
    // token.
    SMLoc splitsLoc = parser.getCurrentLocation();
    do {
      if (parseSplit(parser, dims, axes, weights))
        return {};
    } while (succeeded(parser.parseOptionalComma()));
    size_t want = *kind == StorageKind::Dim ? 1 : 2;
    if (dims.size() != want) {
      parser.emitError(splitsLoc)
          << keyword << " storage takes " << want
          << (want == 1 ? " split (D on AXIS)" : " splits (outer, inner)")
          << ", got " << dims.size();
      return {};
    }
    break;
  }
  case StorageKind::Flat: {
    SymbolRefAttr ref;
    if (parser.parseAttribute(ref) || parser.parseComma() ||
        parser.parseInteger(member))
      return {};
    group = dyn_cast<FlatSymbolRefAttr>(ref);
    if (!group) {
      parser.emitError(loc, "flat storage needs a flat symbol (@group)");
      return {};
    }
    break;
  }
  case StorageKind::Whole: {
    StringAttr axis;
    if (parser.parseKeyword("on") || parseAxisName(parser, axis) ||
        parser.parseKeyword("owner") || parser.parseInteger(owner))
      return {};
    SMLoc weightsLoc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalKeyword("weights"))) {
      parser.emitError(weightsLoc,
                       "whole storage takes no weights: the owner keeps the "
                       "whole tensor");
      return {};
    }
    axes.push_back(axis);
    break;
  }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<StorageAttr>(loc, ctx, *kind, dims, axes,
                                        ArrayAttr::get(ctx, weights), group,
                                        member, owner);
}

void StorageAttr::printBare(AsmPrinter &printer) const {
  printer << stringifyStorageKind(getKind()) << "<";
  switch (getKind()) {
  case StorageKind::Dim:
  case StorageKind::Block:
    for (size_t i = 0; i < getDims().size(); ++i) {
      if (i)
        printer << ", ";
      printer << getDims()[i] << " on ";
      printer.printKeywordOrString(getAxes()[i].getValue());
      auto w = cast<DenseI64ArrayAttr>(getWeights()[i]).asArrayRef();
      if (!w.empty()) {
        printer << " weights ";
        printIntList(printer, w);
      }
    }
    break;
  case StorageKind::Flat:
    printer.printAttributeWithoutType(getGroup());
    printer << ", " << getMember();
    break;
  case StorageKind::Whole:
    printer << "on ";
    printer.printKeywordOrString(getAxes()[0].getValue());
    printer << " owner " << getOwner();
    break;
  }
  printer << ">";
}

Attribute StorageAttr::parse(AsmParser &parser, Type) {
  return parseBracketed<StorageAttr>(parser);
}

void StorageAttr::print(AsmPrinter &printer) const {
  printBracketed(printer, *this);
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

FailureOr<LayoutAttr> LayoutAttr::parseBody(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc meshLoc = parser.getCurrentLocation();
  SymbolRefAttr meshRef;
  if (parser.parseAttribute(meshRef))
    return failure();
  auto mesh = dyn_cast<FlatSymbolRefAttr>(meshRef);
  if (!mesh)
    return parser.emitError(meshLoc, "expected a mesh symbol like @mesh");

  SmallVector<PlacementAttr> placements;
  if (parser.parseComma() ||
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            PlacementAttr p = PlacementAttr::parseBare(parser);
            if (!p)
              return failure();
            placements.push_back(p);
            return success();
          }))
    return failure();

  SmallVector<ShardOrderAttr> order;
  StorageAttr storage;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (key == "order") {
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Braces, [&]() -> ParseResult {
                int64_t dim;
                SmallVector<StringAttr> axes;
                if (parser.parseInteger(dim) || parser.parseEqual() ||
                    parser.parseCommaSeparatedList(
                        AsmParser::Delimiter::Square, [&]() -> ParseResult {
                          StringAttr axis;
                          if (parseAxisName(parser, axis))
                            return failure();
                          axes.push_back(axis);
                          return success();
                        }))
                  return failure();
                order.push_back(ShardOrderAttr::get(ctx, dim, axes));
                return success();
              }))
        return failure();
    } else if (key == "storage") {
      storage = StorageAttr::parseBare(parser);
      if (!storage)
        return failure();
    } else {
      return parser.emitError(keyLoc, "unknown layout field '")
             << key << "'; expected order or storage";
    }
  }
  return LayoutAttr::get(ctx, mesh, placements, order, storage);
}

void LayoutAttr::printBody(AsmPrinter &printer) const {
  printer.printAttributeWithoutType(getMesh());
  printer << ", [";
  llvm::interleaveComma(getPlacements(), printer,
                        [&](PlacementAttr p) { p.printBare(printer); });
  printer << "]";
  if (!getOrder().empty()) {
    printer << ", order = {";
    llvm::interleaveComma(getOrder(), printer, [&](ShardOrderAttr o) {
      printer << o.getDim() << " = [";
      llvm::interleaveComma(o.getAxes(), printer, [&](StringAttr a) {
        printer.printKeywordOrString(a.getValue());
      });
      printer << "]";
    });
    printer << "}";
  }
  if (getStorage()) {
    printer << ", storage = ";
    getStorage().printBare(printer);
  }
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<LayoutAttr> attr = parseBody(parser);
  if (failed(attr) || parser.parseGreater())
    return {};
  return *attr;
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

#define GET_ATTRDEF_CLASSES
#include "muon/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "muon/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}
