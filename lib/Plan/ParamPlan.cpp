//===- ParamPlan.cpp - How one parameter's Muon update moves --------------===//

#include "muon/Plan/ParamPlan.h"

#include <algorithm>
#include <optional>

using namespace muon;
using namespace muon::plan;
using layout::PlacementKind;
using layout::StorageKind;

static std::string axisName(const layout::Mesh &mesh, int axis) {
  return "'" + mesh.axisNames[axis] + "'";
}

/// Compute-shard axes outer split first: mesh-axis order (DTensor's default)
/// except that the axes sharding one dim take that dim's declared nesting.
static std::vector<int> computeAxesOuterFirst(const layout::Layout &layout,
                                              int64_t rank) {
  std::vector<int> axes;
  for (size_t a = 0; a < layout.placements.size(); ++a)
    if (layout.placements[a].kind == PlacementKind::Shard)
      axes.push_back(static_cast<int>(a));
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<size_t> slots;
    for (size_t i = 0; i < axes.size(); ++i)
      if (layout.placements[axes[i]].dim == d)
        slots.push_back(i);
    std::vector<int> order = layout::shardAxesOf(layout, d);
    for (size_t k = 0; k < slots.size() && k < order.size(); ++k)
      axes[slots[k]] = order[k];
  }
  return axes;
}

/// The sizes of the blocks that exactly fill `part` of a dim cut into
/// `sizes`; nullopt when `part` is empty or cuts through a block.
static std::optional<std::vector<int64_t>>
blocksIn(const std::vector<int64_t> &sizes, layout::Interval part) {
  std::vector<int64_t> inside;
  int64_t begin = 0;
  for (int64_t s : sizes) {
    int64_t end = begin + s;
    bool starts = begin >= part.offset, ends = end <= part.offset + part.size;
    if (starts && ends)
      inside.push_back(s);
    else if (end > part.offset && begin < part.offset + part.size)
      return std::nullopt; // straddles an edge of the part
    begin = end;
  }
  if (inside.empty())
    return std::nullopt;
  return inside;
}

std::vector<std::pair<int64_t, int64_t>>
plan::nsMatrices(const ParamPlan &plan) {
  if (plan.localBlocks.empty())
    return {{plan.m, plan.n}};
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t s : plan.localBlocks)
    out.push_back(plan.blocksAlongRows ? std::make_pair(s, plan.n)
                                       : std::make_pair(plan.m, s));
  return out;
}

