//===- MuonOps.cpp - muon dialect operations ------------------------------===//

#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;
using ::muon::dist::DistTensorType;

/// `0.02` (an f64 attribute) or `%v` (an f64 value), for apply_update's lr
/// and weight_decay.
static ParseResult
parseF64ValueOrAttr(OpAsmParser &parser,
                    std::optional<OpAsmParser::UnresolvedOperand> &value,
                    FloatAttr &attr) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult isValue = parser.parseOptionalOperand(operand);
  if (isValue.has_value()) {
    if (failed(*isValue))
      return failure();
    value = operand;
    return success();
  }
  double v = 0;
  if (parser.parseFloat(v))
    return failure();
  attr = parser.getBuilder().getF64FloatAttr(v);
  return success();
}

static void printF64ValueOrAttr(OpAsmPrinter &printer, Operation *,
                                Value value, FloatAttr attr) {
  if (value)
    printer << value;
  else
    printer.printAttributeWithoutType(attr);
}

#define GET_OP_CLASSES
#include "muon/Dialect/Muon/IR/MuonOps.cpp.inc"

static constexpr std::array<double, 3> kDefaultCoeffs = {3.4445, -4.7750,
                                                         2.0315};

namespace {
/// The global shape and element type of a step operand, distributed or
/// plain (a global-view step).
struct GlobalTensor {
  ArrayRef<int64_t> shape;
  Type elementType;
  int64_t getRank() const { return static_cast<int64_t>(shape.size()); }
};
} // namespace

static GlobalTensor globalTensorOf(Type type) {
  if (auto d = dyn_cast<DistTensorType>(type))
    return {d.getShape(), d.getElementType()};
  auto t = cast<RankedTensorType>(type);
  return {t.getShape(), t.getElementType()};
}

/// Checks the Newton-Schulz hyper-parameters shared by muon.step and
/// muon.newton_schulz.
static LogicalResult verifyNsParams(Operation *op, int64_t steps,
                                    size_t numCoeffs, bool allowOneTriple,
                                    double eps, Type computeType) {
  if (steps < 1)
    return op->emitOpError("ns_steps must be at least 1, got ") << steps;
  // A bound that keeps every product of ns_steps (coefficient counts, FLOP
  // estimates) far from overflow; real schedules use 5 to 10 iterations.
  constexpr int64_t kMaxSteps = 1 << 20;
  if (steps > kMaxSteps)
    return op->emitOpError("ns_steps must be at most ")
           << kMaxSteps << ", got " << steps;
  if (numCoeffs != static_cast<size_t>(3 * steps) &&
      !(allowOneTriple && numCoeffs == 3))
    return op->emitOpError("has ")
           << numCoeffs << " Newton-Schulz coefficients; expected "
           << (allowOneTriple ? "3 (one (a, b, c) triple) or " : "")
           << 3 * steps << " (one triple per iteration, ns_steps = " << steps
           << ")";
  if (!std::isfinite(eps))
    return op->emitOpError("eps must be finite, got ") << eps;
  if (!(eps >= 0))
    return op->emitOpError("eps must be non-negative, got ") << eps;
  if (computeType && !computeType.isF32() && !computeType.isBF16())
    return op->emitOpError("Newton-Schulz computes in f32 or bf16, not ")
           << computeType;
  return success();
}

