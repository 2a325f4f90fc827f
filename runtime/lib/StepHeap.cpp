//===- StepHeap.cpp - The heap of compiled steps, counted -----------------===//
//
// Compiled steps allocate their temporaries (gathered matrices, Newton-
// Schulz results, staging buffers) through MLIR's generic allocation
// functions, which the lowering calls instead of malloc/free and which the
// runtime provides here. Each block carries a header with its size, so the
// runtime knows the bytes a step holds at any time and the peak
// (muon_rt_counters.heap_bytes_peak): the memory a schedule really needs,
// measured, beside what the compiler estimates. Buffers that the step only
// hands to calls get their whole descriptor written here too, several
// buffers per call (muon_rt_buffers_alloc): one call in compiled code
// instead of an allocation, a size computation and a store per descriptor
// field of each.
//
//===----------------------------------------------------------------------===//

#include "CudaStep.h"
#include "State.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

/// Stored just before the pointer handed out: what free needs.
struct Header {
  void *block;  ///< What malloc returned.
  size_t bytes; ///< What the step asked for.
};

void count(int64_t bytes) {
  muon_rt_counters &c = muon::rt::counters();
  c.heap_bytes_live += bytes;
  if (c.heap_bytes_live > c.heap_bytes_peak)
    c.heap_bytes_peak = c.heap_bytes_live;
}

void *allocate(size_t alignment, size_t bytes) {
  // A target=cuda step's buffers are device memory (aligned to at least
  // 256 bytes, more than any alignment the lowering asks for).
  if (muon::rt::deviceResident()) {
    count(static_cast<int64_t>(bytes));
    return muon::rt::deviceAllocate(bytes);
  }
  if (alignment < alignof(Header))
    alignment = alignof(Header);
  // Room for the header before an aligned address inside the block.
  size_t extra = alignment + sizeof(Header);
  // bytes + extra must not wrap to a small block.
  void *block = bytes > SIZE_MAX - extra ? nullptr : std::malloc(bytes + extra);
  if (!block)
    muon_rt_fail("allocation", "out of memory for a step buffer");
  uintptr_t start = reinterpret_cast<uintptr_t>(block) + sizeof(Header);
  uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
  auto *header = reinterpret_cast<Header *>(aligned) - 1;
  *header = Header{block, bytes};
  count(static_cast<int64_t>(bytes));
  return reinterpret_cast<void *>(aligned);
}

/// A ranked descriptor's size: two pointers, the offset, sizes and strides.
size_t descriptorBytes(int64_t rank) {
  return 2 * sizeof(void *) + static_cast<size_t>(1 + 2 * rank) * sizeof(int64_t);
}

} // namespace

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocate(alignof(std::max_align_t), bytes);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  return allocate(alignment, bytes);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  size_t deviceBytes = 0;
  if (muon::rt::deviceRelease(ptr, deviceBytes)) {
    count(-static_cast<int64_t>(deviceBytes));
    return;
  }
  Header *header = static_cast<Header *>(ptr) - 1;
  muon::rt::counters().heap_bytes_live -= static_cast<int64_t>(header->bytes);
  std::free(header->block);
}

} // extern "C"

extern "C" {

void muon_rt_buffers_alloc(void *descriptors, const int64_t *layouts,
                           int64_t count) {
  char *descriptor = static_cast<char *>(descriptors);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rank = layouts[0];
    void *buffer = allocate(static_cast<size_t>(layouts[2]),
                            static_cast<size_t>(layouts[1]));
    // { T *allocated; T *aligned; int64_t offset, sizes[rank], strides[rank] }
    void *pointers[2] = {buffer, buffer};
    std::memcpy(descriptor, pointers, sizeof pointers);
    int64_t offset = 0;
    char *fields = descriptor + sizeof pointers;
    std::memcpy(fields, &offset, sizeof offset);
    std::memcpy(fields + sizeof offset, layouts + 3,
                static_cast<size_t>(2 * rank) * sizeof(int64_t));
    descriptor += descriptorBytes(rank);
    layouts += 3 + 2 * rank;
  }
}

void muon_rt_buffers_free(void *descriptors, const int64_t *layouts,
                          int64_t count) {
  char *descriptor = static_cast<char *>(descriptors);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rank = layouts[0];
    void *allocated;
    std::memcpy(&allocated, descriptor, sizeof allocated);
    _mlir_memref_to_llvm_free(allocated);
    descriptor += descriptorBytes(rank);
    layouts += 3 + 2 * rank;
  }
}

} // extern "C"