std::string plan::planParam(const std::vector<int64_t> &shape,
                            const layout::Layout &layout,
                            const layout::Mesh &mesh, LocalTo local,
                            ParamPlan &out, const NsBlocks &blocks) {
  out = ParamPlan();
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2)
    return "has rank " + std::to_string(rank) +
           "; Muon orthogonalises matrices (>= 2 dims)";
  int64_t batchDims = rank - 2;
  out.m = shape[rank - 2];
  out.n = shape[rank - 1];
  for (int64_t d = 0; d < batchDims; ++d)
    out.batch *= shape[d];
  out.roles.assign(mesh.numAxes(), AxisRole::Replicate);
  out.fixed.assign(mesh.numAxes(), -1);

  for (size_t a = 0; a < layout.placements.size(); ++a)
    if (layout.placements[a].kind == PlacementKind::Partial)
      return "has a partial placement on mesh axis " +
             axisName(mesh, static_cast<int>(a)) +
             "; a parameter must be shard, replicate or reduced there";

  std::vector<Split> outerFirst;
  auto addSplit = [&](Split::Kind kind, int axis, int64_t dim,
                      const std::vector<int64_t> &weights) {
    if (kind != Split::Kind::Flat && dim < batchDims) {
      out.roles[axis] = AxisRole::Independent;
      return;
    }
    out.roles[axis] = AxisRole::Gather;
    outerFirst.push_back({kind, axis, dim, weights});
  };
  for (int a : computeAxesOuterFirst(layout, rank))
    addSplit(Split::Kind::Compute, a, layout.placements[a].dim, {});

  const layout::Storage &storage = layout.storage;
  switch (storage.kind) {
  case StorageKind::None:
    break;
  case StorageKind::Dim:
  case StorageKind::Block:
    for (const layout::StorageSplit &s : storage.splits)
      addSplit(Split::Kind::Storage, s.axis, s.dim, s.weights);
    break;
  case StorageKind::Flat:
    addSplit(Split::Kind::Flat, storage.group.axis, 0, {});
    out.flat = true;
    break;
  case StorageKind::Whole:
    out.roles[storage.axis] = AxisRole::Whole;
    out.fixed[storage.axis] = storage.owner;
    break;
  }

  if (local.axis >= 0) {
    if (local.axis >= mesh.numAxes())
      return "is annotated with an unknown mesh axis";
    if (local.index < 0 || local.index >= mesh.sizes[local.axis])
      return "lives at coordinate " + std::to_string(local.index) +
             " of mesh axis " + axisName(mesh, local.axis) + ", which has " +
             std::to_string(mesh.sizes[local.axis]) + " coordinates";
    if (out.roles[local.axis] != AxisRole::Replicate)
      return "lives at one coordinate of mesh axis " +
             axisName(mesh, local.axis) +
             ", but its layout splits it over that axis; use replicate "
             "there";
    out.roles[local.axis] = AxisRole::Local;
    out.fixed[local.axis] = local.index;
  }

  if (blocks.dim >= 0) {
    out.blocks = blocks;
    out.blocksAlongRows = blocks.dim == rank - 2;
    out.localBlocks = blocks.sizes;
    // The outermost split of the blocked dim divides the whole dim: when
    // it cuts only between blocks and leaves every coordinate the same
    // blocks, each coordinate orthogonalises its own.
    auto outermost =
        std::find_if(outerFirst.begin(), outerFirst.end(), [&](const Split &s) {
          return s.kind != Split::Kind::Flat && s.dim == blocks.dim;
        });
    if (outermost != outerFirst.end() && mesh.sizes[outermost->axis] > 1) {
      std::optional<std::vector<int64_t>> common;
      bool aligned = true;
      // Every part's extent in one pass: a weighted chunk() per part
      // would walk the parts before it each time.
      std::vector<int64_t> sizes =
          layout::chunkSizes(shape[blocks.dim], mesh.sizes[outermost->axis],
                             outermost->weights);
      int64_t begin = 0;
      for (size_t c = 0; c < sizes.size() && aligned; ++c) {
        std::optional<std::vector<int64_t>> mine =
            blocksIn(blocks.sizes, {begin, sizes[c]});
        aligned = mine && (!common || *common == *mine);
        common = mine;
        begin += sizes[c];
      }
      if (aligned) {
        out.roles[outermost->axis] = AxisRole::Independent;
        out.blockAxis = outermost->axis;
        out.localBlocks = *common;
        outerFirst.erase(outermost);
      }
    }
  }

  out.chain.assign(outerFirst.rbegin(), outerFirst.rend());
  for (int a = 0; a < mesh.numAxes(); ++a) {
    if (out.roles[a] == AxisRole::Replicate)
      out.replicateAxes.push_back(a);
    if (out.roles[a] == AxisRole::Independent)
      out.independentAxes.push_back(a);
  }
  return "";
}

layout::Layout plan::layoutAfter(const ParamPlan &plan,
                                 const layout::Layout &layout, size_t undone) {
  layout::Layout result = layout;
  for (size_t i = 0; i < undone && i < plan.chain.size(); ++i) {
    const Split &s = plan.chain[i];
    switch (s.kind) {
    case Split::Kind::Compute:
      layout::unshard(result, s.axis);
      break;
    case Split::Kind::Storage: {
      auto &splits = result.storage.splits;
      splits.erase(std::remove_if(splits.begin(), splits.end(),
                                  [&](const layout::StorageSplit &x) {
                                    return x.axis == s.axis;
                                  }),
                   splits.end());
      result.storage.kind = splits.empty()       ? StorageKind::None
                            : splits.size() == 1 ? StorageKind::Dim
                                                 : StorageKind::Block;
      break;
    }
    case Split::Kind::Flat:
      result.storage = layout::Storage();
      break;
    }
  }
  return result;
}

