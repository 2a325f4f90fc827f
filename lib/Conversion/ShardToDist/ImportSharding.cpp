//===- ImportSharding.cpp - One shard.sharding as a dist layout -----------===//
//
// `split_axes = [[0], [1, 2]]` lists, per tensor dim, the grid axes that
// split it, major first. In dist that is `shard<d>` on each of those axes,
// the first listed the outer split (`order = {d = [...]}` when that is not
// mesh-axis order). The shard sizes must then be the ones dist computes:
// shard's own rule for an uneven split puts the extra elements on the
// trailing shards while dist's chunk rule fills the leading ones, so an
// uneven split is accepted only through sharded_dims_offsets that equal
// dist's (compute shards cannot be weighted).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/ShardToDist/ShardToDist.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "llvm/ADT/STLExtras.h"

#include <string>

using namespace mlir;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;

namespace {
/// `[0, 3, 6, 9, 10]`, at most 9 entries then `...`.
std::string listOf(ArrayRef<int64_t> values) {
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(values)) {
    if (i)
      s += ", ";
    if (i == 8 && values.size() > 9) {
      s += "..., " + std::to_string(values.back());
      break;
    }
    s += std::to_string(v);
  }
  return s + "]";
}

/// Where dist's compute placements put the shards of dim `dim` along the
/// split axes `axes` (major first), in linear order, and the dim's length
/// at the end: the offsets shard writes as sharded_dims_offsets.
SmallVector<int64_t> distOffsets(ArrayRef<int64_t> shape,
                                 const layout::Layout &l,
                                 const layout::Mesh &mesh, int64_t dim,
                                 ArrayRef<int> axes, int64_t shards) {
  SmallVector<int64_t> offsets;
  std::vector<int64_t> coords(mesh.numAxes(), 0);
  std::vector<int64_t> shapeVec(shape.begin(), shape.end());
  for (int64_t linear = 0; linear < shards; ++linear) {
    int64_t rest = linear;
    for (int a : llvm::reverse(axes)) {
      coords[a] = rest % mesh.sizes[a];
      rest /= mesh.sizes[a];
    }
    offsets.push_back(layout::computeShard(shapeVec, l, mesh, coords)
                          .offsets[dim]);
  }
  offsets.push_back(shape[dim]);
  return offsets;
}

/// shard's rule without offsets: every shard gets length / shards, and the
/// length % shards extra elements go one each to the trailing shards.
SmallVector<int64_t> shardRuleOffsets(int64_t length, int64_t shards) {
  SmallVector<int64_t> offsets{0};
  int64_t base = length / shards, extra = length % shards;
  for (int64_t i = 0; i < shards; ++i)
    offsets.push_back(offsets.back() + base + (i >= shards - extra ? 1 : 0));
  return offsets;
}
} // namespace

