//===- BufferTest.cpp - Buffers whose descriptor the runtime writes -------===//
//
// muon_rt_buffer_alloc writes a whole ranked memref descriptor from a layout
// table (what muon-allocate-through-runtime emits), allocating from the step
// heap, and muon_rt_buffer_free frees through that descriptor.
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
  muon_rt_buffer_alloc(&d, layout);
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
  muon_rt_buffer_free(&d);
  EXPECT_EQ(liveBytes(), before);
}

TEST(RuntimeBuffer, RankZeroAndEmpty) {
  struct {
    double *allocated;
    double *aligned;
    int64_t offset;
  } scalar;
  const int64_t scalarLayout[] = {0, 8, 128};
  muon_rt_buffer_alloc(&scalar, scalarLayout);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(scalar.aligned) % 128, 0u);
  EXPECT_EQ(scalar.offset, 0);
  *scalar.aligned = 2.5;
  muon_rt_buffer_free(&scalar);

  // memref<0x4xf32>: no bytes, still a pointer to free.
  const int64_t emptyLayout[] = {2, 0, 64, 0, 4, 4, 1};
  Descriptor2D empty;
  int64_t before = liveBytes();
  muon_rt_buffer_alloc(&empty, emptyLayout);
  EXPECT_NE(empty.allocated, nullptr);
  EXPECT_EQ(empty.sizes[0], 0);
  EXPECT_EQ(empty.strides[0], 4);
  muon_rt_buffer_free(&empty);
  EXPECT_EQ(liveBytes(), before);
}

} // namespace
