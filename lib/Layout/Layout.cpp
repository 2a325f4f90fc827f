//===- Layout.cpp - Local shapes and offsets of distributed tensors -------===//
//
// Pure C++ (no LLVM): the runtime links this library as well as the compiler.
//
//===----------------------------------------------------------------------===//

#include "muon/Layout/Layout.h"

#include <algorithm>
#include <numeric>
#include <sstream>

using namespace muon::layout;

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

int64_t Mesh::numRanks() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

int Mesh::axisIndex(const std::string &name) const {
  for (size_t i = 0; i < axisNames.size(); ++i)
    if (axisNames[i] == name)
      return static_cast<int>(i);
  return -1;
}

std::vector<int64_t> Mesh::coords(int64_t rank) const {
  std::vector<int64_t> c(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    c[i] = rank % sizes[i];
    rank /= sizes[i];
  }
  return c;
}

int64_t muon::layout::groupIndex(const std::vector<int64_t> &sizes,
                                 const std::vector<int> &axes,
                                 const std::vector<int64_t> &coords) {
  int64_t index = 0;
  for (int a : axes)
    index = index * sizes[a] + coords[a];
  return index;
}

int64_t muon::layout::groupColour(const std::vector<int64_t> &sizes,
                                  const std::vector<int> &axes,
                                        const std::vector<int64_t> &coords) {
  std::vector<int> others;
  for (int a = 0; a < static_cast<int>(sizes.size()); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end())
      others.push_back(a);
  return groupIndex(sizes, others, coords);
}

int64_t Mesh::rank(const std::vector<int64_t> &coords) const {
  // groupIndex over every axis, without building the list of axes: the
  // planning passes call this for every rank of every parameter.
  int64_t index = 0;
  for (size_t a = 0; a < sizes.size(); ++a)
    index = index * sizes[a] + coords[a];
  return index;
}

int64_t Mesh::groupSize(const std::vector<int> &axes) const {
  int64_t n = 1;
  for (int a : axes)
    n *= sizes[a];
  return n;
}

std::vector<int64_t> Mesh::ranksIn(const std::vector<int64_t> &lo,
                                   const std::vector<int64_t> &hi) const {
  std::vector<int64_t> result;
  int n = static_cast<int>(sizes.size());
  int64_t count = 1;
  for (int a = 0; a < n; ++a) {
    if (lo[a] >= hi[a])
      return result;
    count *= hi[a] - lo[a];
  }
  result.reserve(static_cast<size_t>(count));
  // Row-major strides: a step along axis a moves the rank by stride[a].
  std::vector<int64_t> stride(n, 1);
  for (int a = n - 2; a >= 0; --a)
    stride[a] = stride[a + 1] * sizes[a + 1];
  // An odometer over the box, last axis fastest (row-major, as ranks are
  // numbered), carrying the rank along instead of recomputing it.
  std::vector<int64_t> c = lo;
  int64_t r = rank(c);
  while (true) {
    result.push_back(r);
    int a = n - 1;
    while (a >= 0 && ++c[a] == hi[a]) {
      r -= (hi[a] - 1 - lo[a]) * stride[a];
      c[a] = lo[a];
      --a;
    }
    if (a < 0)
      return result;
    r += stride[a];
  }
}

//===----------------------------------------------------------------------===//
// Placements and storage
//===----------------------------------------------------------------------===//

Placement muon::layout::cotangent(const Placement &primal) {
  switch (primal.kind) {
  case PlacementKind::Shard:
  case PlacementKind::Replicate:
    return primal;
  case PlacementKind::Partial:
    return Placement::reduced();
  case PlacementKind::Reduced:
    // Gradients of replicated-but-reduced data are summed.
    return Placement::partial(ReduceKind::Sum);
  }
  return primal;
}

std::vector<StorageSplit> Storage::outerFirst() const {
  switch (kind) {
  case StorageKind::None:
    return {};
  case StorageKind::Dim:
  case StorageKind::Block:
    return splits;
  case StorageKind::Flat:
    return {{group.axis, 0, group.weights}};
  case StorageKind::Whole:
    return {{axis, 0, {}}};
  }
  return {};
}

/// Where member `member` starts in the group's concatenation, and the
/// concatenation's length.
static std::pair<int64_t, int64_t> memberStart(const FlatGroup &group,
                                               int64_t member) {
  int64_t total = 0, start = 0;
  for (size_t m = 0; m < group.numel().size(); ++m) {
    if (static_cast<int64_t>(m) == member)
      start = total;
    total += group.numel()[m];
  }
  return {start, total};
}

