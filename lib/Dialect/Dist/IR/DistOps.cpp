//===- DistOps.cpp - dist dialect operations ------------------------------===//

#include "muon/Dialect/Dist/IR/DistOps.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "DistParsing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace muon;
using namespace muon::dist;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

static ParseResult parseAxisName(OpAsmParser &parser, StringAttr &axis) {
  return muon::dist::detail::parseAxisName(parser, axis);
}

static void printAxisName(OpAsmPrinter &printer, Operation *, StringAttr axis) {
  printer.printKeywordOrString(axis.getValue());
}

/// A flat group's one axis. A list is refused by name: the buffer is split
/// by elements over one axis (docs/dist-dialect.md).
static ParseResult parseFlatGroupAxis(OpAsmParser &parser, StringAttr &axis) {
  if (parseAxisName(parser, axis))
    return failure();
  SMLoc comma = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalComma()))
    return parser.emitError(comma,
                            "a flat group lives on one mesh axis; for storage "
                            "over several axes use a dim or block split, or a "
                            "mesh whose one axis spans those ranks");
  return success();
}

static void printFlatGroupAxis(OpAsmPrinter &printer, Operation *op,
                               StringAttr axis) {
  printAxisName(printer, op, axis);
}

/// `[` axis (`,` axis)* `]`
static ParseResult parseAxisList(OpAsmParser &parser, ArrayAttr &axes) {
  SmallVector<Attribute> names;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            StringAttr name;
            if (parseAxisName(parser, name))
              return failure();
            names.push_back(name);
            return success();
          }))
    return failure();
  axes = parser.getBuilder().getArrayAttr(names);
  return success();
}

static void printAxisList(OpAsmPrinter &printer, Operation *op,
                          ArrayAttr axes) {
  printer << "[";
  llvm::interleaveComma(axes, printer, [&](Attribute a) {
    printAxisName(printer, op, cast<StringAttr>(a));
  });
  printer << "]";
}

/// A reduction written bare: `sum`, `avg`, `max`, `min`.
static ParseResult parseReduceKind(OpAsmParser &parser, ReduceKindAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<ReduceKind> kind = symbolizeReduceKind(name);
  if (!kind)
    return parser.emitError(loc, "unknown reduction '")
           << name << "'; expected sum, avg, max or min";
  attr = ReduceKindAttr::get(parser.getContext(), *kind);
  return success();
}

static void printReduceKind(OpAsmPrinter &printer, Operation *,
                            ReduceKindAttr attr) {
  printer << stringifyReduceKind(attr.getValue());
}

/// `[` name `=` size (`,` name `=` size)* `]`
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &shape) {
  SmallVector<Attribute> axisNames;
  SmallVector<int64_t> sizes;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            StringAttr name;
            int64_t size;
            if (parseAxisName(parser, name) || parser.parseEqual() ||
                parser.parseInteger(size))
              return failure();
            axisNames.push_back(name);
            sizes.push_back(size);
            return success();
          }))
    return failure();
  names = parser.getBuilder().getArrayAttr(axisNames);
  shape = parser.getBuilder().getDenseI64ArrayAttr(sizes);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, Operation *op,
                          ArrayAttr names, DenseI64ArrayAttr shape) {
  printer << "[";
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i)
      printer << ", ";
    printAxisName(printer, op, cast<StringAttr>(name));
    printer << " = " << shape[i];
  }
  printer << "]";
}

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

namespace {
/// Resolves a mesh and a list of its axes for an op, reporting at the op.
struct MeshAxes {
  MeshOp mesh;
  SmallVector<int> axes;
  int64_t groupSize = 1;
};
} // namespace

static FailureOr<MeshOp> resolveMesh(Operation *op, FlatSymbolRefAttr name,
                                     SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(op, name, &tables);
  if (!mesh)
    return op->emitOpError("unknown mesh ")
           << name << ": no dist.mesh with that name is visible here";
  return mesh;
}

