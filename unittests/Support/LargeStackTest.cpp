//===- LargeStackTest.cpp - runOnLargeStack -------------------------------===//

#include "muon/Support/LargeStack.h"

#include "gtest/gtest.h"

#include <pthread.h>

namespace {

/// Recurses `depth` times with a 4 KiB frame each (the array is touched
/// so that the frame is not optimised away).
__attribute__((noinline)) int deep(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth == 0)
    return frame[0];
  return deep(depth - 1) + frame[0] - static_cast<char>(depth);
}

size_t currentStackBytes() {
  pthread_attr_t attr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size;
}

TEST(LargeStack, ReturnsTheBodysResult) {
  EXPECT_EQ(muon::runOnLargeStack("test", [] { return 42; }), 42);
  EXPECT_EQ(muon::runOnLargeStack("test", [] { return 0; }), 0);
}

TEST(LargeStack, BodyRunsOnALargeStack) {
  size_t bytes = muon::runOnLargeStack(
      "test", [] { return static_cast<int>(currentStackBytes() >> 20); });
  EXPECT_GE(bytes, muon::kLargeStackBytes >> 20);
}

TEST(LargeStack, RecursionPastTheDefaultStack) {
  // 64 Ki frames of 4 KiB: 256 MiB, 32 times the default 8 MiB.
  EXPECT_EQ(muon::runOnLargeStack("test", [] { return deep(64 << 10); }), 0);
}

} // namespace