std::vector<int64_t> muon::layout::key(const Layout &l) {
  std::vector<int64_t> out;
  auto list = [&](const std::vector<int64_t> &values) {
    out.push_back(static_cast<int64_t>(values.size()));
    out.insert(out.end(), values.begin(), values.end());
  };
  out.push_back(static_cast<int64_t>(l.placements.size()));
  for (const Placement &p : l.placements)
    out.insert(out.end(), {static_cast<int64_t>(p.kind), p.dim,
                           static_cast<int64_t>(p.reduce)});
  out.push_back(static_cast<int64_t>(l.shardOrder.size()));
  for (const auto &[dim, axes] : l.shardOrder) {
    out.push_back(dim);
    list(std::vector<int64_t>(axes.begin(), axes.end()));
  }
  const Storage &st = l.storage;
  out.insert(out.end(), {static_cast<int64_t>(st.kind), st.member, st.axis,
                         st.owner, st.group.axis});
  if (st.kind == StorageKind::Flat && st.member >= 0 &&
      st.member < static_cast<int64_t>(st.group.numel().size())) {
    auto [start, total] = memberStart(st.group, st.member);
    out.insert(out.end(), {start, st.group.numel()[st.member], total});
  }
  list(st.group.weights);
  out.push_back(static_cast<int64_t>(st.splits.size()));
  for (const StorageSplit &split : st.splits) {
    out.insert(out.end(), {split.axis, split.dim});
    list(split.weights);
  }
  return out;
}

std::vector<int> Storage::axes() const {
  std::vector<int> result;
  for (const StorageSplit &s : outerFirst())
    result.push_back(s.axis);
  return result;
}

//===----------------------------------------------------------------------===//
// Chunking
//===----------------------------------------------------------------------===//

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The size of weighted part `i` of a length, the parts before it holding
/// `begin` elements: ceil(length * w_i / total), capped by what is left.
static int64_t weightedPart(int64_t length, const std::vector<int64_t> &weights,
                            int64_t total, int64_t i, int64_t begin) {
  // length * weight in 128 bits: both may be large, the quotient is not.
  __int128 scaled = static_cast<__int128>(length) * weights[i];
  int64_t want = static_cast<int64_t>((scaled + total - 1) / total);
  return std::min(want, length - begin);
}

Interval muon::layout::chunk(int64_t length, int64_t parts, int64_t index,
                             const std::vector<int64_t> &weights) {
  if (weights.empty()) {
    int64_t size = ceilDiv(length, parts);
    int64_t begin = std::min(index * size, length);
    int64_t end = std::min((index + 1) * size, length);
    return {begin, end - begin};
  }
  if (index < 0 || index >= parts)
    return {length, 0};
  int64_t total = std::accumulate(weights.begin(), weights.end(), int64_t(0));
  int64_t begin = 0;
  for (int64_t i = 0; i < index; ++i)
    begin += weightedPart(length, weights, total, i, begin);
  return {begin, weightedPart(length, weights, total, index, begin)};
}

std::vector<int64_t>
muon::layout::chunkSizes(int64_t length, int64_t parts,
                         const std::vector<int64_t> &weights) {
  std::vector<int64_t> sizes;
  sizes.reserve(parts);
  int64_t total = std::accumulate(weights.begin(), weights.end(), int64_t(0));
  int64_t begin = 0;
  for (int64_t i = 0; i < parts; ++i) {
    int64_t size = weights.empty()
                       ? chunk(length, parts, i).size
                       : weightedPart(length, weights, total, i, begin);
    sizes.push_back(size);
    begin += size;
  }
  return sizes;
}

int64_t LocalShard::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<int> muon::layout::shardAxesOf(const Layout &layout,
                                           int64_t dim) {
  for (const auto &entry : layout.shardOrder)
    if (entry.first == dim)
      return entry.second;
  std::vector<int> axes;
  for (int a = 0; a < static_cast<int>(layout.placements.size()); ++a)
    if (layout.placements[a].kind == PlacementKind::Shard &&
        layout.placements[a].dim == dim)
      axes.push_back(a);
  return axes;
}