static FailureOr<MeshAxes> resolveMeshAxes(Operation *op,
                                           FlatSymbolRefAttr name,
                                           ArrayAttr axes,
                                           SymbolTableCollection &tables) {
  FailureOr<MeshOp> mesh = resolveMesh(op, name, tables);
  if (failed(mesh))
    return failure();
  MeshAxes result;
  result.mesh = *mesh;
  if (axes.empty())
    return op->emitOpError("needs at least one mesh axis");
  for (Attribute a : axes) {
    StringRef axisName = cast<StringAttr>(a).getValue();
    int index = result.mesh.getAxisIndex(axisName);
    if (index < 0)
      return op->emitOpError("mesh ")
             << name << " has no axis '" << axisName << "'";
    if (llvm::is_contained(result.axes, index))
      return op->emitOpError("mesh axis '") << axisName << "' is listed twice";
    result.axes.push_back(index);
    result.groupSize *= result.mesh.getShape()[index];
  }
  return result;
}

static LogicalResult verifyType(Operation *op, Type type,
                                SymbolTableCollection &tables) {
  auto dt = dyn_cast<DistTensorType>(type);
  if (!dt)
    return success();
  return verifyDistTensorType(
      dt, op, [&] { return op->emitOpError(); }, &tables);
}

static std::string sizeStr(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

namespace {
enum class DimRule { Same, Gather, Scatter };
} // namespace

/// Checks result dim `d` against operand dim `d` for a group of `k` ranks.
static LogicalResult checkDim(Operation *op, int64_t d, int64_t in,
                              int64_t out, int64_t k, DimRule rule,
                              StringRef item = "") {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out)) {
    // A dynamic operand covers uneven shards; a static result of a scatter
    // must still be well defined, which needs a static, even operand.
    if (rule == DimRule::Scatter && !ShapedType::isDynamic(out) &&
        ShapedType::isDynamic(in))
      return op->emitOpError() << item << "result dimension "
             << d << " is static (" << out
             << ") but the operand size is dynamic; make it dynamic too";
    return success();
  }
  switch (rule) {
  case DimRule::Same:
    if (in != out)
      return op->emitOpError() << item << "result dimension "
             << d << " has size " << out << " but the operand has " << in;
    return success();
  case DimRule::Gather: {
    int64_t gathered;
    if (llvm::MulOverflow(in, k, gathered))
      return op->emitOpError() << item << "result dimension " << d
             << ": gathering " << in << " from each of " << k
             << " ranks gives a size past 2^63 - 1";
    if (out != gathered)
      return op->emitOpError() << item << "result dimension "
             << d << " has size " << out << ", but gathering " << in
             << " from each of " << k << " ranks gives " << gathered;
    return success();
  }
  case DimRule::Scatter:
    if (in % k != 0)
      return op->emitOpError() << item << "result dimension "
             << d << " is static (" << out << ") but " << in
             << " does not split evenly over " << k
             << " ranks; use a dynamic size for uneven chunks";
    if (out != in / k)
      return op->emitOpError() << item << "result dimension "
             << d << " has size " << out << ", but splitting " << in
             << " over " << k << " ranks gives " << in / k;
    return success();
  }
  return success();
}

/// Checks element type, rank, dims and per-dim size rules of a collective.
/// `item` prefixes messages about one item of a batch ("item 2: ").
static LogicalResult
verifyCollectiveShapes(Operation *op, RankedTensorType in,
                       RankedTensorType out, int64_t k,
                       function_ref<DimRule(int64_t)> ruleForDim,
                       StringRef item = "") {
  for (int64_t d = 0; d < in.getRank() && d < out.getRank(); ++d)
    if (failed(checkDim(op, d, in.getDimSize(d), out.getDimSize(d), k,
                        ruleForDim(d), item)))
      return failure();
  return success();
}
static LogicalResult
verifyCollectiveShapes(Operation *op, int64_t k,
                       function_ref<DimRule(int64_t)> ruleForDim) {
  return verifyCollectiveShapes(
      op, cast<RankedTensorType>(op->getOperand(0).getType()),
      cast<RankedTensorType>(op->getResult(0).getType()), k, ruleForDim);
}