/// Newton-Schulz coefficients must be finite numbers.
static LogicalResult verifyFiniteCoeffs(Operation *op,
                                        ArrayRef<double> coeffs) {
  for (auto [k, c] : llvm::enumerate(coeffs))
    if (!std::isfinite(c))
      return op->emitOpError("Newton-Schulz coefficient #")
             << k << " is not finite (" << c << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// StepOp
//===----------------------------------------------------------------------===//

std::array<double, 3> StepOp::getCoeffsOf(int64_t i) {
  std::optional<ArrayRef<double>> c = getNsCoeffs();
  if (!c)
    return kDefaultCoeffs;
  size_t base = c->size() == 3 ? 0 : static_cast<size_t>(3 * i);
  return {(*c)[base], (*c)[base + 1], (*c)[base + 2]};
}

SmallVector<double> StepOp::getCoeffList() {
  if (std::optional<ArrayRef<double>> c = getNsCoeffs())
    return SmallVector<double>(c->begin(), c->end());
  return SmallVector<double>(kDefaultCoeffs.begin(), kDefaultCoeffs.end());
}

Type StepOp::getNsElementType() {
  if (std::optional<Type> t = getNsDtype())
    return *t;
  return Float32Type::get(getContext());
}

ParamAttr StepOp::getParamInfoOf(int64_t i) {
  if (std::optional<ArrayAttr> info = getParamInfo())
    if (i < static_cast<int64_t>(info->size()))
      return cast<ParamAttr>((*info)[i]);
  MLIRContext *ctx = getContext();
  return ParamAttr::get(ctx, StringAttr::get(ctx, ""), LocalKind::Global,
                        StringAttr::get(ctx, ""), -1, -1, {});
}

bool StepOp::isGlobalView() {
  return llvm::any_of(getOperands().take_front(3 * getNumParams()),
                      [](Value v) { return !isa<DistTensorType>(v.getType()); });
}

std::string StepOp::describeParam(int64_t i) {
  std::string s = "#" + std::to_string(i);
  StringRef name = getParamInfoOf(i).getName().getValue();
  if (!name.empty())
    s += " ('" + name.str() + "')";
  return s;
}

LogicalResult StepOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties properties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  // Operand segments: params, grads, momenta. Results: params' then momenta'
  // types.
  auto *props = properties.as<Properties *>();
  ArrayRef<int32_t> sizes = props->operandSegmentSizes;
  int32_t numParams = sizes[0], numGrads = sizes[1];
  for (int32_t i = 0; i < numParams; ++i)
    inferred.push_back(operands[i].getType());
  for (int32_t i = 0; i < sizes[2]; ++i)
    inferred.push_back(operands[numParams + numGrads + i].getType());
  return success();
}

