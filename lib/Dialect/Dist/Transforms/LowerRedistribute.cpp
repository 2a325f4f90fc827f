//===- LowerRedistribute.cpp - dist.redistribute to local collectives -----===//
//
// Lowers `dist.redistribute` between any two layouts of a tensor on one mesh
// (placements, nesting orders, every storage kind, weights) to the local
// view: dist.to_local, collectives, per-rank slices, dist.from_local.
//
// The sequence, cheapest first where it knows one:
//   1. Partial axes the target does not keep with the same reduction:
//      reduce_scatter when the only change is that axis becoming the
//      innermost shard of a dim; otherwise all_reduce, on the local piece
//      (the smallest data).
//      An axis that moves from the innermost shard of one dim to the
//      innermost shard of another, with even blocks, is one all_to_all.
//   2. Undo the source's splits that the target does not share: storage
//      first (it is innermost), then per dim the compute splits beyond the
//      outer splits both layouts have in common, innermost first, each an
//      all_gather (uneven, weighted, flat and whole pieces are exchanged
//      with their actual lengths).
//   3. Slice the target's block out of what is left, at offsets read from a
//      per-rank table (nothing moves).
//   4. Partial<sum> axes of the target that the source did not have: the
//      coordinate-0 rank keeps the value, the others hold zeros (avg, max
//      and min keep it everywhere).
// A change that only swaps `replicate` and `reduced` moves nothing.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace muon {
namespace dist {
#define GEN_PASS_DEF_DISTLOWERREDISTRIBUTE
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace muon

using namespace mlir;
using namespace muon;
using namespace muon::dist;
using layout::Layout;
using LPK = layout::PlacementKind;

namespace {

bool samePartial(const layout::Placement &a, const layout::Placement &b) {
  return a.kind == LPK::Partial && b.kind == LPK::Partial &&
         a.reduce == b.reduce;
}

bool sameStorage(const layout::Storage &a, const layout::Storage &b) {
  if (a.kind != b.kind || a.member != b.member || a.axis != b.axis ||
      a.owner != b.owner || a.splits.size() != b.splits.size())
    return false;
  for (size_t i = 0; i < a.splits.size(); ++i)
    if (a.splits[i].axis != b.splits[i].axis ||
        a.splits[i].dim != b.splits[i].dim ||
        a.splits[i].weights != b.splits[i].weights)
      return false;
  return a.kind != layout::StorageKind::Flat ||
         (a.group.axis == b.group.axis && a.group.numel() == b.group.numel() &&
          a.group.weights == b.group.weights);
}

class Lowering {
public:
  Lowering(RedistributeOp op, MeshOp meshOp, const Layout &from,
           const Layout &to)
      : op(op), b(op), loc(op.getLoc()), meshOp(meshOp),
        mesh(toLayoutMesh(meshOp)), from(from), to(to) {
    DistTensorType t = op.getInput().getType();
    shape.assign(t.getShape().begin(), t.getShape().end());
    elementType = t.getElementType();
    meshRef = FlatSymbolRefAttr::get(meshOp.getSymNameAttr());
    for (int64_t r = 0; r < mesh.numRanks(); ++r)
      ranks.push_back(r);
  }

  Value lower() {
    Value x = localOf(op.getInput(), typeOf(from));
    Layout cur = from;
    int n = mesh.numAxes();

    // 1. Reductions of the partial axes the target does not keep.
    if (std::optional<Value> fast = reduceScatterFastPath(x))
      return fromLocal(*fast, to);
    if (std::optional<Value> fast = allToAllFastPath(x))
      return fromLocal(*fast, to);
    for (layout::ReduceKind kind :
         {layout::ReduceKind::Sum, layout::ReduceKind::Avg,
          layout::ReduceKind::Max, layout::ReduceKind::Min}) {
      SmallVector<int> axes;
      for (int a = 0; a < n; ++a)
        if (cur.placements[a].kind == LPK::Partial &&
            cur.placements[a].reduce == kind &&
            !samePartial(cur.placements[a], to.placements[a])) {
          cur.placements[a] = layout::Placement::replicate();
          if (mesh.sizes[a] > 1)
            axes.push_back(a);
        }
      if (!axes.empty())
        x = AllReduceOp::create(
                b, loc, x.getType(), Type(), x, meshRef, axisNames(axes),
                ReduceKindAttr::get(b.getContext(),
                                    static_cast<ReduceKind>(kind)))
                .getResult();
    }

    // 2. Undo what the target does not share: storage, then compute splits
    // beyond the common outer ones.
    std::vector<std::vector<int>> common(shape.size());
    bool allCommon = true;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      std::vector<int> fa = layout::shardAxesOf(from, d),
                       ta = layout::shardAxesOf(to, d);
      size_t k = 0;
      while (k < fa.size() && k < ta.size() && fa[k] == ta[k])
        ++k;
      common[d].assign(fa.begin(), fa.begin() + k);
      allCommon &= k == fa.size() && k == ta.size();
    }
    bool keepStorage = allCommon && sameStorage(from.storage, to.storage);
    if (!keepStorage)
      x = undoStorage(x, cur);
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      std::vector<int> axes = layout::shardAxesOf(cur, d);
      for (size_t k = axes.size(); k-- > common[d].size();) {
        layout::unshard(cur, axes[k]);
        x = gather(x, axes[k], d, cur);
      }
    }

