// Muon::MuonSupport linked alone: a recursion of 64 MiB (eight times a main
// thread's stack) on muon's large-stack thread.
#include "muon/Support/LargeStack.h"

#include <cstdio>

static int deep(int n) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(n);
  return n == 0 ? 0 : deep(n - 1) + frame[0] - static_cast<char>(n);
}

int main() {
  int r = muon::runOnLargeStack("muon-consumer-stack",
                                [] { return deep(64 * 1024) + 5; });
  std::printf("large stack: %d\n", r);
  return r == 5 ? 0 : 1;
}