FailureOr<dist::LayoutAttr>
muon::importSharding(shard::ShardingOp sharding, ArrayRef<int64_t> shape,
                     dist::MeshOp meshOp,
                     function_ref<InFlightDiagnostic()> emitError) {
  if (!sharding.getStaticHaloSizes().empty() ||
      !sharding.getDynamicHaloSizes().empty())
    return emitError() << "has a sharding with halo_sizes; dist shards do not "
                          "overlap, so halos have no equivalent";
  if (!sharding.getDynamicShardedDimsOffsets().empty())
    return emitError() << "has a sharding with dynamic sharded_dims_offsets; "
                          "dist layouts are static";

  MLIRContext *ctx = sharding.getContext();
  layout::Mesh mesh = dist::toLayoutMesh(meshOp);
  auto rank = static_cast<int64_t>(shape.size());
  ArrayRef<shard::GridAxesAttr> splitAxes =
      sharding.getSplitAxes().getAxes();
  layout::Layout l;
  l.placements.assign(mesh.numAxes(), layout::Placement::replicate());
  SmallVector<dist::ShardOrderAttr> order;
  for (auto [d, axesAttr] : llvm::enumerate(splitAxes)) {
    ArrayRef<int16_t> axes = axesAttr.asArrayRef();
    if (axes.empty())
      continue;
    auto dim = static_cast<int64_t>(d);
    if (dim >= rank)
      return emitError() << "has a sharding that splits dim " << dim
                         << ", but the tensor has rank " << rank;
    for (int16_t a : axes) {
      if (a < 0 || a >= mesh.numAxes())
        return emitError() << "has a sharding over grid axis " << a
                           << ", but the grid has " << mesh.numAxes()
                           << " axes";
      if (l.placements[a].kind == layout::PlacementKind::Shard)
        return emitError() << "has a sharding that uses grid axis " << a
                           << " twice";
      l.placements[a] = layout::Placement::shard(dim);
    }
    if (axes.size() > 1) {
      std::vector<int> outerFirst(axes.begin(), axes.end());
      // The default nesting is mesh-axis order; write it only otherwise, so
      // that equal layouts are equal attributes.
      if (!llvm::is_sorted(outerFirst)) {
        l.shardOrder.push_back({dim, outerFirst});
        SmallVector<StringAttr> names;
        for (int a : outerFirst)
          names.push_back(StringAttr::get(ctx, mesh.axisNames[a]));
        order.push_back(dist::ShardOrderAttr::get(ctx, dim, names));
      }
    }
  }
  std::vector<int64_t> shapeVec(shape.begin(), shape.end());
  if (std::string error = layout::verify(shapeVec, l, mesh); !error.empty())
    return emitError() << "has a sharding with no dist layout: " << error;

  // Shard sizes, dim by dim, against sharded_dims_offsets (k + 1 entries
  // per split dim, split dims in order) or shard's own uneven rule.
  ArrayRef<int64_t> given = sharding.getStaticShardedDimsOffsets();
  auto shardsOf = [&](ArrayRef<int16_t> axes) {
    int64_t shards = 1;
    for (int a : axes)
      shards *= mesh.sizes[a];
    return shards;
  };
  // The count first: with too few or too many, the values would be read
  // against the wrong dims.
  size_t needed = 0;
  for (shard::GridAxesAttr axesAttr : splitAxes)
    if (!axesAttr.empty())
      needed += shardsOf(axesAttr.asArrayRef()) + 1;
  if (!given.empty() && given.size() != needed)
    return emitError() << "has a sharding with " << given.size()
                       << " sharded_dims_offsets; its split dims need "
                       << needed << " (the shard count + 1 for each)";
  size_t pos = 0;
  for (auto [d, axesAttr] : llvm::enumerate(splitAxes)) {
    if (axesAttr.empty())
      continue;
    auto dim = static_cast<int64_t>(d);
    std::vector<int> axes(axesAttr.asArrayRef().begin(),
                          axesAttr.asArrayRef().end());
    int64_t shards = shardsOf(axesAttr.asArrayRef());
    int64_t length = shape[dim];
    SmallVector<int64_t> theirs;
    if (!given.empty()) {
      theirs.assign(given.begin() + pos, given.begin() + pos + shards + 1);
      pos += shards + 1;
      if (theirs.front() != 0 || theirs.back() != length ||
          !llvm::is_sorted(theirs))
        return emitError() << "has sharded_dims_offsets " << listOf(theirs)
                           << " for dim " << dim << "; they must rise from 0 "
                           << "to its length " << length;
    } else if (length % shards == 0) {
      continue; // even: both rules give length / shards to every shard
    } else {
      theirs = shardRuleOffsets(length, shards);
    }
    SmallVector<int64_t> ours =
        distOffsets(shape, l, mesh, dim, axes, shards);
    if (theirs != ours)
      return emitError()
             << "splits dim " << dim << " (length " << length << ") over "
             << shards << " shards at offsets " << listOf(theirs)
             << (given.empty() ? " (shard's rule: the extra elements on the "
                                 "trailing shards)"
                               : "")
             << ", but dist compute shards follow the chunk rule, "
             << listOf(ours)
             << "; write sharded_dims_offsets with those offsets, or a "
                "length the shard count divides (weights exist only for "
                "storage sharding)";
  }

  SmallVector<dist::PlacementAttr> placements;
  for (const layout::Placement &p : l.placements)
    placements.push_back(
        p.kind == layout::PlacementKind::Shard
            ? dist::PlacementAttr::getShard(ctx, p.dim)
            : dist::PlacementAttr::getReplicate(ctx));
  return dist::LayoutAttr::get(ctx, FlatSymbolRefAttr::get(meshOp),
                               placements, order, dist::StorageAttr());
}
