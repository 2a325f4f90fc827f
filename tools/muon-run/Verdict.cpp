//===- Verdict.cpp - Reassembly, comparison, report, dump -----------------===//

#include "Verdict.h"

#include "HostTensors.h"
#include "Npy.h"
#include "Reference.h"

#include "muon/Layout/Layout.h"
#include "muon/Runtime/muon_runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

using namespace muon;
using namespace muon::run;

namespace {

/// numpy.allclose(got, want, rtol, atol), plus the max errors over every
/// element (a failed check still reports how far off the worst one is).
bool compare(const Options &o, const std::vector<float> &got,
             const std::vector<float> &want, double &maxAbs, double &maxRel) {
  if (got.size() != want.size())
    return false;
  bool ok = true;
  for (size_t k = 0; k < got.size(); ++k) {
    double d = std::fabs(static_cast<double>(got[k]) - want[k]);
    // A value that is not finite on either side (never written by any rank,
    // or overflowed) fails, and counts as infinitely far off: a step whose
    // parameters end as inf has not reproduced anything.
    bool finite = std::isfinite(got[k]) && std::isfinite(want[k]);
    if (!finite)
      d = INFINITY;
    maxAbs = std::max(maxAbs, d);
    // Not d / |want| when want is not finite: inf / inf is NaN, which
    // std::max drops, and the row read a relative error of 0.
    maxRel = std::max(maxRel,
                      finite ? d / std::max(1e-30, std::fabs((double)want[k]))
                             : INFINITY);
    ok &= finite &&
          d <= o.atol + o.rtol * std::fabs(static_cast<double>(want[k]));
  }
  return ok;
}

} // namespace

