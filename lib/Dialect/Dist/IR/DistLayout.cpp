//===- DistLayout.cpp - dist attributes <-> the layout model --------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <limits>

using namespace mlir;
using namespace muon;
using namespace muon::dist;

/// Looks `name` up from `from`, through `tables` when the caller has them
/// (verifiers do, to avoid rebuilding symbol tables per op).
template <typename OpT>
static OpT lookupSymbol(Operation *from, FlatSymbolRefAttr name,
                        SymbolTableCollection *tables) {
  if (!name)
    return {};
  if (tables)
    return tables->lookupNearestSymbolFrom<OpT>(from, name);
  return SymbolTable::lookupNearestSymbolFrom<OpT>(from, name);
}

MeshOp muon::dist::lookupMesh(Operation *from, FlatSymbolRefAttr name,
                              SymbolTableCollection *tables) {
  return lookupSymbol<MeshOp>(from, name, tables);
}

layout::Mesh muon::dist::toLayoutMesh(MeshOp mesh) {
  layout::Mesh m;
  for (Attribute a : mesh.getAxisNames())
    m.axisNames.push_back(cast<StringAttr>(a).getValue().str());
  m.sizes.assign(mesh.getShape().begin(), mesh.getShape().end());
  return m;
}

LogicalResult muon::dist::checkEnumerableMesh(Operation *at, MeshOp mesh,
                                              StringRef what) {
  if (mesh.getNumRanks() <= kMaxEnumeratedRanks)
    return success();
  return at->emitError() << what << " visits every rank of mesh @"
                         << mesh.getSymName() << ", which has "
                         << mesh.getNumRanks() << " ranks; at most "
                         << kMaxEnumeratedRanks << " are supported";
}

layout::Placement muon::dist::toLayoutPlacement(PlacementAttr attr) {
  layout::Placement p;
  p.kind = static_cast<layout::PlacementKind>(attr.getKind());
  p.dim = attr.getDim();
  p.reduce = static_cast<layout::ReduceKind>(attr.getReduce());
  return p;
}

PlacementAttr muon::dist::fromLayoutPlacement(MLIRContext *ctx,
                                              const layout::Placement &p) {
  return PlacementAttr::get(ctx, static_cast<PlacementKind>(p.kind), p.dim,
                            static_cast<ReduceKind>(p.reduce));
}

// The ODS enums (DistBase.td) and the layout library's (Layout.h) convert
// by value above: checked enumerator by enumerator.
#define MUON_SAME_ENUMERATOR(Enum, Name, Offset)                               \
  static_assert(static_cast<int>(Enum::Name) + (Offset) ==                      \
                    static_cast<int>(layout::Enum::Name),                      \
                #Enum "::" #Name " differs between dist and layout")
MUON_SAME_ENUMERATOR(PlacementKind, Shard, 0);
MUON_SAME_ENUMERATOR(PlacementKind, Replicate, 0);
MUON_SAME_ENUMERATOR(PlacementKind, Partial, 0);
MUON_SAME_ENUMERATOR(PlacementKind, Reduced, 0);
MUON_SAME_ENUMERATOR(ReduceKind, Sum, 0);
MUON_SAME_ENUMERATOR(ReduceKind, Avg, 0);
MUON_SAME_ENUMERATOR(ReduceKind, Max, 0);
MUON_SAME_ENUMERATOR(ReduceKind, Min, 0);
// layout::StorageKind has an extra None = 0 in front.
MUON_SAME_ENUMERATOR(StorageKind, Dim, 1);
MUON_SAME_ENUMERATOR(StorageKind, Block, 1);
MUON_SAME_ENUMERATOR(StorageKind, Flat, 1);
MUON_SAME_ENUMERATOR(StorageKind, Whole, 1);
#undef MUON_SAME_ENUMERATOR

PlacementAttr muon::dist::getCotangent(PlacementAttr primal) {
  return fromLayoutPlacement(primal.getContext(),
                             layout::cotangent(toLayoutPlacement(primal)));
}

StorageAttr muon::dist::storageWithout(StorageAttr storage, Operation *from,
                                       function_ref<bool(StringRef)> dropped,
                                       SymbolTableCollection *tables) {
  if (!storage)
    return storage;
  ArrayRef<StringAttr> axes = storage.getAxes();
  if (storage.getKind() == StorageKind::Flat) {
    // The axis is the group's.
    FlatGroupOp group =
        lookupSymbol<FlatGroupOp>(from, storage.getGroup(), tables);
    return group && dropped(group.getAxis()) ? StorageAttr() : storage;
  }
  if (storage.getKind() == StorageKind::Whole)
    return dropped(axes.front().getValue()) ? StorageAttr() : storage;
  SmallVector<int64_t> dims;
  SmallVector<StringAttr> kept;
  SmallVector<Attribute> weights;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (dropped(axis.getValue()))
      continue;
    dims.push_back(storage.getDims()[i]);
    kept.push_back(axis);
    weights.push_back(storage.getWeights()[i]);
  }
  if (kept.size() == axes.size())
    return storage;
  if (kept.empty())
    return StorageAttr();
  return StorageAttr::get(storage.getContext(), StorageKind::Dim, dims, kept,
                          ArrayAttr::get(storage.getContext(), weights),
                          FlatSymbolRefAttr(), storage.getMember(),
                          storage.getOwner());
}

