//===- ParamPlan.cpp - How one parameter's Muon update moves --------------===//

#include "muon/Plan/ParamPlan.h"

#include <algorithm>

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

std::string plan::planParam(const std::vector<int64_t> &shape,
                            const layout::Layout &layout,
                            const layout::Mesh &mesh, LocalTo local,
                            ParamPlan &out) {
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
      result.placements[s.axis] = layout::Placement::replicate();
      for (auto &entry : result.shardOrder)
        entry.second.erase(
            std::remove(entry.second.begin(), entry.second.end(), s.axis),
            entry.second.end());
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
  for (int a = 0; a < mesh.numAxes(); ++a) {
    std::string at = "rank " + std::to_string(rank) + " has coordinate " +
                     std::to_string(coords[a]) + " on mesh axis " +
                     axisName(mesh, a);
    switch (plan.roles[a]) {
    case AxisRole::Whole:
      if (coords[a] != plan.fixed[a])
        return at + ", but whole storage keeps the tensor at coordinate " +
               std::to_string(plan.fixed[a]);
      break;
    case AxisRole::Local:
      if (coords[a] != plan.fixed[a])
        return at + ", but the parameter lives at coordinate " +
               std::to_string(plan.fixed[a]);
      break;
    case AxisRole::Independent:
      if (coords[a] != 0)
        return at + ", which splits a batch dim (every coordinate "
                    "orthogonalises its own slice); name the owner by its "
                    "coordinate-0 representative";
      break;
    default:
      break;
    }
  }
  return "";
}

std::vector<int64_t> plan::ownerCandidates(const ParamPlan &plan,
                                           const layout::Mesh &mesh) {
  std::vector<int64_t> result;
  for (int64_t r = 0; r < mesh.numRanks(); ++r)
    if (whyNotOwner(plan, mesh, r).empty())
      result.push_back(r);
  return result;
}

std::vector<int64_t> plan::ownerRanks(const ParamPlan &plan,
                                      const layout::Mesh &mesh,
                                      int64_t owner) {
  std::vector<int64_t> result;
  std::vector<int64_t> ownerCoords = mesh.coords(owner);
  for (int64_t r = 0; r < mesh.numRanks(); ++r) {
    std::vector<int64_t> c = mesh.coords(r);
    bool same = true;
    for (int a = 0; a < mesh.numAxes(); ++a)
      if (plan.roles[a] != AxisRole::Independent && c[a] != ownerCoords[a])
        same = false;
    if (same)
      result.push_back(r);
  }
  return result;
}

double plan::nsFlops(int64_t m, int64_t n, int64_t steps) {
  double p = static_cast<double>(std::min(m, n));
  double q = static_cast<double>(std::max(m, n));
  return static_cast<double>(steps) * (4.0 * p * p * q + 2.0 * p * p * p);
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
  for (int64_t r : ownerRanks(plan, mesh, candidates.front())) {
    layout::LocalShard s =
        layout::localShard(shape, gathered, mesh, mesh.coords(r));
    int64_t b = 1;
    for (size_t d = 0; d + 2 < s.shape.size(); ++d)
      b *= s.shape[d];
    maxBatch = std::max(maxBatch, b);
  }
  return static_cast<double>(maxBatch) * nsFlops(plan.m, plan.n, steps);
}
