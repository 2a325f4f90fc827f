//===- ns_efficiency.cpp - Newton-Schulz against the machine's sgemm rate -===//
//
// Measures, in one run: the best single-thread sgemm rate of the BLAS the
// runtime links (square sizes), and the runtime's Newton-Schulz
// (muon_rt_newton_schulz, 5 iterations) on the main example's shapes and on
// larger ones. For each shape it prints the time, the rate at the standard
// FLOP count 5 (4 p^2 q + 2 p^3), and the ratio of the time to that count
// at the best sgemm rate (1.0 = as fast as the FLOP count allows; below 1
// when the kernel does fewer FLOPs, e.g. symmetric products).
//
//   build/bench/cpu/muon-bench-ns [seconds per measurement]
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include "Cblas.h" // runtime/lib: the runtime's CBLAS

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Repeats `f` for about `budget` seconds; the best time of one call.
template <typename F> double bestTime(double budget, F f) {
  f(); // warm up (BLAS buffers, page faults)
  double best = 1e30;
  auto start = Clock::now();
  do {
    auto t = Clock::now();
    f();
    best = std::min(best, secondsSince(t));
  } while (secondsSince(start) < budget);
  return best;
}

struct Descriptor2D {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
} // namespace

int main(int argc, char **argv) {
  // One optional argument, a positive number of seconds; anything else
  // (--help included) prints the usage instead of running.
  char *end = nullptr;
  double budget = argc > 1 ? std::strtod(argv[1], &end) : 1.0;
  if (argc > 2 || (argc == 2 && (*end != '\0' || !(budget > 0)))) {
    std::fprintf(stderr,
                 "usage: %s [seconds per measurement, default 1]\n"
                 "Best single-thread sgemm rate, then the runtime's "
                 "Newton-Schulz (5 iterations) per shape against it.\n",
                 argv[0]);
    return 2;
  }
  // One thread, as each rank of a job uses (muon-run sets
  // OPENBLAS_NUM_THREADS=1): the rate the Newton-Schulz of one rank sees.
  muon_openblas_set_num_threads(1);
  double best = 0;
  std::printf("%-22s %10s %10s\n", "sgemm (1 thread)", "ms", "GFLOP/s");
  for (int n : {256, 512, 1024}) {
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    double t = bestTime(budget, [&] {
      muon_cblas(sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
                        1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    });
    double rate = 2.0 * n * n * n / t;
    best = std::max(best, rate);
    std::printf("%4d x %-15d %10.3f %10.1f\n", n, n, t * 1e3, rate / 1e9);
  }
  std::printf("best sgemm rate: %.1f GFLOP/s\n\n", best / 1e9);

  std::printf("%-22s %10s %10s %12s\n", "newton_schulz (5 it.)", "ms",
              "GFLOP/s", "x FLOP bound");
  const double coeffs[] = {3.4445, -4.7750, 2.0315};
  muon_rt_f64_array c{const_cast<double *>(coeffs), const_cast<double *>(coeffs),
                      0, 3, 1};
  double worst = 0;
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{
           {256, 256}, {688, 256}, {256, 688}, {1024, 1024}, {2048, 512}}) {
    std::vector<float> x(m * n);
    for (int64_t i = 0; i < m * n; ++i)
      x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    std::vector<float> work(x);
    Descriptor2D d{work.data(), work.data(), 0, {m, n}, {n, 1}};
    muon_rt_memref ref{2, &d};
    double t = bestTime(budget, [&] {
      std::copy(x.begin(), x.end(), work.begin());
      _mlir_ciface_muon_rt_newton_schulz(&ref, &ref, 5, &c, 1e-7,
                                         MUON_RT_NS_FP32);
    });
    double p = std::min(m, n), q = std::max(m, n);
    double flops = 5 * (4 * p * p * q + 2 * p * p * p);
    double ratio = t / (flops / best);
    worst = std::max(worst, ratio);
    std::printf("%4lld x %-15lld %10.3f %10.1f %12.3f\n",
                static_cast<long long>(m), static_cast<long long>(n), t * 1e3,
                flops / t / 1e9, ratio);
  }
  std::printf("worst: %.3f x the FLOP bound at the best sgemm rate\n", worst);
  return 0;
}
