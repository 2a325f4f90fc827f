//===- BroadcastBatchTest.cpp - How a broadcast batch moves ---------------===//
//
// The chunk rule, the loads of both exchanges and the choice between them
// (muon/Runtime/BroadcastBatch.h), computed by hand, and the property the
// docs promise: on two members the direct exchange always runs.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/BroadcastBatch.h"

#include "gtest/gtest.h"

#include <random>

using namespace muon::rt;

namespace {

TEST(BroadcastBatch, ChunksTileTheItem) {
  for (int64_t n : {0, 1, 2, 7, 64, 100003})
    for (int64_t k : {1, 2, 3, 8, 63}) {
      int64_t at = 0;
      for (int64_t j = 0; j < k; ++j) {
        EXPECT_EQ(broadcastChunkOffset(n, k, j), at) << n << " " << k << " " << j;
        at += broadcastChunk(n, k, j);
      }
      EXPECT_EQ(at, n);
    }
  // 10 over 4: the first n mod k chunks have one more.
  EXPECT_EQ(broadcastChunk(10, 4, 0), 3);
  EXPECT_EQ(broadcastChunk(10, 4, 1), 3);
  EXPECT_EQ(broadcastChunk(10, 4, 2), 2);
  EXPECT_EQ(broadcastChunkOffset(10, 4, 3), 8);
}

TEST(BroadcastBatch, LoadsByHand) {
  // Over 3 members: 100003 elements from member 1, 7 from 0, 1 from 2.
  BroadcastLoads l = broadcastLoads({{1, 100003}, {0, 7}, {2, 1}}, 3);
  // Direct: member 1 sends two copies of its item.
  EXPECT_EQ(l.direct, 2 * 100003);
  // Scatter: member 1 sends 33335 + 33334 (keeps its 33334) and receives
  // 2 + 0; member 0 sends 2 + 2, receives 33335 + 1.
  EXPECT_EQ(l.scatter, 33335 + 33334);
  // All-gather: T = 100011; member 2 holds 33334 + 2 + 0.
  EXPECT_EQ(l.allGather, 100011 - (33334 + 2));
  // 3/4 of the direct load, but 66662 elements saved: under 2^19, the
  // second latency is not paid for.
  EXPECT_FALSE(broadcastByScatterAllGather(l));
  // Eight times the data: 533329 elements saved.
  BroadcastLoads big = broadcastLoads({{1, 800003}, {0, 7}, {2, 1}}, 3);
  EXPECT_EQ(big.direct, 1600006);
  EXPECT_EQ(big.scatter, 800003 - 266668);
  EXPECT_EQ(big.allGather, 800011 - (266667 + 2));
  EXPECT_TRUE(broadcastByScatterAllGather(big));
}

TEST(BroadcastBatch, BalancedOrSmallBatchesStayDirect) {
  // Every member roots one equal item: both exchanges move about as much.
  std::vector<BroadcastItem> even;
  for (int64_t m = 0; m < 8; ++m)
    even.push_back({m, 1 << 20});
  EXPECT_FALSE(broadcastByScatterAllGather(broadcastLoads(even, 8)));
  // One item over 64 members, too small to pay for a second latency.
  EXPECT_FALSE(broadcastByScatterAllGather(broadcastLoads({{5, 8000}}, 64)));
  // The same with enough data: split (63 copies against about two).
  BroadcastLoads big = broadcastLoads({{5, 1 << 20}}, 64);
  EXPECT_EQ(big.direct, 63 * (1 << 20));
  EXPECT_TRUE(broadcastByScatterAllGather(big));
}

TEST(BroadcastBatch, TwoMembersNeverSplit) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<BroadcastItem> items;
    int64_t count = 1 + rng() % 6;
    for (int64_t i = 0; i < count; ++i)
      items.push_back({static_cast<int64_t>(rng() % 2),
                       static_cast<int64_t>(rng() % (1 << 22))});
    EXPECT_FALSE(broadcastByScatterAllGather(broadcastLoads(items, 2)));
  }
}

} // namespace
