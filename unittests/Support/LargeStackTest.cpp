//===- LargeStackTest.cpp - runOnLargeStack -------------------------------===//

#include "muon/Support/LargeStack.h"

#include "gtest/gtest.h"

#include <pthread.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

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

TEST(LargeStack, ACallFromInsideACall) {
  // The kept thread is busy with the outer call: the inner one gets a
  // thread of its own instead of waiting for it.
  EXPECT_EQ(muon::runOnLargeStack("test",
                                  [] {
                                    return 1 +
                                           muon::runOnLargeStack("test", [] {
                                             return deep(16 << 10);
                                           });
                                  }),
            1);
}

TEST(LargeStack, CallsFromSeveralThreads) {
  std::vector<int> results(8, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&results, i] {
      for (int k = 0; k < 50; ++k)
        results[i] =
            muon::runOnLargeStack("test", [i] { return i + deep(1024); });
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(results[i], i);
}

TEST(LargeStack, AForkedChildCallsToo) {
  // The kept thread is not copied into a child of fork(): the child
  // starts its own instead of waiting on the parent's.
  ASSERT_EQ(muon::runOnLargeStack("test", [] { return 3; }), 3);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    _exit(muon::runOnLargeStack("test", [] { return deep(16 << 10) + 7; }));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

} // namespace