bool plan::inGroup(const ParamPlan &plan, const std::vector<int64_t> &coords) {
  for (size_t a = 0; a < plan.fixed.size(); ++a)
    if (plan.fixed[a] >= 0 && coords[a] != plan.fixed[a])
      return false;
  return true;
}

std::vector<int> plan::holderAxes(const ParamPlan &plan, size_t j) {
  std::vector<int> axes = plan.replicateAxes;
  for (size_t s = 0; s < j && s < plan.chain.size(); ++s)
    axes.push_back(plan.chain[s].axis);
  return axes;
}

std::string plan::whyNotOwner(const ParamPlan &plan, const layout::Mesh &mesh,
                              int64_t rank) {
  if (rank < 0 || rank >= mesh.numRanks())
    return "rank " + std::to_string(rank) + " is outside the mesh (" +
           std::to_string(mesh.numRanks()) + " ranks)";
  std::vector<int64_t> coords = mesh.coords(rank);
  // Built only for the message: ownerCandidates used to call this for
  // every rank of the mesh and parameter.
  auto at = [&](int a) {
    return "rank " + std::to_string(rank) + " has coordinate " +
           std::to_string(coords[a]) + " on mesh axis " + axisName(mesh, a);
  };
  for (int a = 0; a < mesh.numAxes(); ++a) {
    switch (plan.roles[a]) {
    case AxisRole::Whole:
      if (coords[a] != plan.fixed[a])
        return at(a) + ", but whole storage keeps the tensor at coordinate " +
               std::to_string(plan.fixed[a]);
      break;
    case AxisRole::Local:
      if (coords[a] != plan.fixed[a])
        return at(a) + ", but the parameter lives at coordinate " +
               std::to_string(plan.fixed[a]);
      break;
    case AxisRole::Independent:
      if (coords[a] != 0)
        return at(a) +
               (a == plan.blockAxis
                    ? ", whose shards hold whole Newton-Schulz blocks (every "
                      "coordinate orthogonalises its own)"
                    : ", which splits a batch dim (every coordinate "
                      "orthogonalises its own slice)") +
               "; name the owner by its coordinate-0 representative";
      break;
    default:
      break;
    }
  }
  return "";
}

std::vector<int64_t> plan::ownerCandidates(const ParamPlan &plan,
                                           const layout::Mesh &mesh) {
  // The ranks whyNotOwner accepts, enumerated instead of filtered: each
  // axis is free, or fixed at the coordinate its role names.
  std::vector<int64_t> lo(mesh.numAxes(), 0), hi = mesh.sizes;
  for (int a = 0; a < mesh.numAxes(); ++a) {
    switch (plan.roles[a]) {
    case AxisRole::Whole:
    case AxisRole::Local:
      lo[a] = plan.fixed[a];
      hi[a] = plan.fixed[a] < 0 ? lo[a]
                                : std::min(plan.fixed[a] + 1, mesh.sizes[a]);
      break;
    case AxisRole::Independent:
      hi[a] = std::min<int64_t>(1, mesh.sizes[a]);
      break;
    default:
      break;
    }
  }
  return mesh.ranksIn(lo, hi);
}

std::vector<int64_t> plan::ownerRanks(const ParamPlan &plan,
                                      const layout::Mesh &mesh,
                                      int64_t owner) {
  // The owner's coordinates, every coordinate along independent axes.
  std::vector<int64_t> lo = mesh.coords(owner), hi = lo;
  for (int a = 0; a < mesh.numAxes(); ++a) {
    if (plan.roles[a] == AxisRole::Independent) {
      lo[a] = 0;
      hi[a] = mesh.sizes[a];
    } else {
      hi[a] = lo[a] + 1;
    }
  }
  return mesh.ranksIn(lo, hi);
}

double plan::nsFlops(int64_t m, int64_t n, int64_t steps) {
  double p = static_cast<double>(std::min(m, n));
  double q = static_cast<double>(std::max(m, n));
  return static_cast<double>(steps) * (4.0 * p * p * q + 2.0 * p * p * p);
}