    // 3. The target's block of what is left.
    if (!keepStorage)
      x = slice(x, cur);

    // 4. New partial<sum> axes: one term holds the value.
    SmallVector<int> zeroed;
    for (int a = 0; a < n; ++a)
      if (to.placements[a].kind == LPK::Partial &&
          to.placements[a].reduce == layout::ReduceKind::Sum &&
          !samePartial(from.placements[a], to.placements[a]) &&
          mesh.sizes[a] > 1)
        zeroed.push_back(a);
    if (!zeroed.empty())
      x = keepOnFirst(x, zeroed);
    return fromLocal(x, to);
  }

private:
  RankedTensorType typeOf(const Layout &l) {
    return localTensorType(shape, elementType, l, mesh, ranks);
  }

  ArrayAttr axisNames(ArrayRef<int> axes) {
    SmallVector<StringRef> names;
    for (int a : axes)
      names.push_back(mesh.axisNames[a]);
    return b.getStrArrayAttr(names);
  }

  Value castTo(Value v, Type t) {
    return v.getType() == t ? v : tensor::CastOp::create(b, loc, t, v);
  }

  /// The local view of `global`: the input of its dist.from_local when it
  /// has one (no round trip), else a dist.to_local.
  Value localOf(Value global, RankedTensorType type) {
    if (auto fl = global.getDefiningOp<FromLocalOp>())
      return castTo(fl.getInput(), type);
    return ToLocalOp::create(b, loc, type, global);
  }

  Value fromLocal(Value x, const Layout &l) {
    return FromLocalOp::create(b, loc, op.getResult().getType(),
                               castTo(x, typeOf(l)));
  }