LayoutAttr muon::dist::gradLayoutFor(LayoutAttr param,
                                     ArrayRef<PlacementAttr> gradPlacements,
                                     MeshOp mesh,
                                     SymbolTableCollection *tables) {
  llvm::StringSet<> partial;
  for (auto [name, p] : llvm::zip(mesh.getAxisNames(), gradPlacements))
    if (p.getKind() == PlacementKind::Partial)
      partial.insert(cast<StringAttr>(name).getValue());
  StorageAttr storage = storageWithout(
      param.getStorage(), mesh,
      [&](StringRef axis) { return partial.count(axis); }, tables);
  return LayoutAttr::get(param.getContext(), param.getMesh(), gradPlacements,
                         param.getOrder(), storage);
}

LayoutAttr muon::dist::getCotangent(LayoutAttr primal, MeshOp mesh) {
  SmallVector<PlacementAttr> placements;
  for (PlacementAttr p : primal.getPlacements())
    placements.push_back(getCotangent(p));
  return gradLayoutFor(primal, placements, mesh);
}

static std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// `group`'s member sizes, one list per `numel` attribute for every layout
/// that refers to it.
static std::shared_ptr<const std::vector<int64_t>>
sharedNumel(FlatGroupOp group) {
  auto *dialect = group->getContext()->getLoadedDialect<DistDialect>();
  Attribute key = group.getNumelAttr();
  llvm::sys::SmartScopedLock<true> lock(dialect->localTypesMutex);
  std::shared_ptr<const std::vector<int64_t>> &numel =
      dialect->flatGroupNumel[key];
  if (!numel)
    numel = std::make_shared<const std::vector<int64_t>>(
        toVector(group.getNumel()));
  return numel;
}