int64_t plan::gatheredElements(const ParamPlan &plan,
                               const std::vector<int64_t> &shape,
                               const layout::Layout &layout,
                               const layout::Mesh &mesh, int64_t owner) {
  layout::Layout gathered = layoutAfter(plan, layout, plan.chain.size());
  return layout::localShard(shape, gathered, mesh, mesh.coords(owner))
      .numElements();
}

double plan::ownerFlops(const ParamPlan &plan,
                        const std::vector<int64_t> &shape,
                        const layout::Layout &layout, const layout::Mesh &mesh,
                        int64_t steps) {
  std::vector<int64_t> candidates = ownerCandidates(plan, mesh);
  if (candidates.empty())
    return 0;
  layout::Layout gathered = layoutAfter(plan, layout, plan.chain.size());
  int64_t maxBatch = 0;
  layout::LocalShards shards(shape, gathered, mesh);
  for (int64_t r : ownerRanks(plan, mesh, candidates.front())) {
    layout::LocalShard s = shards(mesh.coords(r));
    int64_t b = 1;
    for (size_t d = 0; d + 2 < s.shape.size(); ++d)
      b *= s.shape[d];
    maxBatch = std::max(maxBatch, b);
  }
  double perMatrix = 0;
  for (auto [rows, cols] : nsMatrices(plan))
    perMatrix += nsFlops(rows, cols, steps);
  return static_cast<double>(maxBatch) * perMatrix;
}

//===----------------------------------------------------------------------===//
// The collective plan as data
//===----------------------------------------------------------------------===//

/// Makes `s` a step over the flat split of `storage` along an axis of
/// `axisSize` members: each member's element count, and over one member a
/// reshape only.
static void moveFlat(CommStep &s, const layout::Storage &storage,
                     int64_t axisSize) {
  s.split = Split::Kind::Flat;
  for (int64_t c = 0; c < axisSize; ++c)
    s.sizes.push_back(
        layout::flatMemberRange(storage.group, axisSize, storage.member, c)
            .size);
  s.reshapeOnly = axisSize == 1;
}