/// Mesh-independent checks shared by every collective.
static LogicalResult verifyCollectiveBase(Operation *op, RankedTensorType in,
                                          RankedTensorType out,
                                          ArrayRef<int64_t> dims,
                                          StringRef item = "") {
  if (in.getElementType() != out.getElementType())
    return op->emitOpError()
           << item << "result element type " << out.getElementType()
           << " differs from the operand's " << in.getElementType();
  if (in.getRank() != out.getRank())
    return op->emitOpError()
           << item << "result rank " << out.getRank()
           << " differs from the operand rank " << in.getRank();
  for (int64_t d : dims)
    if (d < 0 || d >= in.getRank())
      return op->emitOpError()
             << item << "dimension " << d << " is out of range for a rank-"
             << in.getRank() << " tensor";
  return success();
}
static LogicalResult verifyCollectiveBase(Operation *op,
                                          ArrayRef<int64_t> dims) {
  return verifyCollectiveBase(
      op, cast<RankedTensorType>(op->getOperand(0).getType()),
      cast<RankedTensorType>(op->getResult(0).getType()), dims);
}

/// Rooted gather/scatter with per-rank `sizes` or `weights` along `dim`:
/// one entry per group rank; the full length (result of a gather, operand of
/// a scatter) must match `sizes`; the piece is dynamic unless all sizes agree.
static LogicalResult
verifyExplicitSplit(Operation *op, RankedTensorType in, RankedTensorType out,
                    int64_t k, int64_t dim,
                    std::optional<ArrayRef<int64_t>> sizes,
                    std::optional<ArrayRef<int64_t>> weights,
                    bool pieceIsResult, StringRef item = "") {
  if (sizes && weights)
    return op->emitOpError() << item << "takes `sizes` or `weights`, not both";
  ArrayRef<int64_t> given = sizes ? *sizes : *weights;
  StringRef what = sizes ? "sizes" : "weights";
  if (static_cast<int64_t>(given.size()) != k)
    return op->emitOpError() << item << "has " << given.size() << " " << what
                             << " for a group of " << k << " ranks";
  for (int64_t v : given)
    if (sizes ? v < 0 : v <= 0)
      return op->emitOpError()
             << item << what
             << (sizes ? " must be non-negative" : " must be positive")
             << ", got " << v;
  RankedTensorType piece = pieceIsResult ? out : in;
  RankedTensorType full = pieceIsResult ? in : out;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (d == dim)
      continue;
    if (failed(checkDim(op, d, in.getDimSize(d), out.getDimSize(d), k,
                        DimRule::Same, item)))
      return failure();
  }
  // Every rank's piece along `dim`: the sizes as given, or the weighted
  // chunks of the full tensor (unknown while its size is dynamic).
  std::vector<int64_t> pieces;
  if (sizes) {
    pieces.assign(sizes->begin(), sizes->end());
    int64_t total = 0;
    for (int64_t v : pieces) {
      if (v > layout::kMaxElements - total)
        return op->emitOpError() << item << "sizes add up to more than 2^62";
      total += v;
    }
    if (!full.isDynamicDim(dim) && full.getDimSize(dim) != total)
      return op->emitOpError()
             << item << "sizes add up to " << total
             << " but the full tensor has " << full.getDimSize(dim)
             << " along dimension " << dim;
  } else {
    std::vector<int64_t> w(weights->begin(), weights->end());
    if (std::string err = layout::verifyWeights(w, k, "`weights`");
        !err.empty())
      return op->emitOpError() << item << err;
    if (full.isDynamicDim(dim)) {
      // The chunk rule's own check (checkDim): a scatter's static piece of
      // an operand whose size is unknown is not well defined.
      if (pieceIsResult && !piece.isDynamicDim(dim))
        return op->emitOpError()
               << item << "result dimension " << dim << " is static ("
               << piece.getDimSize(dim)
               << ") but the operand size is dynamic; make it dynamic too";
      return success();
    }
    pieces = layout::chunkSizes(full.getDimSize(dim), k, w);
  }
  if (piece.isDynamicDim(dim))
    return success();
  int64_t p = piece.getDimSize(dim);
  if (llvm::any_of(pieces, [&](int64_t v) { return v != pieces.front(); })) {
    // The first pieces are enough to see the difference.
    std::string shown;
    for (size_t i = 0; i < pieces.size() && i < 8; ++i)
      shown += (i ? ", " : "") + std::to_string(pieces[i]);
    if (pieces.size() > 8)
      shown += ", ...";
    return op->emitOpError()
           << item << "piece dimension " << dim << " is static (" << p
           << ") but the " << what << " give the ranks different pieces ("
           << shown << "); make it dynamic";
  }
  if (pieces.front() != p)
    return op->emitOpError()
           << item << "piece dimension " << dim << " is static (" << p
           << ") but the " << what << " give every rank " << pieces.front();
  return success();
}