FailureOr<layout::Layout>
muon::dist::toLayout(LayoutAttr attr, MeshOp mesh, Operation *from,
                     function_ref<InFlightDiagnostic()> emitError,
                     SymbolTableCollection *tables) {
  layout::Layout result;
  for (PlacementAttr p : attr.getPlacements())
    result.placements.push_back(toLayoutPlacement(p));

  auto axisIndex = [&](StringAttr name) -> FailureOr<int> {
    int index = mesh.getAxisIndex(name.getValue());
    if (index < 0) {
      emitError() << "mesh @" << mesh.getSymName() << " has no axis '"
                  << name.getValue() << "'";
      return failure();
    }
    return index;
  };

  for (ShardOrderAttr o : attr.getOrder()) {
    std::vector<int> axes;
    for (StringAttr name : o.getAxes()) {
      FailureOr<int> a = axisIndex(name);
      if (failed(a))
        return failure();
      axes.push_back(*a);
    }
    result.shardOrder.emplace_back(o.getDim(), axes);
  }

  StorageAttr st = attr.getStorage();
  if (!st)
    return result;
  layout::Storage &storage = result.storage;
  storage.kind = static_cast<layout::StorageKind>(
      static_cast<int>(st.getKind()) + 1);
  switch (st.getKind()) {
  case StorageKind::Dim:
  case StorageKind::Block:
    for (size_t i = 0; i < st.getDims().size(); ++i) {
      FailureOr<int> a = axisIndex(st.getAxes()[i]);
      if (failed(a))
        return failure();
      storage.splits.push_back(
          {*a, st.getDims()[i],
           toVector(cast<DenseI64ArrayAttr>(st.getWeights()[i]).asArrayRef())});
    }
    break;
  case StorageKind::Whole: {
    FailureOr<int> a = axisIndex(st.getAxes()[0]);
    if (failed(a))
      return failure();
    storage.axis = *a;
    storage.owner = st.getOwner();
    break;
  }
  case StorageKind::Flat: {
    FlatGroupOp group = lookupSymbol<FlatGroupOp>(from, st.getGroup(), tables);
    if (!group) {
      emitError() << "bad group membership: " << st.getGroup()
                  << " does not name a dist.flat_group";
      return failure();
    }
    if (group.getMeshAttr() != attr.getMesh()) {
      emitError() << "bad group membership: flat group " << st.getGroup()
                  << " is on mesh " << group.getMeshAttr()
                  << " but the tensor is on mesh " << attr.getMesh();
      return failure();
    }
    FailureOr<int> a = axisIndex(group.getAxisAttr());
    if (failed(a))
      return failure();
    storage.group.axis = *a;
    storage.group.memberNumel = sharedNumel(group);
    if (group.getWeights())
      storage.group.weights = toVector(*group.getWeights());
    storage.member = st.getMember();
    break;
  }
  }
  return result;
}

static std::vector<int64_t> shapeOf(DistTensorType type) {
  return toVector(type.getShape());
}

static DistDialect::MeshKey meshKey(MeshOp mesh) {
  return {mesh.getAxisNamesAttr(), mesh.getShapeAttr(), mesh.getDevicesAttr()};
}

/// Whether what is known of `type` on `mesh` may be kept per (type, mesh):
/// flat storage also reads its dist.flat_group, which may change.
static bool cacheable(DistTensorType type) {
  StorageAttr storage = type.getLayout().getStorage();
  return !storage || !storage.getGroup();
}

LogicalResult
muon::dist::verifyDistTensorType(DistTensorType type, Operation *from,
                                 function_ref<InFlightDiagnostic()> emitError,
                                 SymbolTableCollection *tables) {
  MeshOp mesh = lookupMesh(from, type.getMesh(), tables);
  if (!mesh)
    return emitError() << "unknown mesh " << type.getMesh()
                       << ": no dist.mesh with that name is visible here";
  // Only success is kept: a failure is reported at every op it concerns.
  auto *dialect = type.getContext()->getLoadedDialect<DistDialect>();
  std::pair<Type, DistDialect::MeshKey> key{type, meshKey(mesh)};
  bool keep = cacheable(type);
  if (keep) {
    llvm::sys::SmartScopedLock<true> lock(dialect->localTypesMutex);
    if (dialect->verifiedTypes.contains(key))
      return success();
  }
  FailureOr<layout::Layout> l =
      toLayout(type.getLayout(), mesh, from, emitError, tables);
  if (failed(l))
    return failure();
  std::string err = layout::verify(shapeOf(type), *l, toLayoutMesh(mesh));
  if (!err.empty())
    return emitError() << err;
  if (keep) {
    llvm::sys::SmartScopedLock<true> lock(dialect->localTypesMutex);
    dialect->verifiedTypes.insert(key);
  }
  return success();
}

/// Converts a type that is known to verify.
static layout::Layout mustConvert(DistTensorType type, MeshOp mesh,
                                  Operation *from) {
  FailureOr<layout::Layout> l = toLayout(type.getLayout(), mesh, from, [&] {
    return from->emitError("internal error: layout did not verify: ");
  });
  assert(succeeded(l) && "type must verify first");
  return *l;
}

layout::LocalShard muon::dist::localShardOf(DistTensorType type,
                                            Operation *from,
                                            ArrayRef<int64_t> coords) {
  MeshOp mesh = lookupMesh(from, type.getMesh());
  return layout::localShard(shapeOf(type), mustConvert(type, mesh, from),
                            toLayoutMesh(mesh), toVector(coords));
}