std::vector<CommStep> plan::planSteps(const ParamPlan &plan,
                                      const layout::Layout &layout,
                                      const layout::Layout &gradLayout,
                                      const layout::Mesh &mesh,
                                      int64_t owner) {
  std::vector<CommStep> steps;
  std::vector<int64_t> oc = mesh.coords(owner);

  // Partial gradients. The gradient is not stored in pieces over its
  // partial axes (muon.step's rule), while the parameter may be: each such
  // storage split is one reduce-scatter into the parameter's piece, outer
  // split first, moving half the bytes of an all-reduce and a slice. Then one
  // all-reduce of the remaining partial axes, on the smaller data.
  auto partialOn = [&](int a) {
    return gradLayout.placements[a].kind == PlacementKind::Partial;
  };
  std::vector<bool> reduced(mesh.numAxes(), false);
  layout::Layout current = gradLayout;
  const layout::Storage &storage = layout.storage;
  std::vector<layout::StorageSplit> storageSplits = storage.outerFirst();
  int remaining = 0;
  for (const layout::StorageSplit &split : storageSplits)
    remaining += partialOn(split.axis);
  for (size_t j = 0; j < storageSplits.size(); ++j) {
    const layout::StorageSplit &split = storageSplits[j];
    int a = split.axis;
    if (!partialOn(a))
      continue;
    CommStep s;
    s.kind = CommStep::Kind::ReduceGrad;
    s.reduce = gradLayout.placements[a].reduce;
    s.axes = {a};
    s.dim = split.dim;
    s.from = current;
    current.placements[a] = layout.placements[a];
    if (--remaining == 0) {
      current.storage = storage;
    } else {
      // Only a block reduced over both its axes gets here: its outer split
      // alone is a dim split.
      current.storage = layout::Storage();
      current.storage.kind = StorageKind::Dim;
      current.storage.splits = {split};
    }
    s.to = current;
    reduced[a] = true;
    if (storage.kind == StorageKind::Flat) {
      // The flattened gradient reduced into the parameter's element range.
      moveFlat(s, storage, mesh.sizes[a]);
    } else if (mesh.sizes[a] == 1) {
      continue; // one member keeps the whole extent: nothing moves
    } else {
      s.split = Split::Kind::Storage;
      s.weights = split.weights;
    }
    steps.push_back(s);
  }
  // What is left is all-reduced in one all_reduce (gradients are partial
  // sums or averages only: the step verifier): over sum and avg axes
  // together, a sum divided by the avg axes' sizes when both kinds are
  // there (the mean over the avg axes of the sum over the sum axes),
  // instead of one all-reduce of the whole piece per kind.
  CommStep s;
  s.kind = CommStep::Kind::ReduceGrad;
  s.from = current;
  bool sums = false, averages = false;
  int64_t averaged = 1;
  for (size_t a = 0; a < gradLayout.placements.size(); ++a) {
    if (!partialOn(static_cast<int>(a)) || reduced[a])
      continue;
    current.placements[a] = layout.placements[a];
    if (mesh.sizes[a] == 1)
      continue;
    s.axes.push_back(static_cast<int>(a));
    bool avg = gradLayout.placements[a].reduce == layout::ReduceKind::Avg;
    (avg ? averages : sums) = true;
    if (avg)
      averaged *= mesh.sizes[a];
  }
  if (!s.axes.empty()) {
    s.reduce =
        averages && !sums ? layout::ReduceKind::Avg : layout::ReduceKind::Sum;
    if (averages && sums)
      s.divisor = averaged;
    s.to = current;
    steps.push_back(s);
  }

  auto splitStep = [&](CommStep::Kind kind, size_t j) {
    const Split &split = plan.chain[j];
    CommStep s;
    s.kind = kind;
    s.axes = {split.axis};
    s.dim = split.dim;
    s.root = oc[split.axis];
    s.holderAxes = holderAxes(plan, j);
    s.split = split.kind;
    s.weights = split.weights;
    if (split.kind == Split::Kind::Flat)
      moveFlat(s, layout.storage, mesh.sizes[split.axis]);
    layout::Layout before = layoutAfter(plan, layout, j),
                   after = layoutAfter(plan, layout, j + 1);
    s.from = kind == CommStep::Kind::Gather ? before : after;
    s.to = kind == CommStep::Kind::Gather ? after : before;
    return s;
  };
  // A split over an axis of size 1 leaves the whole extent on its one
  // member: gathering or scattering it moves nothing, so it is not a step.
  // (A flat split still is, a reshape only: it turns the element range
  // into the matrix and back.)
  auto moves = [&](size_t j) {
    return mesh.sizes[plan.chain[j].axis] > 1 ||
           plan.chain[j].kind == Split::Kind::Flat;
  };
  size_t k = plan.chain.size();
  for (size_t j = 0; j < k; ++j)
    if (moves(j))
      steps.push_back(splitStep(CommStep::Kind::Gather, j));
  CommStep ns;
  ns.kind = CommStep::Kind::NewtonSchulz;
  ns.holderAxes = holderAxes(plan, k);
  ns.from = ns.to = layoutAfter(plan, layout, k);
  steps.push_back(ns);
  for (size_t j = k; j-- > 0;)
    if (moves(j))
      steps.push_back(splitStep(CommStep::Kind::Scatter, j));
  std::vector<int> replicas;
  for (int a : plan.replicateAxes)
    if (mesh.sizes[a] > 1)
      replicas.push_back(a);
  if (!replicas.empty()) {
    CommStep b;
    b.kind = CommStep::Kind::Broadcast;
    b.axes = replicas;
    b.root = layout::groupIndex(mesh.sizes, replicas, oc);
    b.from = b.to = layout;
    steps.push_back(b);
  }
  return steps;
}

bool plan::takesPart(const ParamPlan &plan, const CommStep &step,
                     const std::vector<int64_t> &coords,
                     const std::vector<int64_t> &ownerCoords) {
  if (!inGroup(plan, coords))
    return false;
  for (int a : step.holderAxes)
    if (coords[a] != ownerCoords[a])
      return false;
  return true;
}