LogicalResult StepOp::verify() {
  int64_t n = getNumParams();
  if (n == 0)
    return emitOpError("needs at least one parameter");
  if (static_cast<int64_t>(getGrads().size()) != n)
    return emitOpError("has ") << n << " parameters but "
                               << getGrads().size() << " gradients";
  if (static_cast<int64_t>(getMomenta().size()) != n)
    return emitOpError("has ") << n << " parameters but "
                               << getMomenta().size() << " momentum buffers";
  if (std::optional<ArrayAttr> info = getParamInfo())
    if (static_cast<int64_t>(info->size()) != n)
      return emitOpError("param_info has ")
             << info->size() << " entries for " << n << " parameters";

  // Either every operand is distributed or none is (a global-view step).
  bool anyDist = false, anyPlain = false;
  for (Value v : getOperands().take_front(3 * n))
    (isa<DistTensorType>(v.getType()) ? anyDist : anyPlain) = true;
  if (anyDist && anyPlain)
    return emitOpError("mixes !dist.tensor operands with plain tensors; a "
                       "step is distributed (every operand a !dist.tensor) "
                       "or global-view (every operand a plain tensor, given "
                       "layouts by convert-shard-to-dist)");

  for (int64_t i = 0; i < n; ++i) {
    GlobalTensor p = globalTensorOf(getParams()[i].getType());
    if (p.getRank() < 2)
      return emitOpError("parameter ")
             << describeParam(i) << " has rank " << p.getRank()
             << (p.getRank() == 0
                     ? std::string(" (a scalar)")
                     : " (shape " + layout::shapeString(p.shape) + ")")
             << "; Muon orthogonalises matrices, so give parameters with "
                "fewer than 2 dims to another optimizer (e.g. AdamW)";
    if (!isa<FloatType>(p.elementType))
      return emitOpError("parameter ")
             << describeParam(i) << " has non-float element type "
             << p.elementType;
    if (ParamAttr info = getParamInfoOf(i); info.isSplit()) {
      int64_t d = info.getSplitDim(), rank = p.getRank();
      if (d != rank - 2 && d != rank - 1)
        return emitOpError("parameter ")
               << describeParam(i) << " splits dim " << d
               << " for Newton-Schulz, but only its matrix dims (" << rank - 2
               << " and " << rank - 1 << ") can be split";
      // Blocks of an empty matrix would be empty too: nothing to split.
      if (llvm::is_contained(p.shape, 0))
        return emitOpError("parameter ")
               << describeParam(i) << " of shape "
               << layout::shapeString(p.shape)
               << " has no elements; it has nothing to split into "
                  "Newton-Schulz blocks";
      int64_t total = 0, length = p.shape[d];
      for (int64_t size : info.getSplitSizes()) {
        if (size <= 0)
          return emitOpError("parameter ")
                 << describeParam(i) << " has a Newton-Schulz block of size "
                 << size << "; block sizes must be positive";
        // Compared before adding: no sum of sizes can overflow.
        if (size > length - total)
          return emitOpError("parameter ")
                 << describeParam(i)
                 << " has Newton-Schulz blocks adding up to more than dim " << d
                 << ", which has " << length;
        total += size;
      }
      if (total != length)
        return emitOpError("parameter ")
               << describeParam(i) << " has Newton-Schulz blocks adding up to "
               << total << " along dim " << d << ", which has " << length;
    }
    for (auto [what, v] : {std::pair<StringRef, Value>{"gradient", getGrads()[i]},
                           {"momentum buffer", getMomenta()[i]}}) {
      GlobalTensor t = globalTensorOf(v.getType());
      if (t.shape != p.shape)
        return emitOpError()
               << what << " of parameter " << describeParam(i) << " has shape "
               << layout::shapeString(t.shape) << " but the parameter has "
               << layout::shapeString(p.shape);
      if (t.elementType != p.elementType)
        return emitOpError() << what << " of parameter " << describeParam(i)
                             << " has element type " << t.elementType
                             << " but the parameter has " << p.elementType;
    }
  }

  if (failed(verifyNsParams(*this, getNsSteps(),
                            getNsCoeffs() ? getNsCoeffs()->size() : 3,
                            /*allowOneTriple=*/true, getEps().convertToDouble(),
                            getNsElementType())))
    return failure();
  if (std::optional<ArrayRef<double>> coeffs = getNsCoeffs())
    if (failed(verifyFiniteCoeffs(*this, *coeffs)))
      return failure();
  if (getLrAttr() && getLrValue())
    return emitOpError("takes lr as an attribute or as an operand lr(%v), "
                       "not both");
  if (!getLrAttr() && !getLrValue())
    return emitOpError("needs lr: an attribute (lr = 0.02 : f64) or an f64 "
                       "operand lr(%v)");
  if (getWeightDecayAttr() && getWeightDecayValue())
    return emitOpError("takes weight_decay as an attribute or as an operand "
                       "weight_decay(%v), not both");
  // Values given as operands are read when the step runs; the host checks
  // them (the Python frontend as torch.optim.Muon does).
  double beta = getMomentum().convertToDouble();
  if (std::optional<APFloat> lrAttr = getLr()) {
    double lr = lrAttr->convertToDouble();
    if (!std::isfinite(lr))
      return emitOpError("lr must be finite, got ") << lr;
    if (!(lr >= 0))
      return emitOpError("lr must be non-negative, got ") << lr;
    if (lr > kMaxLrOrWeightDecay)
      return emitOpError("lr must be at most 2^60 (the step computes in "
                         "f32), got ")
             << lr;
  }
  if (!(beta >= 0 && beta < 1))
    return emitOpError("momentum must be in [0, 1), got ") << beta;
  double wd = getWeightDecayConstant();
  if (!std::isfinite(wd))
    return emitOpError("weight_decay must be finite, got ") << wd;
  if (!(wd >= 0))
    return emitOpError("weight_decay must be non-negative, got ") << wd;
  if (wd > kMaxLrOrWeightDecay)
    return emitOpError("weight_decay must be at most 2^60 (the step computes "
                       "in f32), got ")
           << wd;
  if (static_cast<int64_t>(getPrefetchCount()) < 0)
    return emitOpError("prefetch_count must be non-negative, got ")
           << static_cast<int64_t>(getPrefetchCount());

  if (std::optional<ArrayRef<int64_t>> owners = getOwners())
    if (static_cast<int64_t>(owners->size()) != n)
      return emitOpError("owners has ")
             << owners->size() << " entries for " << n << " parameters";
  bool isExplicit = getStrategy() == Strategy::Explicit;
  if (getAssignment() && !isExplicit)
    return emitOpError("has an `assignment` but strategy is ")
           << stringifyStrategy(getStrategy())
           << "; set strategy = #muon.strategy<explicit>";
  if (isExplicit && !getAssignment() && !getOwners())
    return emitOpError("strategy explicit needs an `assignment` (entry r "
                       "lists the parameters rank r owns) or `owners`");
  if (getAssignment() && getOwners())
    return emitOpError("takes `assignment` or `owners`, not both");
  // A step of distributed tensors checks this after its layouts
  // (verifySymbolUses); a global-view step has no more checks to come.
  if (isGlobalView())
    return verifyDistinctOperands();
  return success();
}

