//===- Layout.h - Where a distributed tensor lives, in plain C++ -*- C++ -*-===//
//
// The one implementation of the layout arithmetic of the project: which part
// of a global tensor a rank holds, for every compute placement and storage
// sharding. It depends only on the C++ standard library so that the runtime
// (which must not link LLVM) computes exactly what the compiler computes.
//
// The MLIR attributes of the `dist` dialect convert to these structs
// (muon/Dialect/Dist/IR/DistLayout.h); passes, the runtime and the tests all
// call localShard() below.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_LAYOUT_LAYOUT_H
#define MUON_LAYOUT_LAYOUT_H

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace muon {
namespace layout {

/// Group numbering: the one definition shared by the compiler, the runtime
/// and host tools. The ranks whose coordinates differ only on `axes` form a
/// group (one communicator). Inside it a rank's index is row-major over its
/// coordinates on `axes`, in the order given (`root` of a collective,
/// dist.coord, the communicator key). The group itself is numbered row-major
/// over the coordinates on the other axes, in mesh order (the communicator
/// colour). A world rank is the index over all axes in mesh order.
int64_t groupIndex(const std::vector<int64_t> &sizes,
                   const std::vector<int> &axes,
                   const std::vector<int64_t> &coords);
int64_t groupColour(const std::vector<int64_t> &sizes,
                    const std::vector<int> &axes,
                    const std::vector<int64_t> &coords);

/// A device mesh: named axes with sizes. A rank's coordinates are row-major
/// over the axes in declared order (groupIndex over every axis).
struct Mesh {
  std::vector<std::string> axisNames;
  std::vector<int64_t> sizes;

  int64_t numAxes() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numRanks() const;
  /// Index of the axis called `name`, or -1.
  int axisIndex(const std::string &name) const;
  std::vector<int64_t> coords(int64_t rank) const;
  int64_t rank(const std::vector<int64_t> &coords) const;
  /// Number of ranks in the sub-mesh spanned by `axes`.
  int64_t groupSize(const std::vector<int> &axes) const;
  /// The ranks whose coordinate on every axis a lies in [lo[a], hi[a]), in
  /// increasing order; cost proportional to their number, not the mesh's.
  std::vector<int64_t> ranksIn(const std::vector<int64_t> &lo,
                               const std::vector<int64_t> &hi) const;
};

enum class PlacementKind { Shard, Replicate, Partial, Reduced };
enum class ReduceKind { Sum, Avg, Max, Min };

/// The compute placement of a tensor on one mesh axis (as in DTensor).
struct Placement {
  PlacementKind kind = PlacementKind::Replicate;
  int64_t dim = -1;                // Shard only.
  ReduceKind reduce = ReduceKind::Sum; // Partial only.

  static Placement shard(int64_t d) { return {PlacementKind::Shard, d, {}}; }
  static Placement replicate() { return {}; }
  static Placement partial(ReduceKind r = ReduceKind::Sum) {
    return {PlacementKind::Partial, -1, r};
  }
  static Placement reduced() { return {PlacementKind::Reduced, -1, {}}; }
  bool operator==(const Placement &o) const {
    return kind == o.kind && (kind != PlacementKind::Shard || dim == o.dim) &&
           (kind != PlacementKind::Partial || reduce == o.reduce);
  }
  bool operator!=(const Placement &o) const { return !(*this == o); }
  /// True when every rank of the axis holds the same data at runtime.
  bool isReplicated() const {
    return kind == PlacementKind::Replicate || kind == PlacementKind::Reduced;
  }
};

/// The cotangent (gradient) placement of a primal placement:
/// shard->shard, replicate->replicate, partial->reduced, reduced->partial(sum).
/// A value that is Reduced (replicated, with the promise that its gradient
/// will be summed over the axis) has a Partial gradient, and a Partial value
/// (pending sum) has a gradient that every rank holds whole: Reduced.
Placement cotangent(const Placement &primal);

enum class StorageKind { None, Dim, Block, Flat, Whole };

/// One memory-only split: tensor dim `dim` split over mesh axis `axis`,
/// evenly (empty weights) or in proportion to `weights` (one per axis rank).
struct StorageSplit {
  int axis = -1;
  int64_t dim = -1;
  std::vector<int64_t> weights;
};

/// A group of tensors flattened and concatenated into one buffer that is
/// split by elements over one mesh axis (FSDP1). Members are given by their
/// element counts, in buffer order.
struct FlatGroup {
  int axis = -1;
  /// The members' element counts, in order, shared: the layouts of a
  /// group's N members refer to one list (N copies of N counts made a
  /// 10,000-member group take 4 GB). Null means no members.
  std::shared_ptr<const std::vector<int64_t>> memberNumel;
  std::vector<int64_t> weights;

  const std::vector<int64_t> &numel() const {
    static const std::vector<int64_t> none;
    return memberNumel ? *memberNumel : none;
  }
  void setNumel(std::vector<int64_t> numel) {
    memberNumel =
        std::make_shared<const std::vector<int64_t>>(std::move(numel));
  }
  static FlatGroup make(int axis, std::vector<int64_t> numel,
                        std::vector<int64_t> weights = {}) {
    FlatGroup g;
    g.axis = axis;
    g.setNumel(std::move(numel));
    g.weights = std::move(weights);
    return g;
  }
};

/// Storage (memory-only) sharding applied on top of the compute placements.
struct Storage {
  StorageKind kind = StorageKind::None;
  std::vector<StorageSplit> splits; // Dim: one, Block: two (outer first).
  FlatGroup group;                  // Flat.
  int64_t member = -1;              // Flat: index of this tensor in group.
  int axis = -1;                    // Whole: the axis the owner is on.
  int64_t owner = -1;               // Whole: owner's coordinate on `axis`.

  /// Mesh axes this storage sharding splits over.
  std::vector<int> axes() const;
  /// Its splits, outer first; flat and whole storage are one split of dim 0
  /// (of the flattened block for flat; with the group's weights).
  std::vector<StorageSplit> outerFirst() const;
};

/// A full layout: one placement per mesh axis, the nesting order of axes
/// that shard the same tensor dim, and optional storage sharding.
struct Layout {
  std::vector<Placement> placements;
  /// For a tensor dim sharded by several axes: (dim, axes outer-first). A dim
  /// absent here uses mesh-axis order (DTensor's default).
  std::vector<std::pair<int64_t, std::vector<int>>> shardOrder;
  Storage storage;
};

/// Every field of `l` as integers, each list preceded by its length: equal
/// layouts give equal keys, so results computed from a layout can be kept
/// per key (a field added to Layout, Storage or Placement belongs here).
/// A flat group enters as what its member's pieces depend on (the member's
/// start and length and the group's total length), not its list of member
/// sizes: keys of all N members of a group would otherwise hold N^2
/// integers.
std::vector<int64_t> key(const Layout &l);

/// A contiguous range [offset, offset + size).
struct Interval {
  int64_t offset = 0;
  int64_t size = 0;
};

/// Part `index` of a length split into `parts`.
///
/// Even (no weights): DTensor's chunk rule, chunk = ceil(length / parts);
/// part i is [min(i*chunk, L), min((i+1)*chunk, L)), so trailing parts may be
/// short or empty. Weighted: part i gets ceil(L * w_i / sum(w)) elements,
/// handed out in order until the length runs out. Equal weights therefore
/// give exactly the even rule.
Interval chunk(int64_t length, int64_t parts, int64_t index,
               const std::vector<int64_t> &weights = {});

/// The sizes of all `parts` chunks of a length, as chunk() gives them, in
/// one pass (chunk() of a weighted split walks the parts before `index`).
std::vector<int64_t> chunkSizes(int64_t length, int64_t parts,
                                const std::vector<int64_t> &weights = {});

/// What one rank holds of a tensor.
struct LocalShard {
  /// Local shape. For Flat storage it is one-dimensional: the number of
  /// elements of the flattened (compute-local) tensor this rank stores.
  std::vector<int64_t> shape;
  /// Global offset of the local block, per tensor dim. For Flat storage: one
  /// entry, the element offset inside the flattened compute-local tensor.
  std::vector<int64_t> offsets;
  bool flattened = false;

  int64_t numElements() const;
};

/// Mesh axes that shard tensor dim `dim`, outer split first.
std::vector<int> shardAxesOf(const Layout &layout, int64_t dim);

/// `layout` with the compute shard of mesh axis `axis` undone: the axis
/// replicates, and leaves the nesting order of the dim it sharded.
void unshard(Layout &layout, int axis);

/// Limits that keep every size, offset and total computed from a layout
/// exact in int64 (verify() and verifyWeights() enforce them).
constexpr int64_t kMaxElements = int64_t(1) << 62;
constexpr int64_t kMaxWeightTotal = int64_t(1) << 31;

/// A shape as messages and tables write it: dims joined by "x" ("4x8"),
/// MLIR's dynamic size (the smallest int64_t) as "?", "" for no dims.
template <typename Dims> std::string shapeString(const Dims &shape) {
  std::string s;
  bool first = true;
  for (int64_t d : shape) {
    s += (first ? "" : "x") + (d == std::numeric_limits<int64_t>::min()
                                   ? std::string("?")
                                   : std::to_string(d));
    first = false;
  }
  return s;
}

/// Checks weights for splitting over `parts` ranks: empty (even) or one
/// positive weight per rank, summing to at most 2^31. Returns "" or a
/// message starting with `what`.
std::string verifyWeights(const std::vector<int64_t> &weights, int64_t parts,
                          const std::string &what);

/// Checks a layout for a tensor of `shape` on `mesh`. Returns the empty
/// string when it is valid, else a message naming the first problem.
std::string verify(const std::vector<int64_t> &shape, const Layout &layout,
                   const Mesh &mesh);

/// The part of the tensor that compute placements give the rank at `coords`
/// (storage sharding ignored).
LocalShard computeShard(const std::vector<int64_t> &shape,
                        const Layout &layout, const Mesh &mesh,
                        const std::vector<int64_t> &coords);

/// What the rank at `coords` stores: compute placements first (outer), then
/// storage sharding applied to the compute-local block (inner). Non-owners of
/// Whole storage get the compute block with dim 0 of size 0. The layout must
/// have passed verify().
LocalShard localShard(const std::vector<int64_t> &shape, const Layout &layout,
                      const Mesh &mesh, const std::vector<int64_t> &coords);

/// localShard() of one tensor for many ranks. A weighted split's part i
/// starts after the parts before it, so chunk() walks them: asked once per
/// rank, that is quadratic in the axis size. Here the parts' starts are
/// computed once per (split, length) and every rank reads its own; the
/// results are localShard()'s. Holds references: `shape`, `layout` and
/// `mesh` must outlive it.
class LocalShards {
public:
  /// `oneRank`: asked for a single rank (localShard()), where walking the
  /// parts before it costs less than a table of all of them.
  LocalShards(const std::vector<int64_t> &shape, const Layout &layout,
              const Mesh &mesh, bool oneRank = false)
      : shape(shape), layout(layout), mesh(mesh), oneRank(oneRank) {}

  LocalShard operator()(const std::vector<int64_t> &coords);

private:
  /// Part `index` of `length` split into `parts` by `weights`, through the
  /// table of starts kept under `key`.
  Interval part(int64_t key, int64_t length, int64_t parts, int64_t index,
                const std::vector<int64_t> &weights);

  const std::vector<int64_t> &shape;
  const Layout &layout;
  const Mesh &mesh;
  bool oneRank;
  /// Per (split or flat group, length): where each part starts, then the
  /// length.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> starts;
  /// Flat storage: where the member starts in the group, and the group's
  /// length.
  std::optional<std::pair<int64_t, int64_t>> member;
};

/// A tensor with partial placements is a sum of terms, one per coordinate on
/// the partial axes; the ranks that differ only off those axes hold the same
/// term.
struct PartialTerms {
  int64_t index = 0;  ///< The rank's term: groupIndex over the partial axes.
  int64_t count = 1;  ///< The number of terms (product of their sizes).
  double scale = 1.0; ///< Turns the sum of the terms into the value (1 / size
                      ///< for every `avg` axis).
};
PartialTerms partialTerms(const Layout &layout, const Mesh &mesh,
                          const std::vector<int64_t> &coords);

/// The piece of member `member` that `coord` (on the group's axis) stores:
/// an element range of that member's flattened data, possibly empty.
Interval flatMemberRange(const FlatGroup &group, int64_t axisSize,
                         int64_t member, int64_t coord);

} // namespace layout
} // namespace muon

#endif // MUON_LAYOUT_LAYOUT_H