std::vector<Transfer> plan::transfersOf(const ParamPlan &plan,
                                        const CommStep &step,
                                        const std::vector<int64_t> &shape,
                                        const layout::Mesh &mesh,
                                        int64_t owner) {
  std::vector<Transfer> result;
  if (step.kind == CommStep::Kind::ReduceGrad ||
      step.kind == CommStep::Kind::NewtonSchulz)
    return result;
  std::vector<int64_t> oc = mesh.coords(owner);
  // The piece a non-root member holds outside the root: the gather's input
  // (and the scatter's output) layout.
  const layout::Layout &piece =
      step.kind == CommStep::Kind::Scatter ? step.to : step.from;
  layout::LocalShards pieces(shape, piece, mesh);
  for (int64_t r = 0; r < mesh.numRanks(); ++r) {
    std::vector<int64_t> c = mesh.coords(r);
    if (!takesPart(plan, step, c, oc))
      continue;
    std::vector<int64_t> rootCoords = c;
    bool isRoot = true;
    for (int a : step.axes) {
      isRoot &= c[a] == oc[a];
      rootCoords[a] = oc[a];
    }
    if (isRoot)
      continue;
    int64_t root = mesh.rank(rootCoords);
    int64_t n = pieces(c).numElements();
    if (step.kind == CommStep::Kind::Gather)
      result.push_back({r, root, n});
    else
      result.push_back({root, r, n});
  }
  return result;
}

double plan::reductionElements(const CommStep &step,
                               const std::vector<int64_t> &shape,
                               const layout::Mesh &mesh,
                               const std::vector<int64_t> &coords) {
  int64_t n = mesh.groupSize(step.axes);
  if (n <= 1)
    return 0;
  double passes = step.dim >= 0 ? 1.0 : 2.0;
  double held = static_cast<double>(
      layout::localShard(shape, step.from, mesh, coords).numElements());
  return passes * static_cast<double>(n - 1) / static_cast<double>(n) * held;
}

CommStep plan::allReduceOfGradient(const layout::Layout &gradLayout,
                                   const layout::Mesh &mesh) {
  CommStep s;
  s.kind = CommStep::Kind::ReduceGrad;
  s.from = s.to = gradLayout;
  for (size_t a = 0; a < gradLayout.placements.size(); ++a)
    if (gradLayout.placements[a].kind == PlacementKind::Partial &&
        mesh.sizes[a] > 1)
      s.axes.push_back(static_cast<int>(a));
  return s;
}

std::string plan::describe(const CommStep &step, const layout::Mesh &mesh) {
  auto axesStr = [&](const std::vector<int> &axes) {
    std::string s;
    for (int a : axes)
      s += (s.empty() ? "" : ",") + mesh.axisNames[a];
    return s;
  };
  auto listStr = [](const std::vector<int64_t> &v) {
    std::string s;
    for (int64_t x : v)
      s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
  };
  static const char *kinds[] = {"reduce_grad", "gather", "newton_schulz",
                                "scatter", "broadcast"};
  static const char *reductions[] = {"sum", "avg", "max", "min"};
  std::string s = kinds[static_cast<int>(step.kind)];
  if (!step.axes.empty())
    s += " " + axesStr(step.axes);
  if (step.kind == CommStep::Kind::ReduceGrad)
    s += std::string(" ") + reductions[static_cast<int>(step.reduce)];
  if (step.divisor != 1)
    s += " divided by " + std::to_string(step.divisor);
  if (step.kind == CommStep::Kind::Gather ||
      step.kind == CommStep::Kind::Scatter || step.dim >= 0) {
    s += step.split == Split::Kind::Flat       ? " flat"
         : step.split == Split::Kind::Storage ? " storage"
                                               : "";
    s += " dim " + std::to_string(step.dim);
  }
  if (step.root >= 0)
    s += " root " + std::to_string(step.root);
  if (!step.holderAxes.empty())
    s += " holders [" + axesStr(step.holderAxes) + "]";
  if (!step.weights.empty())
    s += " weights [" + listStr(step.weights) + "]";
  if (!step.sizes.empty())
    s += " sizes [" + listStr(step.sizes) + "]";
  if (step.reshapeOnly)
    s += " reshape only";
  return s;
}