static LogicalResult verifyRoot(Operation *op, int64_t root, int64_t k,
                                StringRef item = "") {
  if (root < 0 || root >= k)
    return op->emitOpError()
           << item << "root " << root << " is out of range for a group of "
           << k << " ranks";
  return success();
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

int64_t MeshOp::getNumRanks() {
  int64_t n = 1;
  for (int64_t s : getShape())
    n *= s;
  return n;
}

int MeshOp::getAxisIndex(StringRef name) {
  for (auto [i, a] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(a).getValue() == name)
      return static_cast<int>(i);
  return -1;
}

LogicalResult MeshOp::verify() {
  if (getAxisNames().size() != getShape().size())
    return emitOpError("has ") << getAxisNames().size() << " axis names but "
                               << getShape().size() << " sizes";
  if (getShape().empty())
    return emitOpError("needs at least one axis");
  llvm::StringSet<> seen;
  for (auto [name, size] : llvm::zip(getAxisNames(), getShape())) {
    StringRef axis = cast<StringAttr>(name).getValue();
    if (!seen.insert(axis).second)
      return emitOpError("duplicate mesh axis '") << axis << "'";
    if (size <= 0)
      return emitOpError("mesh axis '")
             << axis << "' has non-positive size " << size;
  }
  // Rank counts, indices and byte totals are int64 products of the axis
  // sizes: a limit far below overflow keeps every one of them exact.
  constexpr int64_t kMaxRanks = int64_t(1) << 31;
  int64_t ranks = 1;
  for (int64_t size : getShape()) {
    if (size > kMaxRanks / ranks)
      return emitOpError("has more than 2^31 ranks (the product of its axis "
                         "sizes); the largest supported mesh has 2^31");
    ranks *= size;
  }
  if (std::optional<ArrayRef<int64_t>> devices = getDevices()) {
    if (static_cast<int64_t>(devices->size()) != getNumRanks())
      return emitOpError("lists ")
             << devices->size() << " device ids but the mesh has "
             << getNumRanks() << " ranks";
    llvm::DenseSet<int64_t> ids;
    for (int64_t id : *devices) {
      if (id < 0)
        return emitOpError("device id ") << id << " is negative";
      if (!ids.insert(id).second)
        return emitOpError("device id ") << id << " is listed twice";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// FlatGroupOp
//===----------------------------------------------------------------------===//

LogicalResult FlatGroupOp::verify() {
  if (getNumel().empty())
    return emitOpError("needs at least one member");
  int64_t total = 0;
  for (auto [i, n] : llvm::enumerate(getNumel())) {
    if (n <= 0)
      return emitOpError("member ")
             << i << " has non-positive element count " << n;
    // The members are one buffer: its offsets must not wrap.
    if (n > layout::kMaxElements - total)
      return emitOpError("members hold more than 2^62 elements in all "
                         "(from member ")
             << i << " on)";
    total += n;
  }
  return success();
}

LogicalResult
FlatGroupOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> axes =
      resolveMeshAxes(*this, getMeshAttr(),
                      ArrayAttr::get(getContext(), {getAxisAttr()}), tables);
  if (failed(axes))
    return failure();
  if (std::optional<ArrayRef<int64_t>> weights = getWeights()) {
    // An empty list would read as an even split; say so rather than guess.
    if (weights->empty())
      return emitOpError("'weights' needs one positive weight per rank of "
                         "mesh axis '")
             << getAxis() << "', got none (leave it out for an even split)";
    std::string err = layout::verifyWeights(
        std::vector<int64_t>(weights->begin(), weights->end()),
        axes->groupSize, "flat group over mesh axis '" + getAxis().str() + "'");
    if (!err.empty())
      return emitOpError(err);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() {
  return verifyCollectiveBase(*this, {static_cast<int64_t>(getGatherDim())});
}
LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g))
    return failure();
  return verifyCollectiveShapes(*this, g->groupSize, [&](int64_t d) {
    return d == static_cast<int64_t>(getGatherDim()) ? DimRule::Gather
                                                     : DimRule::Same;
  });
}

LogicalResult ReduceScatterOp::verify() {
  return verifyCollectiveBase(*this, {static_cast<int64_t>(getScatterDim())});
}
LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g))
    return failure();
  int64_t dim = getScatterDim();
  if (getSizes() || getWeights())
    return verifyExplicitSplit(
        *this, getInput().getType(), getResult().getType(), g->groupSize, dim,
        getSizes(), getWeights(), /*pieceIsResult=*/true);
  return verifyCollectiveShapes(*this, g->groupSize, [&](int64_t d) {
    return d == dim ? DimRule::Scatter : DimRule::Same;
  });
}