/// The mesh axes that split a tensor of layout `l` (shard placements and
/// storage): only a rank's coordinates on these decide its local shape.
static std::vector<int> splittingAxes(const layout::Layout &l,
                                      const layout::Mesh &mesh) {
  std::vector<int> axes;
  for (int a = 0; a < mesh.numAxes(); ++a)
    if (l.placements[a].kind == layout::PlacementKind::Shard ||
        llvm::is_contained(l.storage.axes(), a))
      axes.push_back(a);
  return axes;
}

namespace {
/// Numbers a rank's coordinates on the axes that split a tensor of layout
/// `l`: ranks with the same key hold local blocks of the same shape.
struct SplittingKey {
  SplittingKey(const layout::Layout &l, const layout::Mesh &mesh)
      : mesh(mesh), splitting(splittingAxes(l, mesh)),
        stride(mesh.numAxes(), 1) {
    // Ranks are row-major over the axes: the coordinate on axis a is
    // (r / stride[a]) % size[a].
    for (int a = mesh.numAxes() - 2; a >= 0; --a)
      stride[a] = stride[a + 1] * mesh.sizes[a + 1];
  }
  int64_t operator()(int64_t rank) const {
    int64_t key = 0;
    for (int a : splitting)
      key = key * mesh.sizes[a] + (rank / stride[a]) % mesh.sizes[a];
    return key;
  }
  const layout::Mesh &mesh;
  std::vector<int> splitting;
  std::vector<int64_t> stride;
};
} // namespace

RankedTensorType muon::dist::localTensorType(ArrayRef<int64_t> shape,
                                             Type elementType,
                                             const layout::Layout &l,
                                             const layout::Mesh &mesh,
                                             ArrayRef<int64_t> ranks) {
  std::vector<int64_t> global = toVector(shape);
  SmallVector<int64_t> local;
  // Only the coordinates on axes that split the tensor decide a local
  // shape: ranks that agree on them are computed once.
  SplittingKey keyOf(l, mesh);
  llvm::DenseSet<int64_t> seen;
  layout::LocalShards shards(global, l, mesh);
  for (auto [k, r] : llvm::enumerate(ranks)) {
    if (!seen.insert(keyOf(r)).second)
      continue;
    layout::LocalShard s = shards(mesh.coords(r));
    if (k == 0) {
      local.assign(s.shape.begin(), s.shape.end());
      continue;
    }
    for (size_t d = 0; d < local.size(); ++d)
      if (local[d] != s.shape[d])
        local[d] = ShapedType::kDynamic;
  }
  return RankedTensorType::get(local, elementType);
}

muon::dist::LocalShapeRuns muon::dist::localShapeRuns(DistTensorType type,
                                                      Operation *from) {
  MeshOp meshOp = lookupMesh(from, type.getMesh());
  layout::Mesh mesh = toLayoutMesh(meshOp);
  layout::Layout l = mustConvert(type, meshOp, from);
  std::vector<int64_t> global = shapeOf(type);
  // One local shard per combination of splitting coordinates, however many
  // ranks share it.
  SplittingKey keyOf(l, mesh);
  llvm::DenseMap<int64_t, std::vector<int64_t>> shapeOfKey;
  layout::LocalShards shards(global, l, mesh);
  LocalShapeRuns out;
  std::vector<int64_t> last;
  for (int64_t r = 0, n = mesh.numRanks(); r < n; ++r) {
    auto [it, fresh] = shapeOfKey.try_emplace(keyOf(r));
    if (fresh)
      it->second = shards(mesh.coords(r)).shape;
    if (r > 0 && it->second == last)
      continue;
    last = it->second;
    out.dims = static_cast<int64_t>(last.size());
    out.runs.push_back(r);
    out.runs.append(last.begin(), last.end());
  }
  return out;
}

