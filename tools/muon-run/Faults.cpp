//===- Faults.cpp - Deliberate faults for the error-handling tests --------===//

#include "Faults.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <thread>

using namespace muon::run;

void muon::run::injectShapeFault(const Fault &f, int64_t rank, int64_t t,
                                 std::vector<std::vector<int64_t>> &shapes) {
  if (f.kind != Fault::ShardShape || f.rank != rank || f.step != t)
    return;
  // The first tensor argument (f64 scalars have no shape).
  for (size_t a = 0; a < shapes.size(); ++a) {
    if (shapes[a].empty())
      continue;
    std::fprintf(stderr, "muon-run: rank %lld: injecting a wrong shard shape "
                         "for entry argument #%zu\n", (long long)rank, a);
    shapes[a][0] += 1; // The buffer is never read past its end: the
                       // entry check stops the job first.
    return;
  }
}

void muon::run::injectProcessFault(const Fault &f, int64_t rank, int64_t t) {
  if (f.rank != rank || f.step != t)
    return;
  if (f.kind == Fault::Kill) {
    std::fprintf(stderr, "muon-run: rank %lld: killing itself (SIGKILL) "
                         "before step %lld\n", (long long)rank, (long long)t);
    std::fflush(stderr);
    raise(SIGKILL);
  }
  if (f.kind == Fault::Hang) {
    std::fprintf(stderr, "muon-run: rank %lld: hanging before step %lld\n",
                 (long long)rank, (long long)t);
    std::fflush(stderr);
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

void muon::run::injectCorruption(const Fault &f, int64_t rank, int64_t t,
                                 std::vector<std::vector<float>> &localP) {
  if (f.kind != Fault::Corrupt || f.rank != rank || f.step != t)
    return;
  for (std::vector<float> &p : localP)
    if (!p.empty()) {
      p[0] += 1e-3f;
      return;
    }
  // Nothing to corrupt: a run that then PASSed would look like a check
  // that missed the corruption.
  std::fprintf(stderr,
               "muon-run: error: rank %lld: --inject-fault=corrupt@%lld:%lld: "
               "the rank holds no element of any parameter (empty shards); "
               "pick a rank that holds some\n",
               static_cast<long long>(rank), static_cast<long long>(f.rank),
               static_cast<long long>(f.step));
  std::fflush(stderr);
  std::exit(1);
}