LogicalResult AllReduceOp::verify() { return verifyCollectiveBase(*this, {}); }
LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g))
    return failure();
  return verifyCollectiveShapes(*this, g->groupSize,
                                [](int64_t) { return DimRule::Same; });
}

LogicalResult BroadcastOp::verify() { return verifyCollectiveBase(*this, {}); }
LogicalResult BroadcastOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g) || failed(verifyRoot(*this, getRoot(), g->groupSize)))
    return failure();
  return verifyCollectiveShapes(*this, g->groupSize,
                                [](int64_t) { return DimRule::Same; });
}

LogicalResult GatherOp::verify() {
  return verifyCollectiveBase(*this, {static_cast<int64_t>(getGatherDim())});
}
LogicalResult GatherOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g) || failed(verifyRoot(*this, getRoot(), g->groupSize)))
    return failure();
  int64_t dim = getGatherDim();
  if (getSizes() || getWeights())
    return verifyExplicitSplit(
        *this, getInput().getType(), getResult().getType(), g->groupSize, dim,
        getSizes(), getWeights(), /*pieceIsResult=*/false);
  return verifyCollectiveShapes(*this, g->groupSize, [&](int64_t d) {
    return d == dim ? DimRule::Gather : DimRule::Same;
  });
}

LogicalResult ScatterOp::verify() {
  return verifyCollectiveBase(*this, {static_cast<int64_t>(getScatterDim())});
}
LogicalResult ScatterOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g) || failed(verifyRoot(*this, getRoot(), g->groupSize)))
    return failure();
  int64_t dim = getScatterDim();
  if (getSizes() || getWeights())
    return verifyExplicitSplit(
        *this, getInput().getType(), getResult().getType(), g->groupSize, dim,
        getSizes(), getWeights(), /*pieceIsResult=*/true);
  return verifyCollectiveShapes(*this, g->groupSize, [&](int64_t d) {
    return d == dim ? DimRule::Scatter : DimRule::Same;
  });
}

/// The split dim of item `i` of a batch (a broadcast item has none).
static int64_t itemDim(GatherBatchOp op, size_t i) { return op.getDims()[i]; }
static int64_t itemDim(ScatterBatchOp op, size_t i) { return op.getDims()[i]; }
static int64_t itemDim(BroadcastBatchOp, size_t) { return -1; }
static size_t dimCount(GatherBatchOp op) { return op.getDims().size(); }
static size_t dimCount(ScatterBatchOp op) { return op.getDims().size(); }
static size_t dimCount(BroadcastBatchOp op) { return op.getInputs().size(); }

/// Item `i` of a batch's per-item `sizes` or `weights` (nullopt when the
/// op has none, the item's array is empty, or there is no item `i`).
static std::optional<ArrayRef<int64_t>> itemList(std::optional<ArrayAttr> lists,
                                                 size_t i) {
  if (!lists || i >= lists->size())
    return std::nullopt;
  auto list = dyn_cast<DenseI64ArrayAttr>((*lists)[i]);
  if (!list || list.empty())
    return std::nullopt;
  return list.asArrayRef();
}

std::pair<std::optional<ArrayRef<int64_t>>, std::optional<ArrayRef<int64_t>>>
GatherBatchOp::getItemSplit(size_t i) {
  return {itemList(getSizes(), i), itemList(getWeights(), i)};
}
std::pair<std::optional<ArrayRef<int64_t>>, std::optional<ArrayRef<int64_t>>>
ScatterBatchOp::getItemSplit(size_t i) {
  return {itemList(getSizes(), i), itemList(getWeights(), i)};
}

