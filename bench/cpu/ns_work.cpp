//===- ns_work.cpp - One rank's Newton-Schulz work, and nothing else ------===//
//
// Runs the runtime's Newton-Schulz (5 iterations, one thread) on the given
// shapes, in order, once untimed and then `repeat` times, and prints the
// seconds per repetition (wall and processor time) and the fastest
// repetition's wall seconds: the compute of one rank of a step without any
// communication. Started as
// several processes at once by bench/cpu/floor.py (the no-communication
// floor of a distributed step).
//
//   muon-bench-ns-work REPEAT MxN [MxN ...]
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include "Cblas.h" // runtime/lib: the runtime's CBLAS

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {
struct Descriptor2D {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: muon-bench-ns-work REPEAT MxN [MxN ...]\n");
    return 2;
  }
  muon_openblas_set_num_threads(1);
  int repeat = std::atoi(argv[1]);
  std::vector<std::vector<float>> inputs;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int i = 2; i < argc; ++i) {
    long long m = 0, n = 0;
    if (std::sscanf(argv[i], "%lldx%lld", &m, &n) != 2 || m <= 0 || n <= 0) {
      std::fprintf(stderr, "bad shape '%s'\n", argv[i]);
      return 2;
    }
    shapes.push_back({m, n});
    std::vector<float> x(m * n);
    for (int64_t k = 0; k < m * n; ++k)
      x[k] = static_cast<float>((k * 7919) % 1000) / 1000.0f - 0.5f;
    inputs.push_back(std::move(x));
  }
  const double coeffs[] = {3.4445, -4.7750, 2.0315};
  muon_rt_f64_array c{const_cast<double *>(coeffs),
                      const_cast<double *>(coeffs), 0, 3, 1};
  auto everyShape = [&] {
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::vector<float> work(inputs[i]);
      Descriptor2D d{work.data(), work.data(), 0,
                     {shapes[i].first, shapes[i].second},
                     {shapes[i].second, 1}};
      muon_rt_memref ref{2, &d};
      _mlir_ciface_muon_rt_newton_schulz(&ref, &ref, 5, &c, 1e-7,
                                         MUON_RT_NS_FP32);
    }
  };
  // As a step's process: freed buffers stay in the heap, and the first
  // repetition (page faults, BLAS set-up) is not timed, as muon-run's
  // figure after the first step.
  muon_rt_reuse_freed_buffers();
  everyShape();
  double seconds = 0, fastest = 0;
  std::clock_t cpuStart = std::clock();
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    everyShape();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    seconds += s;
    fastest = r == 0 ? s : std::min(fastest, s);
  }
  std::printf("%.6f %.6f %.6f\n", seconds / repeat,
              static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC /
                  repeat,
              fastest);
  return 0;
}