  /// An index that is `values[rank]` on each rank: a constant when they
  /// agree, else a lookup in a constant table.
  OpFoldResult perRank(ArrayRef<int64_t> values) {
    if (llvm::all_equal(values))
      return b.getIndexAttr(values.front());
    if (!rank)
      rank = RankOp::create(b, loc, b.getIndexType(), meshRef);
    auto tableType = RankedTensorType::get(
        {static_cast<int64_t>(values.size())}, b.getIndexType());
    SmallVector<APInt> bits;
    for (int64_t v : values)
      bits.push_back(APInt(64, v));
    Value table = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(tableType, ArrayRef<APInt>(bits)));
    return tensor::ExtractOp::create(b, loc, table, ValueRange{rank})
        .getResult();
  }

  /// The partial axes become the innermost shard of one dim, and nothing
  /// else changes (no storage): one reduce_scatter.
  std::optional<Value> reduceScatterFastPath(Value x) {
    if (from.storage.kind != layout::StorageKind::None ||
        to.storage.kind != layout::StorageKind::None)
      return std::nullopt;
    int changed = -1;
    for (int a = 0; a < mesh.numAxes(); ++a) {
      const layout::Placement &f = from.placements[a], &t = to.placements[a];
      bool same = f == t || (f.isReplicated() && t.isReplicated());
      if (same)
        continue;
      if (changed >= 0 || f.kind != LPK::Partial || t.kind != LPK::Shard)
        return std::nullopt;
      changed = a;
    }
    if (changed < 0)
      return std::nullopt;
    int64_t d = to.placements[changed].dim;
    std::vector<int> fa = layout::shardAxesOf(from, d),
                     ta = layout::shardAxesOf(to, d);
    fa.push_back(changed);
    if (fa != ta)
      return std::nullopt;
    return ReduceScatterOp::create(
               b, loc, typeOf(to), Type(), x, meshRef, axisNames({changed}),
               b.getI64IntegerAttr(d),
               ReduceKindAttr::get(
                   b.getContext(),
                   static_cast<ReduceKind>(from.placements[changed].reduce)),
               DenseI64ArrayAttr(), DenseI64ArrayAttr())
        .getResult();
  }

  /// One axis moves from sharding dim `d` to sharding dim `e` (the
  /// innermost split of each), nothing else changes, and every block is
  /// even: one all_to_all, which moves a 1/k of what gathering would.
  std::optional<Value> allToAllFastPath(Value x) {
    if (from.storage.kind != layout::StorageKind::None ||
        to.storage.kind != layout::StorageKind::None)
      return std::nullopt;
    int changed = -1;
    for (int a = 0; a < mesh.numAxes(); ++a) {
      if (from.placements[a] == to.placements[a])
        continue;
      if (changed >= 0 || from.placements[a].kind != LPK::Shard ||
          to.placements[a].kind != LPK::Shard)
        return std::nullopt;
      changed = a;
    }
    if (changed < 0)
      return std::nullopt;
    int64_t d = from.placements[changed].dim, e = to.placements[changed].dim;
    std::vector<int> fd = layout::shardAxesOf(from, d),
                     td = layout::shardAxesOf(to, d),
                     fe = layout::shardAxesOf(from, e),
                     te = layout::shardAxesOf(to, e);
    // The axis is the innermost split of d before and of e after; the
    // other splits of both dims are the same.
    if (fd.empty() || fd.back() != changed || te.empty() ||
        te.back() != changed)
      return std::nullopt;
    fd.pop_back();
    te.pop_back();
    if (fd != td || fe != te)
      return std::nullopt;
    RankedTensorType in = typeOf(from), out = typeOf(to);
    int64_t k = mesh.sizes[changed];
    if (!in.hasStaticShape() || !out.hasStaticShape() ||
        out.getDimSize(d) != k * in.getDimSize(d) ||
        in.getDimSize(e) != k * out.getDimSize(e))
      return std::nullopt;
    return AllToAllOp::create(b, loc, out, Type(), x, meshRef,
                              axisNames({changed}), b.getI64IntegerAttr(e),
                              b.getI64IntegerAttr(d))
        .getResult();
  }

  /// all_gather over `axis` along `dim`, giving the block of `after`. With
  /// `uneven` (weighted or whole pieces) the gathered dim is typed dynamic,
  /// so that the members' actual lengths are exchanged (a static length
  /// means the even chunk rule).
  Value gather(Value x, int axis, int64_t dim, const Layout &after,
               bool uneven = false) {
    RankedTensorType type = typeOf(after);
    RankedTensorType gatheredT = type;
    if (uneven) {
      SmallVector<int64_t> dims(type.getShape());
      dims[dim] = ShapedType::kDynamic;
      gatheredT = RankedTensorType::get(dims, elementType);
    }
    Value g = AllGatherOp::create(b, loc, gatheredT, Type(), x, meshRef,
                                  axisNames({axis}), b.getI64IntegerAttr(dim),
                                  UnitAttr())
                  .getResult();
    return castTo(g, type);
  }

  /// `x` as a 1-D tensor of its elements in row-major order. A rank-0
  /// tensor is one element: its reassociation has no groups.
  Value flatten(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getRank() == 0)
      return tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({1}, type.getElementType()), x,
          ArrayRef<ReassociationIndices>{},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    return tensor::CollapseShapeOp::create(b, loc, x,
                                           ArrayRef<ReassociationIndices>{all});
  }

  /// The 1-D `flat` reshaped to `blockT` (dims `sizes`); `flatten` undone.
  Value unflatten(Value flat, RankedTensorType blockT,
                  ArrayRef<OpFoldResult> sizes) {
    if (blockT.getRank() == 0)
      return tensor::CollapseShapeOp::create(
          b, loc, blockT,
          castTo(flat, RankedTensorType::get({1}, blockT.getElementType())),
          ArrayRef<ReassociationIndices>{});
    ReassociationIndices all;
    for (int64_t d = 0; d < blockT.getRank(); ++d)
      all.push_back(d);
    return tensor::ExpandShapeOp::create(b, loc, blockT, flat, {all}, sizes);
  }

  /// Undoes the storage of `cur` (inner split first), leaving its
  /// compute-local block.
  Value undoStorage(Value x, Layout &cur) {
    layout::Storage storage = cur.storage;
    if (storage.kind == layout::StorageKind::None)
      return x;
    Layout compute = cur;
    compute.storage = layout::Storage();
    if (storage.kind == layout::StorageKind::Flat) {
      // The element ranges concatenate into the flattened block.
      std::vector<int64_t> numel;
      for (int64_t r : ranks)
        numel.push_back(
            layout::computeShard(shape, compute, mesh, mesh.coords(r))
                .numElements());
      // Typed dynamic: the members' element ranges are exchanged.
      Value flat =
          AllGatherOp::create(
              b, loc,
              RankedTensorType::get({ShapedType::kDynamic}, elementType),
              Type(), x, meshRef, axisNames({storage.group.axis}),
              b.getI64IntegerAttr(0), UnitAttr())
              .getResult();
      if (llvm::all_equal(numel))
        flat =
            castTo(flat, RankedTensorType::get({numel.front()}, elementType));
      x = unflatten(flat, typeOf(compute), blockSizes(compute));
      cur = compute;
      return x;
    }
    std::vector<layout::StorageSplit> splits = storage.outerFirst();
    for (size_t k = splits.size(); k-- > 0;) {
      Layout after = cur;
      after.storage = layout::Storage();
      if (k > 0) {
        // A block without its inner split is its outer split alone.
        after.storage.kind = layout::StorageKind::Dim;
        after.storage.splits = {splits[0]};
      }
      bool uneven = storage.kind == layout::StorageKind::Whole ||
                    !splits[k].weights.empty();
      x = gather(x, splits[k].axis, splits[k].dim, after, uneven);
      cur = after;
    }
    return x;
  }

  /// The local block sizes of `l` on this rank.
  SmallVector<OpFoldResult> blockSizes(const Layout &l) {
    SmallVector<OpFoldResult> sizes;
    std::vector<std::vector<int64_t>> perDim;
    layout::LocalShards shards(shape, l, mesh);
    for (int64_t r : ranks) {
      layout::LocalShard s = shards(mesh.coords(r));
      perDim.resize(s.shape.size());
      for (size_t d = 0; d < s.shape.size(); ++d)
        perDim[d].push_back(s.shape[d]);
    }
    for (const std::vector<int64_t> &v : perDim)
      sizes.push_back(perRank(v));
    return sizes;
  }

  /// Cuts the target's block out of the block of `cur` (which holds it).
  Value slice(Value x, const Layout &cur) {
    bool flat = to.storage.kind == layout::StorageKind::Flat;
    Layout target = to;
    if (flat)
      target.storage = layout::Storage();
    int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<std::vector<int64_t>> offsets(rank), sizes(rank);
    std::vector<int64_t> flatOffsets, flatSizes;
    layout::LocalShards haveShards(shape, cur, mesh),
        wantShards(shape, target, mesh), pieceShards(shape, to, mesh);
    for (int64_t r : ranks) {
      std::vector<int64_t> c = mesh.coords(r);
      layout::LocalShard have = haveShards(c);
      layout::LocalShard want = wantShards(c);
      for (int64_t d = 0; d < rank; ++d) {
        // An empty block may sit past the end of what is held.
        int64_t off =
            want.shape[d] == 0 ? 0 : want.offsets[d] - have.offsets[d];
        offsets[d].push_back(off);
        sizes[d].push_back(want.shape[d]);
      }
      if (flat) {
        layout::LocalShard piece = pieceShards(c);
        flatOffsets.push_back(piece.shape[0] == 0 ? 0 : piece.offsets[0]);
        flatSizes.push_back(piece.shape[0]);
      }
    }
    // A tensor with a zero-size dimension has no elements to cut: its
    // blocks are made, not sliced (tensor.extract_slice refuses even an
    // empty slice at offset 0 of a dimension of size 0), and no offsets are
    // looked up.
    bool empty = llvm::is_contained(shape, 0);
    auto held = cast<RankedTensorType>(x.getType());
    if (empty && flat)
      return tensor::EmptyOp::create(b, loc,
                                     ArrayRef<OpFoldResult>{perRank(flatSizes)},
                                     held.getElementType());
    SmallVector<OpFoldResult> offs, szs, strides;
    bool whole = true;
    for (int64_t d = 0; d < rank; ++d) {
      if (!empty)
        offs.push_back(perRank(offsets[d]));
      szs.push_back(perRank(sizes[d]));
      strides.push_back(b.getIndexAttr(1));
      whole &= llvm::all_of(offsets[d], [](int64_t o) { return o == 0; }) &&
               !held.isDynamicDim(d) && llvm::all_of(sizes[d], [&](int64_t s) {
                 return s == held.getDimSize(d);
               });
    }
    if (empty && !whole)
      return tensor::EmptyOp::create(b, loc, szs, held.getElementType());
    if (!whole)
      x = tensor::ExtractSliceOp::create(b, loc, x, offs, szs, strides);
    if (!flat)
      return x;
    Value v = flatten(x);
    return tensor::ExtractSliceOp::create(
        b, loc, v, ArrayRef<OpFoldResult>{perRank(flatOffsets)},
        ArrayRef<OpFoldResult>{perRank(flatSizes)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }

  /// `x` on the ranks whose coordinates on `axes` are all 0, zeros elsewhere.
  Value keepOnFirst(Value x, ArrayRef<int> axes) {
    auto type = cast<RankedTensorType>(x.getType());
    Value coord =
        CoordOp::create(b, loc, b.getIndexType(), meshRef, axisNames(axes));
    Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, coord, zeroIdx);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
    Value empty = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    // A generic, not linalg.fill: the lowering outlines generics into
    // kernels it optimises (muon-outline-elementwise), where a named op
    // would stay a scalar loop in the step's unoptimised code.
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> parallel(type.getRank(),
                                              utils::IteratorType::parallel);
    Value zeros = linalg::GenericOp::create(
                      b, loc, TypeRange{empty.getType()}, ValueRange{},
                      ValueRange{empty}, ArrayRef<AffineMap>{id}, parallel,
                      [&](OpBuilder &nb, Location l, ValueRange) {
                        linalg::YieldOp::create(nb, l, ValueRange{zero});
                      })
                      .getResult(0);
    return arith::SelectOp::create(b, loc, first, x, castTo(zeros, type));
  }

  RedistributeOp op;
  OpBuilder b;
  Location loc;
  MeshOp meshOp;
  layout::Mesh mesh;
  Layout from, to;
  std::vector<int64_t> shape;
  Type elementType;
  FlatSymbolRefAttr meshRef;
  std::vector<int64_t> ranks;
  Value rank;
};