RankedTensorType muon::dist::localTensorType(ArrayRef<int64_t> shape,
                                             Type elementType,
                                             const layout::Layout &l,
                                             const layout::Mesh &mesh,
                                             std::vector<int64_t> lo,
                                             std::vector<int64_t> hi) {
  // A rank's local shape depends only on its coordinates on the axes that
  // split the tensor (shard placements and storage): one representative per
  // combination of those coordinates stands for every rank of the box, so
  // the cost grows with the splitting axes, not with the mesh (a mesh may
  // have 2^31 ranks).
  std::vector<int> splitting = splittingAxes(l, mesh);
  for (int a = 0; a < mesh.numAxes(); ++a)
    if (!llvm::is_contained(splitting, a))
      hi[a] = std::min(hi[a], lo[a] + 1);
  if (localShapeCombinations(l, mesh, lo, hi) <= kMaxLocalShapeCombinations)
    return localTensorType(shape, elementType, l, mesh, mesh.ranksIn(lo, hi));
  // Too many to compare (a tensor split over billions of ranks): the rank
  // at `lo` gives the rank of the local type and the dims no split cuts;
  // the dims a split cuts are dynamic, which every rank's size satisfies.
  layout::LocalShard s = layout::localShard(toVector(shape), l, mesh, lo);
  SmallVector<int64_t> local(s.shape.begin(), s.shape.end());
  if (!s.flattened)
    for (int64_t d = 0; d < static_cast<int64_t>(local.size()); ++d)
      if (!layout::shardAxesOf(l, d).empty())
        local[d] = ShapedType::kDynamic;
  for (const layout::StorageSplit &split : l.storage.outerFirst())
    if (split.dim >= 0 && split.dim < static_cast<int64_t>(local.size()))
      local[split.dim] = ShapedType::kDynamic;
  return RankedTensorType::get(local, elementType);
}

int64_t muon::dist::localShapeCombinations(DistTensorType type,
                                           Operation *from) {
  MeshOp mesh = lookupMesh(from, type.getMesh());
  layout::Mesh m = toLayoutMesh(mesh);
  return localShapeCombinations(mustConvert(type, mesh, from), m,
                                std::vector<int64_t>(m.numAxes(), 0), m.sizes);
}

int64_t muon::dist::localShapeCombinations(const layout::Layout &l,
                                           const layout::Mesh &mesh,
                                           const std::vector<int64_t> &lo,
                                           const std::vector<int64_t> &hi) {
  int64_t n = 1;
  for (int a : splittingAxes(l, mesh)) {
    int64_t extent = std::max<int64_t>(0, hi[a] - lo[a]);
    if (extent == 0)
      return 0;
    n = n > std::numeric_limits<int64_t>::max() / extent
            ? std::numeric_limits<int64_t>::max()
            : n * extent;
  }
  return n;
}

RankedTensorType muon::dist::localTensorType(DistTensorType type,
                                             Operation *from) {
  MeshOp mesh = lookupMesh(from, type.getMesh());
  // Cached per type and mesh (the attributes are uniqued, so equal meshes
  // share entries).
  auto *dialect = type.getContext()->getLoadedDialect<DistDialect>();
  std::pair<Type, DistDialect::MeshKey> key{type, meshKey(mesh)};
  bool keep = cacheable(type);
  if (keep) {
    llvm::sys::SmartScopedLock<true> lock(dialect->localTypesMutex);
    auto it = dialect->localTypes.find(key);
    if (it != dialect->localTypes.end())
      return it->second;
  }
  layout::Mesh m = toLayoutMesh(mesh);
  layout::Layout l = mustConvert(type, mesh, from);
  RankedTensorType local =
      localTensorType(type.getShape(), type.getElementType(), l, m,
                      std::vector<int64_t>(m.numAxes(), 0), m.sizes);
  if (keep) {
    llvm::sys::SmartScopedLock<true> lock(dialect->localTypesMutex);
    dialect->localTypes[key] = local;
  }
  return local;
}

int64_t muon::dist::rankQueryValue(Operation *op, MeshOp mesh, int64_t rank) {
  if (auto coord = dyn_cast<CoordOp>(op))
    return groupIndex(mesh, coord.getAxes(), toLayoutMesh(mesh).coords(rank));
  return rank;
}

std::vector<int> muon::dist::axisIndices(MeshOp mesh, ArrayAttr axes) {
  std::vector<int> result;
  for (Attribute a : axes)
    result.push_back(mesh.getAxisIndex(cast<StringAttr>(a).getValue()));
  return result;
}

int64_t muon::dist::groupIndex(MeshOp mesh, ArrayAttr axes,
                               ArrayRef<int64_t> coords) {
  return layout::groupIndex(toLayoutMesh(mesh).sizes, axisIndices(mesh, axes),
                            std::vector<int64_t>(coords.begin(), coords.end()));
}

