//===- HostTensors.h - Full tensors on the host: data and shards -*- C++ -*-===//
//
// Plain C++ (no MLIR): the deterministic generator muon-run feeds the step
// with, and the mapping between a full tensor and one rank's local shard,
// through the project's layout library (the same arithmetic the compiler
// uses to type the shards).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_HOSTTENSORS_H
#define MUON_TOOLS_MUONRUN_HOSTTENSORS_H

#include "muon/Layout/Layout.h"

#include <cstdint>
#include <vector>

namespace muon {
namespace run {

/// Full or local tensors (row-major f32) and their shapes, one per entry.
using Tensors = std::vector<std::vector<float>>;
using Shapes = std::vector<std::vector<int64_t>>;

int64_t numElements(const std::vector<int64_t> &shape);

/// The documented generator (docs/running.md): element i of the tensor with
/// stream id `id` is splitmix64((seed ^ splitmix64(id)) + i) mapped to
/// [-1, 1) with 24 random bits.
std::vector<float> generate(uint64_t seed, uint64_t id, int64_t n);

/// Stream ids: kind (0 param, 1 momentum, 2 gradient), parameter index,
/// step and partial term.
uint64_t streamId(int kind, int64_t param, int64_t step, int64_t term);

/// What `rank` stores of a full tensor.
struct Shard {
  layout::LocalShard local;
  layout::LocalShard compute; ///< The compute block (for flat storage).
};
Shard shardOf(const std::vector<int64_t> &shape, const layout::Layout &l,
              const layout::Mesh &mesh, int64_t rank);

/// Copies rank's shard out of / into a full row-major tensor.
std::vector<float> extract(const std::vector<float> &full,
                           const std::vector<int64_t> &shape, const Shard &s);
void insert(std::vector<float> &full, const std::vector<int64_t> &shape,
            const Shard &s, const std::vector<float> &local);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_HOSTTENSORS_H