/// Per-item `sizes` / `weights` of a batch: one array per item.
static LogicalResult verifyItemLists(Operation *op, size_t n,
                                     std::optional<ArrayAttr> lists,
                                     StringRef what) {
  if (lists && lists->size() != n)
    return op->emitOpError("has ")
           << lists->size() << " arrays of " << what << " for " << n
           << " items (one per item; an empty one for the chunk rule)";
  return success();
}
template <typename BatchOp>
static LogicalResult verifyItemLists(BatchOp op, size_t n) {
  if constexpr (std::is_same_v<BatchOp, BroadcastBatchOp>)
    return success();
  else
    return success(
        succeeded(verifyItemLists(op, n, op.getSizes(), "sizes")) &&
        succeeded(verifyItemLists(op, n, op.getWeights(), "weights")));
}

/// Mesh-independent checks of a batch: one dim and root per item, and each
/// item a valid rooted collective on its own.
template <typename BatchOp>
static LogicalResult verifyBatch(BatchOp op) {
  size_t n = op.getInputs().size();
  if (n == 0)
    return op.emitOpError("has no items");
  if (op.getResults().size() != n)
    return op.emitOpError("has ")
           << n << " operands but " << op.getResults().size() << " results";
  if (isa<BroadcastBatchOp>(op.getOperation()) && op.getRoots().size() != n)
    return op.emitOpError("has ")
           << n << " items but " << op.getRoots().size() << " roots";
  if (dimCount(op) != n || op.getRoots().size() != n)
    return op.emitOpError("has ")
           << n << " items but " << dimCount(op) << " dims and "
           << op.getRoots().size() << " roots";
  if (failed(verifyItemLists(op, n)))
    return failure();
  for (size_t i = 0; i < n; ++i) {
    SmallVector<int64_t> dims;
    if (!isa<BroadcastBatchOp>(op.getOperation()))
      dims.push_back(itemDim(op, i));
    if (failed(verifyCollectiveBase(
            op, cast<RankedTensorType>(op.getInputs()[i].getType()),
            cast<RankedTensorType>(op.getResults()[i].getType()), dims,
            "item " + std::to_string(i) + ": ")))
      return failure();
  }
  return success();
}

/// Checks that need the mesh: roots inside the group, sizes by the chunk
/// rule (gathering or scattering along each item's dim).
template <typename BatchOp>
static LogicalResult verifyBatchSymbolUses(BatchOp op, DimRule splitRule,
                                           SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(op, op.getMeshAttr(), op.getAxes(), tables);
  if (failed(g))
    return failure();
  for (size_t i = 0; i < op.getInputs().size(); ++i) {
    std::string item = "item " + std::to_string(i) + ": ";
    int64_t dim = itemDim(op, i);
    auto in = cast<RankedTensorType>(op.getInputs()[i].getType());
    auto out = cast<RankedTensorType>(op.getResults()[i].getType());
    if (failed(verifyRoot(op, op.getRoots()[i], g->groupSize, item)))
      return failure();
    auto [sizes, weights] = op.getItemSplit(i);
    if (sizes || weights) {
      if (failed(verifyExplicitSplit(
              op, in, out, g->groupSize, dim, sizes, weights,
              /*pieceIsResult=*/splitRule == DimRule::Scatter, item)))
        return failure();
      continue;
    }
    if (failed(verifyCollectiveShapes(
            op, in, out, g->groupSize,
            [&](int64_t d) { return d == dim ? splitRule : DimRule::Same; },
            item)))
      return failure();
  }
  return success();
}

LogicalResult GatherBatchOp::verify() { return verifyBatch(*this); }
LogicalResult
GatherBatchOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyBatchSymbolUses(*this, DimRule::Gather, tables);
}
LogicalResult BroadcastBatchOp::verify() { return verifyBatch(*this); }
LogicalResult
BroadcastBatchOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyBatchSymbolUses(*this, DimRule::Same, tables);
}
LogicalResult ScatterBatchOp::verify() { return verifyBatch(*this); }
LogicalResult
ScatterBatchOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyBatchSymbolUses(*this, DimRule::Scatter, tables);
}