/// Appends `storage` to `diag` in its bare form (`dim<0 on dp>`), or `none`.
static void printStorage(InFlightDiagnostic &diag, dist::StorageAttr storage) {
  if (!storage) {
    diag << "none";
    return;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << storage;
  // The attribute prints as `#dist.storage<...>`; its bare form reads as
  // in a layout.
  StringRef bare = text;
  if (bare.consume_front("#dist.storage<"))
    bare.consume_back(">");
  diag << bare;
}

/// The layout of a parameter's gradient may differ from the parameter's only
/// by partial<sum|avg> where the parameter is replicated (the step reduces).
static bool gradPlacementOk(dist::PlacementAttr grad,
                            dist::PlacementAttr param) {
  if (grad == param)
    return true;
  bool replicated = param.getKind() == dist::PlacementKind::Replicate ||
                    param.getKind() == dist::PlacementKind::Reduced;
  return replicated && grad.getKind() == dist::PlacementKind::Partial &&
         (grad.getReduce() == dist::ReduceKind::Sum ||
          grad.getReduce() == dist::ReduceKind::Avg);
}

/// One value as two operands: the step would update one buffer twice (a
/// parameter aliased with its momentum) or a host could not tell which
/// tensor to pass (one gradient for two parameters).
LogicalResult StepOp::verifyDistinctOperands() {
  llvm::DenseMap<Value, std::string> roleOf;
  for (int64_t i = 0; i < getNumParams(); ++i)
    for (auto [what, v] :
         {std::pair<StringRef, Value>{"parameter", getParams()[i]},
          {"gradient", getGrads()[i]},
          {"momentum buffer", getMomenta()[i]}}) {
      std::string role = (what + " of parameter " + describeParam(i)).str();
      auto [it, inserted] = roleOf.try_emplace(v, role);
      if (!inserted)
        return emitOpError("uses one value as the ")
               << it->second << " and as the " << role
               << "; every parameter, gradient and momentum buffer must be "
                  "a value of its own";
    }
  return success();
}

LogicalResult StepOp::verifySymbolUses(SymbolTableCollection &tables) {
  // A global-view step names no mesh; its layouts come with the import.
  if (isGlobalView())
    return success();
  int64_t n = getNumParams();
  auto p0 = cast<DistTensorType>(getParams()[0].getType());
  FlatSymbolRefAttr meshName = p0.getMesh();
  SmallVector<Value> tensors(getParams());
  llvm::append_range(tensors, getGrads());
  llvm::append_range(tensors, getMomenta());
  for (Value v : tensors) {
    auto t = cast<DistTensorType>(v.getType());
    if (failed(dist::verifyDistTensorType(
            t, *this, [&] { return emitOpError(); }, &tables)))
      return failure();
    if (t.getMesh() != meshName)
      return emitOpError("all tensors of one step must live on one mesh; ")
             << "found " << meshName << " and " << t.getMesh();
  }
  dist::MeshOp meshOp = dist::lookupMesh(*this, meshName, &tables);

  for (int64_t i = 0; i < n; ++i) {
    auto p = cast<DistTensorType>(getParams()[i].getType());
    auto g = cast<DistTensorType>(getGrads()[i].getType());
    auto m = cast<DistTensorType>(getMomenta()[i].getType());
    if (m.getLayout() != p.getLayout())
      return emitOpError("momentum buffer of parameter ")
             << describeParam(i) << " has layout " << m.getLayout()
             << " but the parameter has " << p.getLayout()
             << "; they must match";
    dist::LayoutAttr gl = g.getLayout(), pl = p.getLayout();
    // The parameter first: a partial parameter's gradient would otherwise
    // be reported against a placement no parameter may have.
    for (auto [axis, pp] : llvm::zip(meshOp.getAxisNames(), pl.getPlacements()))
      if (pp.getKind() == dist::PlacementKind::Partial)
        return emitOpError("parameter ")
               << describeParam(i) << " has a partial placement on mesh axis '"
               << cast<StringAttr>(axis).getValue()
               << "'; a parameter must be shard, replicate or reduced there";
    if (gl.getOrder() != pl.getOrder())
      return emitOpError("gradient of parameter ")
             << describeParam(i)
             << " has a different nesting order than the parameter; they "
                "must match";
    for (auto [axis, gp, pp] :
         llvm::zip(meshOp.getAxisNames(), gl.getPlacements(),
                   pl.getPlacements()))
      if (!gradPlacementOk(gp, pp))
        return emitOpError("gradient of parameter ")
               << describeParam(i) << " has placement " << gp
               << " on mesh axis '" << cast<StringAttr>(axis).getValue()
               << "' where the parameter has "
               << pp
               << "; expected the same placement, or partial<sum|avg> on a "
                  "replicated axis (the step reduces it)";
    dist::StorageAttr want =
        dist::gradLayoutFor(pl, gl.getPlacements(), meshOp, &tables)
            .getStorage();
    if (gl.getStorage() != want) {
      auto diag = emitOpError("gradient of parameter ")
                  << describeParam(i) << " has storage ";
      printStorage(diag, gl.getStorage());
      diag << " where ";
      printStorage(diag, want);
      return diag << " is expected: the parameter's storage without its "
                     "splits over the gradient's partial axes (the step "
                     "reduce-scatters a partial gradient into them)";
    }
  }
  FailureOr<StepFacts> facts = analyzeStep(*this, &tables);
  if (failed(facts))
    return failure();
  const layout::Mesh &mesh = facts->mesh;

  // A partial gradient is reduced over its partial axes by every rank of
  // the parameter's group; an axis that confines the parameter to one
  // coordinate (whole storage, an expert or stage annotation) has no such
  // group to reduce over.
  for (int64_t i = 0; i < n; ++i) {
    const plan::ParamPlan &pp = facts->params[i].plan;
    for (int a = 0; a < mesh.numAxes(); ++a)
      if (facts->params[i].gradLayout.placements[a].kind ==
              layout::PlacementKind::Partial &&
          (pp.roles[a] == plan::AxisRole::Whole ||
           pp.roles[a] == plan::AxisRole::Local))
        return emitOpError("gradient of parameter ")
               << describeParam(i) << " is partial on mesh axis '"
               << mesh.axisNames[a] << "', where "
               << (pp.roles[a] == plan::AxisRole::Whole
                       ? "the parameter's whole storage"
                       : "its expert or stage annotation")
               << " keeps it on one coordinate; reduce the gradient before "
                  "the step";
  }

  auto checkOwner = [&](int64_t i, int64_t rank) -> LogicalResult {
    std::string why = plan::whyNotOwner(facts->params[i].plan, mesh, rank);
    if (why.empty())
      return success();
    return emitOpError("cannot give parameter ")
           << describeParam(i) << " to rank " << rank << ": " << why;
  };
  if (std::optional<ArrayRef<int64_t>> owners = getOwners())
    for (auto [i, r] : llvm::enumerate(*owners))
      if (failed(checkOwner(i, r)))
        return failure();

  if (std::optional<ArrayAttr> assignment = getAssignment()) {
    if (static_cast<int64_t>(assignment->size()) > mesh.numRanks())
      return emitOpError("assignment lists ")
             << assignment->size() << " ranks but mesh " << meshName
             << " has " << mesh.numRanks();
    llvm::DenseMap<int64_t, int64_t> ownerOf;
    for (auto [rank, entry] : llvm::enumerate(*assignment)) {
      for (int64_t i : cast<DenseI64ArrayAttr>(entry).asArrayRef()) {
        if (i < 0 || i >= n)
          return emitOpError("assignment gives rank ")
                 << rank << " parameter #" << i << ", but the step has " << n
                 << " parameters";
        auto [it, inserted] = ownerOf.try_emplace(i, rank);
        if (!inserted)
          return emitOpError("assignment gives parameter ")
                 << describeParam(i) << " to rank " << it->second
                 << " and again to rank " << rank
                 << "; every parameter needs exactly one owner";
        if (failed(checkOwner(i, rank)))
          return failure();
      }
    }
    for (int64_t i = 0; i < n; ++i)
      if (!ownerOf.count(i))
        return emitOpError("assignment misses parameter ")
               << describeParam(i)
               << "; every parameter needs exactly one owner";
  }
  // Last, so that the checks above report first.
  return verifyDistinctOperands();
}

//===----------------------------------------------------------------------===//
// NewtonSchulzOp
//===----------------------------------------------------------------------===//

LogicalResult NewtonSchulzOp::verify() {
  auto t = cast<RankedTensorType>(getInput().getType());
  if (t.getRank() < 2)
    return emitOpError("needs a matrix or a batch of matrices, got rank ")
           << t.getRank();
  if (!isa<FloatType>(t.getElementType()))
    return emitOpError("needs a float tensor, got ") << t.getElementType();
  if (failed(verifyFiniteCoeffs(*this, getCoeffs())))
    return failure();
  return verifyNsParams(*this, getSteps(), getCoeffs().size(),
                        /*allowOneTriple=*/true, getEps().convertToDouble(),
                        getComputeType());
}

LogicalResult ApplyUpdateOp::verify() {
  if (static_cast<bool>(getLrValue()) == static_cast<bool>(getLrAttr()))
    return emitOpError("takes lr as a constant or as a value, exactly one");
  if (static_cast<bool>(getWeightDecayValue()) ==
      static_cast<bool>(getWeightDecayAttr()))
    return emitOpError(
        "takes weight_decay as a constant or as a value, exactly one");
  return success();
}