struct DistLowerRedistributePass
    : public ::muon::dist::impl::DistLowerRedistributeBase<
          DistLowerRedistributePass> {
  using DistLowerRedistributeBase::DistLowerRedistributeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyDistTypesIn(module)))
      return signalPassFailure();
    SmallVector<RedistributeOp> ops;
    module.walk([&](RedistributeOp op) { ops.push_back(op); });
    SymbolTableCollection tables;
    for (RedistributeOp op : ops) {
      // Even an identity goes through the local view: the result may be
      // returned, and a function returns only what dist.from_local built.
      DistTensorType in = op.getInput().getType(), out = op.getType();
      MeshOp mesh = lookupMesh(op, in.getMesh(), &tables);
      if (failed(checkEnumerableMesh(op, mesh, "dist-lower-redistribute")))
        return signalPassFailure();
      auto emit = [&] { return op.emitOpError(); };
      FailureOr<Layout> from =
          toLayout(in.getLayout(), mesh, op, emit, &tables);
      FailureOr<Layout> to = toLayout(out.getLayout(), mesh, op, emit, &tables);
      if (failed(from) || failed(to))
        return signalPassFailure();
      Value result = Lowering(op, mesh, *from, *to).lower();
      op.replaceAllUsesWith(result);
      op.erase();
    }
    // A local view of a value just rebuilt from one is that value.
    module.walk([&](ToLocalOp op) {
      auto fl = op.getInput().getDefiningOp<FromLocalOp>();
      if (!fl)
        return;
      OpBuilder b(op);
      Value v = fl.getInput();
      if (v.getType() != op.getType())
        v = tensor::CastOp::create(b, op.getLoc(), op.getType(), v);
      op.replaceAllUsesWith(v);
      op.erase();
    });
    // Rebuilt values nothing reads any more (a chain's middle).
    module.walk([&](FromLocalOp op) {
      if (op->use_empty())
        op.erase();
    });
  }
};
} // namespace
