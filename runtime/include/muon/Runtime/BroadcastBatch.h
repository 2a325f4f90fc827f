//===- BroadcastBatch.h - How a batch of broadcasts moves ------*- C++ -*-===//
//
// A broadcast batch (dist.broadcast_batch) sends several tensors, each from
// its own root, to every member of one communicator. Two exchanges do it:
//
//  - direct: one all-to-all in which every root sends each item whole to
//    every other member. A root sends (k - 1) copies of what it roots.
//  - scatter + all-gather: an all-to-all in which each root sends member j
//    the j-th of k near-equal chunks of each item it roots, then an
//    all-gather of every member's chunks. Nobody sends more than about
//    twice what it holds, whatever k is.
//
// Which one runs is decided from the items alone (roots and sizes, the same
// on every member), so every member picks the same exchange; the runtime
// (Batch.cpp) runs it and the schedule estimate (lib/Plan/Schedule.cpp)
// costs it through the same functions. Header-only, no dependencies: the
// runtime links no compiler library.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_BROADCASTBATCH_H
#define MUON_RUNTIME_BROADCASTBATCH_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace muon {
namespace rt {

/// One item of a broadcast batch: its root (member index) and elements.
struct BroadcastItem {
  int64_t root = 0;
  int64_t elements = 0;
};

/// Member j's chunk of `n` elements cut into `k` near-equal chunks: the
/// first n mod k chunks have one element more.
inline int64_t broadcastChunk(int64_t n, int64_t k, int64_t j) {
  return n / k + (j < n % k ? 1 : 0);
}

/// Where member j's chunk starts.
inline int64_t broadcastChunkOffset(int64_t n, int64_t k, int64_t j) {
  return j * (n / k) + std::min(j, n % k);
}

/// The most elements one member sends or receives in each exchange.
struct BroadcastLoads {
  int64_t direct = 0;
  /// Scatter + all-gather: the scatter's and the all-gather's (a member
  /// receives every chunk but its own; a ring forwards as much).
  int64_t scatter = 0, allGather = 0;
};

inline BroadcastLoads broadcastLoads(const std::vector<BroadcastItem> &items,
                                     int64_t k) {
  std::vector<int64_t> dSent(k, 0), dRecv(k, 0), sSent(k, 0), sRecv(k, 0),
      chunks(k, 0);
  int64_t total = 0;
  for (const BroadcastItem &it : items) {
    total += it.elements;
    dSent[it.root] += (k - 1) * it.elements;
    for (int64_t m = 0; m < k; ++m) {
      int64_t c = broadcastChunk(it.elements, k, m);
      chunks[m] += c;
      if (m == it.root)
        continue;
      dRecv[m] += it.elements;
      sSent[it.root] += c;
      sRecv[m] += c;
    }
  }
  BroadcastLoads l;
  for (int64_t m = 0; m < k; ++m) {
    l.direct = std::max({l.direct, dSent[m], dRecv[m]});
    l.scatter = std::max({l.scatter, sSent[m], sRecv[m]});
    l.allGather = std::max(l.allGather, total - chunks[m]);
  }
  return l;
}

/// The fewest elements the split must save on the busiest member: it costs
/// a second latency, which at the bandwidth of fast links (NVLink, about
/// 360 GB/s at 3 us; InfiniBand, 50 GB/s at 10 us) is worth 1-2 MiB.
constexpr int64_t kBroadcastSplitMinSavedElements = 1 << 19; // 2 MiB of f32

/// Whether the batch runs as scatter + all-gather: when its two exchanges
/// together move at most 3/4 of the direct exchange's busiest member (the
/// rest pays for the copies) and at least 2^19 elements less (the second
/// exchange's latency). Never for k <= 2, where the direct exchange is
/// already optimal.
inline bool broadcastByScatterAllGather(const BroadcastLoads &l) {
  // In 128 bits: loads may reach 2^62 elements (the tensor limit).
  __int128 split = static_cast<__int128>(l.scatter) + l.allGather;
  return 4 * split <= 3 * static_cast<__int128>(l.direct) &&
         l.direct - split >= kBroadcastSplitMinSavedElements;
}

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_BROADCASTBATCH_H
