//===- Verdict.h - Reassembly, comparison, report, dump -------*- C++ -*-===//
//
// What a job concludes: every rank's shards reassembled on rank 0 (checking
// that replicas agree bitwise), compared with the single-device reference
// like numpy.allclose, the Newton-Schulz counters of every rank checked for
// zero redundancy, and the PASS/FAIL line. Also the --dump files.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_VERDICT_H
#define MUON_TOOLS_MUONRUN_VERDICT_H

#include "HostTensors.h"
#include "Options.h"
#include "StepSpec.h"

#include <string>
#include <vector>

namespace muon {
namespace run {

/// The full tensor of parameter `i` on rank 0, from the `local` shard of
/// every rank that holds it (collective over the world, through the
/// runtime's host helpers; other ranks get an empty vector). Clears `agree`
/// if two ranks holding the same element disagree.
std::vector<float> assembleOnRankZero(const StepSpec &spec, size_t i,
                                      const std::vector<float> &local,
                                      bool &agree);

struct Timing {
  double compileSeconds = 0, stepSeconds = 0, referenceSeconds = 0;
  /// The first step alone: it also pays one-time set-up (GPU context and
  /// libraries, communicators), which the later steps do not.
  double firstStepSeconds = 0;
  /// The fastest step after the first: on a machine shared with other
  /// work, the least disturbed one.
  double fastestLaterStepSeconds = 0;
  /// The launcher's one compile for every rank (0: each rank compiled).
  double launcherCompileSeconds = 0;
  /// The launcher took the compiled step from the cache.
  bool objectCached = false;
};

/// Counters each rank reports: NS calls, NS matrices, NS FLOPs, collective
/// calls (all since the first step), the step buffers' peak bytes, and over
/// the steps after the first: the compiled step's processor seconds (every
/// thread of the process), the processor seconds of it spent polling in
/// waits for collectives, and the wall seconds of those waits.
constexpr int kCountersPerRank = 8;

/// Rank 0: prints the per-parameter errors of `p`, `m` against the
/// reference `refP`, `refM`, the counters (kCountersPerRank per rank) with
/// the zero-redundancy check, the collective calls per step, timings and
/// the verdict line.
/// Returns whether everything passed.
bool printVerdict(const Options &o, const StepSpec &spec, const Tensors &p,
                  const Tensors &m, const Tensors &refP, const Tensors &refM,
                  const std::vector<double> &counters, bool replicasAgree,
                  const Timing &timing, int worldSize);

/// Writes `v` (full tensor of parameter `i`) as DIR/p<III>.<name>.<what>.npy.
void dumpTensor(const Options &o, const StepSpec &spec, size_t i,
                const std::string &what, const std::vector<float> &v);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_VERDICT_H