void muon::layout::unshard(Layout &layout, int axis) {
  int64_t dim = layout.placements[axis].dim;
  layout.placements[axis] = Placement::replicate();
  for (auto it = layout.shardOrder.begin(); it != layout.shardOrder.end();
       ++it) {
    if (it->first != dim)
      continue;
    it->second.erase(std::remove(it->second.begin(), it->second.end(), axis),
                     it->second.end());
    if (it->second.empty())
      layout.shardOrder.erase(it);
    return;
  }
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {
std::string str(const Placement &p) {
  switch (p.kind) {
  case PlacementKind::Shard:
    return "shard<" + std::to_string(p.dim) + ">";
  case PlacementKind::Replicate:
    return "replicate";
  case PlacementKind::Partial:
    return "partial";
  case PlacementKind::Reduced:
    return "reduced";
  }
  return "?";
}

std::string reduceName(ReduceKind r) {
  switch (r) {
  case ReduceKind::Sum:
    return "sum";
  case ReduceKind::Avg:
    return "avg";
  case ReduceKind::Max:
    return "max";
  case ReduceKind::Min:
    return "min";
  }
  return "?";
}

std::string axisName(const Mesh &mesh, int axis) {
  if (axis < 0 || axis >= mesh.numAxes())
    return "#" + std::to_string(axis);
  return "'" + mesh.axisNames[axis] + "'";
}

/// Enumerates the coordinates that can change the compute-local block: every
/// combination of coordinates on the axes that shard some dim (the others
/// stay 0).
template <typename Fn>
void forEachComputeCoord(const Layout &layout, const Mesh &mesh, Fn fn) {
  std::vector<int> shardAxes;
  for (int a = 0; a < mesh.numAxes(); ++a)
    if (layout.placements[a].kind == PlacementKind::Shard)
      shardAxes.push_back(a);
  std::vector<int64_t> coords(mesh.numAxes(), 0);
  while (true) {
    fn(coords);
    size_t i = shardAxes.size();
    while (i > 0) {
      int a = shardAxes[i - 1];
      if (++coords[a] < mesh.sizes[a])
        break;
      coords[a] = 0;
      --i;
    }
    if (i == 0)
      return;
  }
}
} // namespace

std::string muon::layout::verifyWeights(const std::vector<int64_t> &weights, int64_t parts,
                          const std::string &what) {
  if (weights.empty())
    return "";
  if (static_cast<int64_t>(weights.size()) != parts)
    return what + " has " + std::to_string(weights.size()) +
           " weights but the axis has " + std::to_string(parts) + " ranks";
  int64_t total = 0;
  for (int64_t w : weights) {
    if (w <= 0)
      return what + " has non-positive weight " + std::to_string(w) +
             "; weights must be positive";
    // Weights are proportions: a bound far from overflow keeps their sum
    // (and every split computed from it) exact.
    if (w > kMaxWeightTotal - total)
      return what + " has weights summing past 2^31; weights are "
                    "proportions, scale them down";
    total += w;
  }
  return "";
}

std::string muon::layout::verify(const std::vector<int64_t> &shape,
                                 const Layout &layout, const Mesh &mesh) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return "dimension of size " + std::to_string(d) + " is negative";
    if (d != 0 && elements > kMaxElements / d)
      return "the tensor has more than 2^62 elements";
    elements *= d;
  }
  if (static_cast<int64_t>(layout.placements.size()) != mesh.numAxes())
    return "expected " + std::to_string(mesh.numAxes()) +
           " placements (one per mesh axis), got " +
           std::to_string(layout.placements.size());

  for (int a = 0; a < mesh.numAxes(); ++a) {
    const Placement &p = layout.placements[a];
    if (p.kind == PlacementKind::Shard && (p.dim < 0 || p.dim >= rank))
      return "placement " + str(p) + " on mesh axis " + axisName(mesh, a) +
             ": cannot shard along a dimension that doesn't exist (the "
             "tensor has rank " +
             std::to_string(rank) + ")";
  }

  // The value of a partial tensor reduces the terms over every partial
  // axis. Sum and avg commute (avg is a scaled sum), and max with max, min
  // with min; any other pair gives a value that depends on the order the
  // axes are reduced in, which no layout states.
  auto reductionClass = [](ReduceKind r) {
    return r == ReduceKind::Avg ? ReduceKind::Sum : r;
  };
  int firstPartial = -1;
  for (int a = 0; a < mesh.numAxes(); ++a) {
    const Placement &p = layout.placements[a];
    if (p.kind != PlacementKind::Partial)
      continue;
    if (firstPartial < 0) {
      firstPartial = a;
      continue;
    }
    const Placement &q = layout.placements[firstPartial];
    if (reductionClass(p.reduce) != reductionClass(q.reduce))
      return "partial<" + reduceName(q.reduce) + "> on mesh axis " +
             axisName(mesh, firstPartial) + " and partial<" +
             reduceName(p.reduce) + "> on mesh axis " + axisName(mesh, a) +
             " do not commute: the value would depend on the order the "
             "axes are reduced in; a tensor's partial axes must all be sum "
             "or avg, all max, or all min";
  }

  for (size_t i = 0; i < layout.shardOrder.size(); ++i) {
    const auto &entry = layout.shardOrder[i];
    int64_t dim = entry.first;
    if (dim < 0 || dim >= rank)
      return "shard order names dimension " + std::to_string(dim) +
             ", which doesn't exist (the tensor has rank " +
             std::to_string(rank) + ")";
    for (size_t j = 0; j < i; ++j)
      if (layout.shardOrder[j].first == dim)
        return "shard order names dimension " + std::to_string(dim) +
               " twice";
    std::vector<int> expected;
    for (int a = 0; a < mesh.numAxes(); ++a)
      if (layout.placements[a].kind == PlacementKind::Shard &&
          layout.placements[a].dim == dim)
        expected.push_back(a);
    std::vector<int> given = entry.second;
    std::sort(given.begin(), given.end());
    if (std::adjacent_find(given.begin(), given.end()) != given.end())
      return "shard order of dimension " + std::to_string(dim) +
             " names a mesh axis twice";
    if (given != expected)
      return "shard order of dimension " + std::to_string(dim) +
             " must list exactly the mesh axes whose placement is shard<" +
             std::to_string(dim) + ">";
  }

  const Storage &st = layout.storage;
  std::vector<int> stAxes = st.axes();
  for (size_t i = 0; i < stAxes.size(); ++i) {
    int a = stAxes[i];
    if (a < 0 || a >= mesh.numAxes())
      return "storage sharding names an unknown mesh axis";
    for (size_t j = 0; j < i; ++j)
      if (stAxes[j] == a)
        return "storage sharding uses mesh axis " + axisName(mesh, a) +
               " twice";
    const Placement &p = layout.placements[a];
    if (!p.isReplicated())
      return "storage sharding on mesh axis " + axisName(mesh, a) +
             " whose compute placement is " + str(p) +
             "; storage sharding needs a replicate or reduced axis";
  }

  switch (st.kind) {
  case StorageKind::None:
    break;
  case StorageKind::Dim:
  case StorageKind::Block: {
    size_t want = st.kind == StorageKind::Dim ? 1 : 2;
    if (st.splits.size() != want)
      return std::string(st.kind == StorageKind::Dim ? "dim" : "block") +
             " storage needs " + std::to_string(want) + " split(s), got " +
             std::to_string(st.splits.size());
    for (const StorageSplit &s : st.splits) {
      if (s.dim < 0 || s.dim >= rank)
        return "storage split of dimension " + std::to_string(s.dim) +
               ": the dimension doesn't exist (the tensor has rank " +
               std::to_string(rank) + ")";
      std::string err = verifyWeights(s.weights, mesh.sizes[s.axis],
                                      "storage split over mesh axis " +
                                          axisName(mesh, s.axis));
      if (!err.empty())
        return err;
    }
    if (st.kind == StorageKind::Block && st.splits[0].dim == st.splits[1].dim)
      return "block storage must split two different dimensions";
    break;
  }
  case StorageKind::Flat: {
    const FlatGroup &g = st.group;
    if (st.member < 0 || st.member >= static_cast<int64_t>(g.numel().size()))
      return "flat storage member index " + std::to_string(st.member) +
             " is out of range: the group has " +
             std::to_string(g.numel().size()) + " members";
    std::string err = verifyWeights(g.weights, mesh.sizes[g.axis],
                                    "flat group over mesh axis " +
                                        axisName(mesh, g.axis));
    if (!err.empty())
      return err;
    int64_t want = g.numel()[st.member];
    std::string mismatch;
    forEachComputeCoord(layout, mesh, [&](const std::vector<int64_t> &c) {
      int64_t got = computeShard(shape, layout, mesh, c).numElements();
      if (mismatch.empty() && got != want)
        mismatch = "bad group membership: member " +
                   std::to_string(st.member) + " of the flat group has " +
                   std::to_string(want) +
                   " elements but the tensor's compute-local block has " +
                   std::to_string(got);
    });
    if (!mismatch.empty())
      return mismatch;
    break;
  }
  case StorageKind::Whole:
    if (rank < 1)
      return "whole storage needs a tensor of rank >= 1";
    if (st.owner < 0 || st.owner >= mesh.sizes[st.axis])
      return "whole storage owner " + std::to_string(st.owner) +
             " is out of range for mesh axis " + axisName(mesh, st.axis) +
             " of size " + std::to_string(mesh.sizes[st.axis]);
    break;
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Local shards
//===----------------------------------------------------------------------===//

LocalShard muon::layout::computeShard(const std::vector<int64_t> &shape,
                                      const Layout &layout, const Mesh &mesh,
                                      const std::vector<int64_t> &coords) {
  LocalShard local;
  local.shape = shape;
  local.offsets.assign(shape.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    // Outer splits first; each split divides the block the outer ones left.
    for (int a : shardAxesOf(layout, static_cast<int64_t>(d))) {
      Interval part = chunk(local.shape[d], mesh.sizes[a], coords[a]);
      local.offsets[d] += part.offset;
      local.shape[d] = part.size;
    }
  }
  return local;
}

/// The part of `mine` (a range of the group's concatenated elements) that
/// falls in the member starting at `start` with `numel` elements, relative to
/// the member; an empty range where they do not meet.
static Interval clipToMember(Interval mine, int64_t start, int64_t numel) {
  int64_t end = start + numel;
  int64_t lo = std::max(mine.offset, start);
  int64_t hi = std::min(mine.offset + mine.size, end);
  if (hi <= lo)
    return {std::min(std::max(mine.offset, start), end) - start, 0};
  return {lo - start, hi - lo};
}

Interval muon::layout::flatMemberRange(const FlatGroup &group, int64_t axisSize,
                                       int64_t member, int64_t coord) {
  auto [start, total] = memberStart(group, member);
  return clipToMember(chunk(total, axisSize, coord, group.weights), start,
                      group.numel()[member]);
}

LocalShard muon::layout::localShard(const std::vector<int64_t> &shape,
                                    const Layout &layout, const Mesh &mesh,
                                    const std::vector<int64_t> &coords) {
  return LocalShards(shape, layout, mesh, /*oneRank=*/true)(coords);
}

Interval LocalShards::part(int64_t key, int64_t length, int64_t parts,
                           int64_t index, const std::vector<int64_t> &weights) {
  if (weights.empty() || oneRank)
    return chunk(length, parts, index, weights); // even: constant time
  if (index < 0 || index >= parts)
    return {length, 0};
  auto [it, fresh] = starts.try_emplace({key, length});
  std::vector<int64_t> &at = it->second;
  if (fresh) {
    at.reserve(parts + 1);
    at.push_back(0);
    for (int64_t size : chunkSizes(length, parts, weights))
      at.push_back(at.back() + size);
  }
  return {at[index], at[index + 1] - at[index]};
}

LocalShard LocalShards::operator()(const std::vector<int64_t> &coords) {
  LocalShard local = computeShard(shape, layout, mesh, coords);
  const Storage &st = layout.storage;
  switch (st.kind) {
  case StorageKind::None:
    break;
  case StorageKind::Dim:
  case StorageKind::Block:
    for (size_t i = 0; i < st.splits.size(); ++i) {
      const StorageSplit &s = st.splits[i];
      Interval p = part(static_cast<int64_t>(i), local.shape[s.dim],
                        mesh.sizes[s.axis], coords[s.axis], s.weights);
      local.offsets[s.dim] += p.offset;
      local.shape[s.dim] = p.size;
    }
    break;
  case StorageKind::Flat: {
    // The member's place in the group is the same for every rank.
    if (!member)
      member = memberStart(st.group, st.member);
    int64_t axis = st.group.axis;
    Interval p = clipToMember(part(-1, member->second, mesh.sizes[axis],
                                   coords[axis], st.group.weights),
                              member->first, st.group.numel()[st.member]);
    local.shape = {p.size};
    local.offsets = {p.offset};
    local.flattened = true;
    break;
  }
  case StorageKind::Whole:
    if (coords[st.axis] != st.owner)
      local.shape[0] = 0;
    break;
  }
  return local;
}

PartialTerms muon::layout::partialTerms(const Layout &l, const Mesh &mesh,
                                        const std::vector<int64_t> &coords) {
  PartialTerms t;
  std::vector<int> axes;
  for (size_t a = 0; a < l.placements.size(); ++a) {
    if (l.placements[a].kind != PlacementKind::Partial)
      continue;
    axes.push_back(static_cast<int>(a));
    t.count *= mesh.sizes[a];
    if (l.placements[a].reduce == ReduceKind::Avg)
      t.scale /= static_cast<double>(mesh.sizes[a]);
  }
  t.index = groupIndex(mesh.sizes, axes, coords);
  return t;
}
