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
// With --sync, started by mpirun as a step's ranks are, rank r runs the
// comma-separated shapes of the r-th list ("-": none) and every rank waits for all
// others (the runtime's barrier, whose wait is a collective's) after each
// of its matrices: the i-th matrices of the ranks are a round. This is the
// floor of a schedule whose ranks meet once per round and move no data;
// rank 0 prints its figures.
//
//   mpirun -np N muon-bench-ns-work --sync REPEAT SHAPES_0 ... SHAPES_N-1
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include "Cblas.h" // runtime/lib: the runtime's CBLAS

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace {
struct Descriptor2D {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
} // namespace

/// The shapes of `text` separated by `sep` ("MxN"; "-" is none), or false
/// (an empty piece, as after a trailing separator, is a bad shape).
bool parseShapes(const std::string &text, char sep,
                 std::vector<std::pair<int64_t, int64_t>> &shapes) {
  if (text == "-")
    return true;
  for (size_t at = 0;;) {
    size_t end = text.find(sep, at);
    std::string one = text.substr(at, end - at);
    long long m = 0, n = 0;
    char rest = 0;
    if (std::sscanf(one.c_str(), "%lldx%lld%c", &m, &n, &rest) != 2 ||
        m <= 0 || n <= 0) {
      std::fprintf(stderr, "bad shape '%s'\n", one.c_str());
      return false;
    }
    shapes.push_back({m, n});
    if (end == std::string::npos)
      return true;
    at = end + 1;
  }
}

int main(int argc, char **argv) {
  bool sync = argc > 1 && std::string(argv[1]) == "--sync";
  if (argc < 2 + sync) {
    std::fprintf(stderr, "usage: muon-bench-ns-work REPEAT MxN [MxN ...]\n"
                         "       muon-bench-ns-work --sync REPEAT "
                         "SHAPES_0 ... SHAPES_N-1 (under mpirun)\n");
    return 2;
  }
  int rank = 0;
  if (sync) {
    muon_rt_init(&argc, &argv);
    rank = static_cast<int>(muon_rt_world_rank());
    if (argc != 3 + muon_rt_world_size()) {
      std::fprintf(stderr, "--sync needs one list of shapes per rank (%lld)\n",
                   static_cast<long long>(muon_rt_world_size()));
      return 2;
    }
  }
  muon_openblas_set_num_threads(1);
  int repeat = std::atoi(argv[1 + sync]);
  std::vector<std::vector<float>> inputs;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  // With --sync: the most matrices a rank has, so that every rank meets
  // the others as often (a rank with fewer waits in its last rounds).
  size_t rounds = 0;
  if (sync) {
    for (int r = 0; r < argc - 3; ++r) {
      std::vector<std::pair<int64_t, int64_t>> theirs;
      if (!parseShapes(argv[3 + r], ',', theirs))
        return 2;
      rounds = std::max(rounds, theirs.size());
      if (r == rank)
        shapes = theirs;
    }
  } else {
    for (int i = 2; i < argc; ++i)
      if (!parseShapes(argv[i], ' ', shapes))
        return 2;
  }
  for (auto [m, n] : shapes) {
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
      if (sync)
        muon_rt_barrier();
    }
    for (size_t i = shapes.size(); sync && i < rounds; ++i)
      muon_rt_barrier();
  };
  // As a step's process: freed buffers stay in the heap, and the first
  // repetition (page faults, BLAS set-up) is not timed, as muon-run's
  // figure after the first step.
  muon_rt_reuse_freed_buffers();
  everyShape();
  if (sync)
    muon_rt_barrier(); // a common start
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
  if (rank == 0)
    std::printf("%.6f %.6f %.6f\n", seconds / repeat,
                static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC /
                    repeat,
                fastest);
  if (sync)
    muon_rt_finalize();
  return 0;
}
