//===- HostTensors.cpp - Full tensors on the host: data and shards --------===//

#include "HostTensors.h"

using namespace muon;
using namespace muon::run;

int64_t run::numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<float> run::generate(uint64_t seed, uint64_t id, int64_t n) {
  std::vector<float> v(n);
  uint64_t base = seed ^ splitmix64(id);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = splitmix64(base + static_cast<uint64_t>(i)) >> 40;
    v[i] = static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
  }
  return v;
}

uint64_t run::streamId(int kind, int64_t param, int64_t step, int64_t term) {
  return (static_cast<uint64_t>(kind) << 56) ^
         (static_cast<uint64_t>(param) << 36) ^
         (static_cast<uint64_t>(step) << 16) ^ static_cast<uint64_t>(term);
}

Shard run::shardOf(const std::vector<int64_t> &shape, const layout::Layout &l,
                   const layout::Mesh &mesh, int64_t rank) {
  std::vector<int64_t> coords = mesh.coords(rank);
  return {layout::localShard(shape, l, mesh, coords),
          layout::computeShard(shape, l, mesh, coords)};
}

namespace {
/// Calls f(globalIndex, localIndex) for every element of a block.
template <typename F>
void forBlock(const std::vector<int64_t> &shape,
              const layout::LocalShard &block, F f) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t n = numElements(block.shape);
  if (n == 0)
    return;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t li = 0; li < n; ++li) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d)
      g = g * shape[d] + block.offsets[d] + idx[d];
    f(g, li);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < block.shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// For flat storage: global index of element k of the flattened compute
/// block.
std::vector<int64_t> computeIndices(const std::vector<int64_t> &shape,
                                    const layout::LocalShard &compute) {
  std::vector<int64_t> g(numElements(compute.shape));
  forBlock(shape, compute, [&](int64_t gi, int64_t li) { g[li] = gi; });
  return g;
}
} // namespace

std::vector<float> run::extract(const std::vector<float> &full,
                                const std::vector<int64_t> &shape,
                                const Shard &s) {
  std::vector<float> out(s.local.numElements());
  if (s.local.flattened) {
    std::vector<int64_t> g = computeIndices(shape, s.compute);
    for (size_t k = 0; k < out.size(); ++k)
      out[k] = full[g[s.local.offsets[0] + k]];
    return out;
  }
  forBlock(shape, s.local, [&](int64_t gi, int64_t li) { out[li] = full[gi]; });
  return out;
}

void run::insert(std::vector<float> &full, const std::vector<int64_t> &shape,
                 const Shard &s, const std::vector<float> &local) {
  if (s.local.flattened) {
    std::vector<int64_t> g = computeIndices(shape, s.compute);
    for (size_t k = 0; k < local.size(); ++k)
      full[g[s.local.offsets[0] + k]] = local[k];
    return;
  }
  forBlock(shape, s.local,
           [&](int64_t gi, int64_t li) { full[gi] = local[li]; });
}
