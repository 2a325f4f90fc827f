//===- BufferTest.cpp - Buffers whose descriptor the runtime writes -------===//
//
// muon_rt_buffers_alloc writes whole ranked memref descriptors from layout
// tables (what muon-allocate-through-runtime emits), allocating from the step
// heap, and muon_rt_buffers_free frees through those descriptors.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include "gtest/gtest.h"

#include <cstdint>

namespace {

struct Descriptor2D {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
};

int64_t liveBytes() {
  muon_rt_counters c;
  muon_rt_get_counters(&c);
  return c.heap_bytes_live;
}

TEST(RuntimeBuffer, WritesTheWholeDescriptor) {
  // {rank, bytes, alignment, sizes..., strides...} of memref<3x5xf32>.
  const int64_t layout[] = {2, 60, 64, 3, 5, 5, 1};
  Descriptor2D d;
  // Garbage where the runtime must write.
  d.offset = 7;
  d.sizes[0] = d.sizes[1] = d.strides[0] = d.strides[1] = -1;
  int64_t before = liveBytes();
  muon_rt_buffers_alloc(&d, layout, 1);
  ASSERT_NE(d.allocated, nullptr);
  EXPECT_EQ(d.allocated, d.aligned);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.aligned) % 64, 0u);
  EXPECT_EQ(d.offset, 0);
  EXPECT_EQ(d.sizes[0], 3);
  EXPECT_EQ(d.sizes[1], 5);
  EXPECT_EQ(d.strides[0], 5);
  EXPECT_EQ(d.strides[1], 1);
  EXPECT_EQ(liveBytes() - before, 60);
  for (int i = 0; i < 15; ++i) // The whole buffer is writable.
    d.aligned[i] = static_cast<float>(i);
  EXPECT_EQ(d.aligned[14], 14.0f);
  muon_rt_buffers_free(&d, layout, 1);
  EXPECT_EQ(liveBytes(), before);
}

TEST(RuntimeBuffer, RankZeroAndEmpty) {
  struct {
    double *allocated;
    double *aligned;
    int64_t offset;
  } scalar;
  const int64_t scalarLayout[] = {0, 8, 128};
  muon_rt_buffers_alloc(&scalar, scalarLayout, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(scalar.aligned) % 128, 0u);
  EXPECT_EQ(scalar.offset, 0);
  *scalar.aligned = 2.5;
  muon_rt_buffers_free(&scalar, scalarLayout, 1);

  // memref<0x4xf32>: no bytes, still a pointer to free.
  const int64_t emptyLayout[] = {2, 0, 64, 0, 4, 4, 1};
  Descriptor2D empty;
  int64_t before = liveBytes();
  muon_rt_buffers_alloc(&empty, emptyLayout, 1);
  EXPECT_NE(empty.allocated, nullptr);
  EXPECT_EQ(empty.sizes[0], 0);
  EXPECT_EQ(empty.strides[0], 4);
  muon_rt_buffers_free(&empty, emptyLayout, 1);
  EXPECT_EQ(liveBytes(), before);
}

TEST(RuntimeBuffer, SeveralBuffersOneAfterTheOther) {
  // memref<3x5xf32>, memref<f64>, memref<7xf32>: descriptors of 56, 24 and
  // 40 bytes one after the other, as an LLVM struct of them lays them out.
  struct {
    Descriptor2D a;
    struct {
      double *allocated, *aligned;
      int64_t offset;
    } b;
    struct {
      float *allocated, *aligned;
      int64_t offset, sizes[1], strides[1];
    } c;
  } group;
  static_assert(sizeof(group) == 56 + 24 + 40, "no padding");
  const int64_t layouts[] = {2, 60, 64, 3, 5, 5, 1, // a
                             0, 8, 16,              // b
                             1, 28, 32, 7, 1};      // c
  int64_t before = liveBytes();
  muon_rt_buffers_alloc(&group, layouts, 3);
  EXPECT_EQ(liveBytes() - before, 60 + 8 + 28);
  EXPECT_EQ(group.a.sizes[1], 5);
  EXPECT_EQ(group.a.strides[0], 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(group.b.aligned) % 16, 0u);
  EXPECT_EQ(group.b.offset, 0);
  EXPECT_EQ(group.c.sizes[0], 7);
  EXPECT_EQ(group.c.strides[0], 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(group.c.aligned) % 32, 0u);
  EXPECT_NE(group.a.aligned, nullptr);
  group.c.aligned[6] = 1.0f;
  // Freed in two runs: the last two, then the first.
  muon_rt_buffers_free(&group.b, layouts + 7, 2);
  EXPECT_EQ(liveBytes() - before, 60);
  muon_rt_buffers_free(&group, layouts, 1);
  EXPECT_EQ(liveBytes(), before);
}

} // namespace