std::vector<float> run::assembleOnRankZero(const StepSpec &spec, size_t i,
                                           const std::vector<float> &local,
                                           bool &agree) {
  const ParamSpec &ps = spec.params[i];
  int64_t rank = muon_rt_world_rank(), size = muon_rt_world_size();
  int64_t count = static_cast<int64_t>(local.size());
  std::vector<int64_t> counts(size), displs(size);
  muon_rt_host_counts(count, counts.data());
  int64_t total = 0;
  for (int64_t r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<float> all(rank == 0 ? total : 0);
  muon_rt_host_gather_f32(local.data(), count, all.data(), counts.data());
  if (rank != 0)
    return {};
  std::vector<float> full(numElements(ps.shape), NAN);
  for (int64_t r = 0; r < size; ++r) {
    if (!plan::inGroup(ps.plan, spec.mesh.coords(r)))
      continue;
    Shard s = shardOf(ps.shape, ps.layout, spec.mesh, r);
    std::vector<float> piece(all.begin() + displs[r],
                             all.begin() + displs[r] + counts[r]);
    // Elements an earlier holder wrote must be bitwise the same here.
    std::vector<float> earlier = extract(full, ps.shape, s);
    for (size_t k = 0; k < piece.size(); ++k)
      if (!std::isnan(earlier[k]) && earlier[k] != piece[k])
        agree = false;
    insert(full, ps.shape, s, piece);
  }
  return full;
}

bool run::printVerdict(const Options &o, const StepSpec &spec,
                       const Tensors &p, const Tensors &m, const Tensors &refP,
                       const Tensors &refM, const std::vector<double> &counters,
                       bool replicasAgree, const Timing &timing,
                       int worldSize) {
  std::printf("%-24s %-12s %12s %12s %12s %12s  %s\n", "parameter", "shape",
              "max|dP|", "max rel dP", "max|dM|", "max rel dM", "check");
  bool pass = true;
  for (size_t i = 0; i < spec.params.size(); ++i) {
    double ea = 0, er = 0, ma = 0, mr = 0;
    bool ok = compare(o, p[i], refP[i], ea, er) &
              compare(o, m[i], refM[i], ma, mr);
    pass &= ok;
    // Bytes that would break the row escaped, as MLIR strings write them.
    std::string name;
    llvm::raw_string_ostream nameOs(name);
    llvm::printEscapedString(spec.params[i].name, nameOs);
    std::printf("%-24s %-12s %12.3e %12.3e %12.3e %12.3e  %s\n", name.c_str(),
                layout::shapeString(spec.params[i].shape).c_str(), ea, er, ma,
                mr, ok ? "ok" : "MISMATCH");
  }
  // Zero redundancy: summed over ranks, each matrix exactly once a step.
  double expectMatrices = 0, expectFlops = 0;
  for (const ParamSpec &ps : spec.params) {
    int64_t r = ps.shape.size();
    int64_t rows = ps.shape[r - 2], cols = ps.shape[r - 1];
    int64_t batch = numElements(ps.shape) / std::max<int64_t>(1, rows * cols);
    // Blocked Newton-Schulz: each block is a matrix of its own.
    const std::vector<int64_t> &blocks = ps.plan.blocks.sizes;
    if (blocks.empty()) {
      expectMatrices += batch * o.steps;
      expectFlops +=
          batch * o.steps * referenceNsFlops(rows, cols, spec.hyper.nsSteps);
    }
    for (int64_t b : blocks) {
      expectMatrices += batch * o.steps;
      expectFlops += batch * o.steps *
                     (ps.plan.blocksAlongRows
                          ? referenceNsFlops(b, cols, spec.hyper.nsSteps)
                          : referenceNsFlops(rows, b, spec.hyper.nsSteps));
    }
  }
  double calls = 0, matrices = 0, flops = 0;
  std::printf("Newton-Schulz per rank (calls, matrices, GFLOP):");
  for (int r = 0; r < worldSize; ++r) {
    const double *c = &counters[kCountersPerRank * r];
    calls += c[0];
    matrices += c[1];
    flops += c[2];
    std::printf(" r%d=%.0f/%.0f/%.3f", r, c[0], c[1], c[2] * 1e-9);
  }
  std::printf("\ncollective calls per rank per step:");
  for (int r = 0; r < worldSize; ++r)
    std::printf(" r%d=%.4g", r,
                counters[kCountersPerRank * r + 3] /
                    static_cast<double>(std::max<int64_t>(1, o.steps)));
  std::printf("\nstep buffers peak per rank (MiB):");
  for (int r = 0; r < worldSize; ++r)
    std::printf(" r%d=%.3f", r,
                counters[kCountersPerRank * r + 4] / (1024.0 * 1024.0));
  // Beside the wall time: on a machine shared with other work, processor
  // time is what the step itself cost; the waits show what it waited for.
  if (o.steps > 1) {
    double after = static_cast<double>(o.steps - 1);
    std::printf("\ncompiled step processor time per rank (s/step after the "
                "first; all, and polling in waits):");
    for (int r = 0; r < worldSize; ++r)
      std::printf(" r%d=%.4f/%.4f", r,
                  counters[kCountersPerRank * r + 5] / after,
                  counters[kCountersPerRank * r + 6] / after);
    std::printf("\nwaiting for collectives per rank (wall s/step after the "
                "first):");
    for (int r = 0; r < worldSize; ++r)
      std::printf(" r%d=%.4f", r, counters[kCountersPerRank * r + 7] / after);
  }
  std::printf("\n");
  bool zeroRedundancy = matrices == expectMatrices &&
                        std::fabs(flops - expectFlops) <= 1e-6 * expectFlops;
  std::printf("zero redundancy: %.0f NS matrices and %.4g FLOPs over all "
              "ranks for %.0f matrices x %lld steps (expected %.0f and "
              "%.4g): %s\n",
              matrices, flops, expectMatrices / o.steps,
              static_cast<long long>(o.steps), expectMatrices, expectFlops,
              zeroRedundancy ? "ok" : "FAIL");
  if (!replicasAgree)
    std::printf("replicas: ranks holding the same element disagree: FAIL\n");
  pass &= zeroRedundancy && replicasAgree;
  // With a launcher compile: its time (once, for every rank) plus rank 0's
  // parse, lowering and object load.
  char buf[160];
  if (timing.launcherCompileSeconds > 0)
    std::snprintf(buf, sizeof buf,
                  "%.2f s (%.2f s once in the launcher%s, %.2f s on rank 0)",
                  timing.launcherCompileSeconds + timing.compileSeconds,
                  timing.launcherCompileSeconds,
                  timing.objectCached ? ", cached object" : "",
                  timing.compileSeconds);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", timing.compileSeconds);
  // After the first step (set-up paid): the figure to compare speeds by.
  char later[96] = "";
  if (o.steps > 1)
    std::snprintf(
        later, sizeof later, ", %.4f s/step after the first, fastest %.4f s",
        (timing.stepSeconds - timing.firstStepSeconds) / (o.steps - 1),
        timing.fastestLaterStepSeconds);
  std::printf("time: compile %s, compiled step %.4f s/step (rank 0%s), "
              "reference %.4f s/step\n",
              buf, timing.stepSeconds / o.steps, later,
              timing.referenceSeconds / o.steps);
  std::printf("%s: %zu parameters, %lld steps, %d ranks, rtol %g atol %g\n",
              pass ? "PASS" : "FAIL", spec.params.size(),
              static_cast<long long>(o.steps), worldSize, o.rtol, o.atol);
  std::fflush(stdout);
  return pass;
}

void run::dumpTensor(const Options &o, const StepSpec &spec, size_t i,
                     const std::string &what, const std::vector<float> &v) {
  std::string name = spec.params[i].name;
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-')
      c = '_';
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "p%03zu.", i);
  std::string err = writeNpy(o.dumpDir + "/" + prefix + name + "." + what +
                                 ".npy",
                             v, spec.params[i].shape);
  if (!err.empty())
    muon_rt_fail("dump", err.c_str());
}