LogicalResult muon::dist::verifyDistTypesIn(Operation *root) {
  SymbolTableCollection tables;
  // A type verifies or not per symbol scope (the mesh it names): remember
  // the pairs already checked.
  llvm::DenseSet<std::pair<Type, Operation *>> done;
  auto checkOne = [&](Operation *op, DistTensorType dt, Type in,
                      StringRef where) -> LogicalResult {
    Operation *scope = SymbolTable::getNearestSymbolTable(op);
    if (!done.insert({dt, scope}).second)
      return success();
    return verifyDistTensorType(
        dt, op,
        [&] { return op->emitOpError() << where << " type " << in << ": "; },
        &tables);
  };
  // Types and attributes found to hold no !dist.tensor (a walk is costly
  // and most ops share them). Those that hold one are walked again in each
  // op, whose symbol scope decides whether it verifies.
  llvm::DenseSet<Type> cleanTypes;
  llvm::DenseSet<Attribute> cleanAttrs;
  // Every !dist.tensor in `t`, nested ones included (a tuple's element, a
  // function type's input): the message names `t`.
  auto check = [&](Operation *op, Type t, StringRef where) -> LogicalResult {
    if (auto dt = dyn_cast<DistTensorType>(t))
      return checkOne(op, dt, t, where);
    // Builtin leaves hold no other type.
    if (isa<IntegerType, IndexType, FloatType, NoneType>(t) ||
        cleanTypes.contains(t))
      return success();
    LogicalResult result = success();
    bool holds = false;
    t.walk([&](DistTensorType dt) {
      holds = true;
      if (failed(checkOne(op, dt, t, where))) {
        result = failure();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!holds)
      cleanTypes.insert(t);
    return result;
  };
  WalkResult r = root->walk([&](Operation *op) {
    if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
      for (Type t : fn.getArgumentTypes())
        if (failed(check(op, t, "argument")))
          return WalkResult::interrupt();
      for (Type t : fn.getResultTypes())
        if (failed(check(op, t, "result")))
          return WalkResult::interrupt();
    }
    for (Type t : op->getOperandTypes())
      if (failed(check(op, t, "operand")))
        return WalkResult::interrupt();
    for (Type t : op->getResultTypes())
      if (failed(check(op, t, "result")))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(op, arg.getType(), "block argument")))
            return WalkResult::interrupt();
    // Types held by attributes (a TypeAttr, a function type).
    for (NamedAttribute a : op->getAttrs()) {
      // Leaves whose only type is a builtin scalar one, and attributes
      // that held none (a string's type and a dense attribute's element
      // type may be any type: those are walked).
      Attribute v = a.getValue();
      auto builtinElements = [](Type t) {
        return isa<IntegerType, IndexType, FloatType, ComplexType>(t);
      };
      bool leaf =
          isa<IntegerAttr, FloatAttr, UnitAttr, BoolAttr, FlatSymbolRefAttr,
              DenseArrayAttr>(v) ||
          (isa<StringAttr>(v) &&
           isa<NoneType>(cast<StringAttr>(v).getType())) ||
          (isa<DenseElementsAttr>(v) &&
           builtinElements(cast<DenseElementsAttr>(v).getElementType()));
      if (leaf || cleanAttrs.contains(v))
        continue;
      LogicalResult inAttr = success();
      bool holds = false;
      std::string where =
          ("attribute '" + a.getName().strref() + "' holds a").str();
      auto visit = [&](DistTensorType dt) {
        holds = true;
        if (failed(checkOne(op, dt, dt, where))) {
          inAttr = failure();
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      };
      v.walk(
          // A string's type is not one of its sub-elements: walked here.
          [&](StringAttr str) {
            Type t = str.getType();
            if (auto dt = dyn_cast<DistTensorType>(t))
              return visit(dt);
            if (isa<NoneType>(t))
              return WalkResult::advance();
            return t.walk([&](DistTensorType dt) { return visit(dt); });
          },
          [&](DistTensorType dt) { return visit(dt); });
      if (failed(inAttr))
        return WalkResult::interrupt();
      if (!holds)
        cleanAttrs.insert(v);
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}