LogicalResult AllToAllOp::verify() {
  return verifyCollectiveBase(
      *this, {static_cast<int64_t>(getSplitDim()), static_cast<int64_t>(getConcatDim())});
}
LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<MeshAxes> g =
      resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
  if (failed(g))
    return failure();
  int64_t split = getSplitDim(), concat = getConcatDim();
  return verifyCollectiveShapes(*this, g->groupSize, [&](int64_t d) {
    if (split == concat)
      return DimRule::Same;
    if (d == split)
      return DimRule::Scatter;
    return d == concat ? DimRule::Gather : DimRule::Same;
  });
}

LogicalResult WaitOp::verify() {
  for (auto [i, token] : llvm::enumerate(getTokens()))
    for (Value earlier : getTokens().take_front(i))
      if (earlier == token)
        return emitOpError("token waited twice: operand ")
               << i << " repeats an earlier operand";
  for (Value token : getTokens()) {
    int waits = 0;
    for (OpOperand &use : token.getUses())
      if (isa<WaitOp>(use.getOwner()))
        ++waits;
    if (waits > 1)
      return emitOpError("token waited twice: it has ")
             << waits << " dist.wait uses; a token is consumed by one wait";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Global view
//===----------------------------------------------------------------------===//

LogicalResult RedistributeOp::verify() {
  DistTensorType in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape())
    return emitOpError("cannot change the global shape");
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  if (in.getMesh() != out.getMesh())
    return emitOpError("cannot move a tensor to another mesh (")
           << in.getMesh() << " to " << out.getMesh() << ")";
  return success();
}

LogicalResult
RedistributeOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (failed(verifyType(*this, getInput().getType(), tables)))
    return failure();
  return verifyType(*this, getResult().getType(), tables);
}

/// Checks that `local` is a valid local type for `global` on every rank.
static LogicalResult verifyLocalView(Operation *op, DistTensorType global,
                                     RankedTensorType local,
                                     SymbolTableCollection &tables) {
  if (failed(verifyType(op, global, tables)))
    return failure();
  if (local.getElementType() != global.getElementType())
    return op->emitOpError("local element type ")
           << local.getElementType() << " differs from the global "
           << global.getElementType();
  RankedTensorType expected = localTensorType(global, op);
  if (local.getRank() != expected.getRank())
    return op->emitOpError("local tensor must have rank ")
           << expected.getRank() << " (" << expected << "), got "
           << local.getRank();
  for (int64_t d = 0; d < local.getRank(); ++d) {
    int64_t want = expected.getDimSize(d), got = local.getDimSize(d);
    if (ShapedType::isDynamic(got) || want == got)
      continue;
    if (ShapedType::isDynamic(want)) {
      int64_t combinations = localShapeCombinations(global, op);
      if (combinations > kMaxLocalShapeCombinations)
        return op->emitOpError("local dimension ")
               << d << " must be dynamic: the tensor is split over "
               << combinations
               << " combinations of mesh coordinates, more than the "
               << kMaxLocalShapeCombinations
               << " whose local shapes the verifier compares; got " << got;
      return op->emitOpError("local dimension ")
             << d << " differs between ranks and must be dynamic, got "
             << got;
    }
    return op->emitOpError("local dimension ")
           << d << " is " << sizeStr(want) << " on every rank, got " << got;
  }
  return success();
}

LogicalResult ToLocalOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLocalView(*this, getInput().getType(), getResult().getType(),
                         tables);
}

LogicalResult FromLocalOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLocalView(*this, getResult().getType(), getInput().getType(),
                         tables);
}

//===----------------------------------------------------------------------===//
// Rank queries
//===----------------------------------------------------------------------===//

LogicalResult RankOp::verifySymbolUses(SymbolTableCollection &tables) {
  return resolveMesh(*this, getMeshAttr(), tables);
}

LogicalResult CoordOp::verifySymbolUses(SymbolTableCollection &tables) {
  return resolveMeshAxes(*this, getMeshAttr(), getAxes(), tables);
}

#define GET_OP_CLASSES
#include "muon/Dialect/Dist/IR/DistOps.cpp.inc"
