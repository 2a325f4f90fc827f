//===- Options.h - muon-run's command line --------------------*- C++ -*-===//

#ifndef MUON_TOOLS_MUONRUN_OPTIONS_H
#define MUON_TOOLS_MUONRUN_OPTIONS_H

#include "muon/Conversion/Passes.h"

#include <cstdint>
#include <optional>
#include <string>

namespace muon {
namespace run {

/// A deliberate fault, for the tests of error handling.
struct Fault {
  enum Kind { None, Kill, Hang, ShardShape, Corrupt } kind = None;
  int64_t rank = -1, step = 0;
};

struct Options {
  std::string input;
  std::string entry;
  int64_t steps = 3;
  uint64_t seed = 1;
  double rtol = 1e-5, atol = 1e-5;
  std::string dumpDir;
  std::string traceFile;
  int optLevel = 2;
  Target target = Target::Cpu;
  bool batchCollectives = true; // muon-expand-step{batch-collectives}
  int64_t nsStackBytes = -1;     // muon-to-llvm{ns-stack-bytes}
  int64_t maxPrefetchBytes = 0;  // muon-to-llvm{max-prefetch-bytes}
  bool placeDeallocations = true; // muon-to-llvm{place-deallocations}
  /// Values for a step that reads lr / weight_decay as operands.
  std::optional<double> lr, weightDecay;
  Fault fault;
};

/// Runs the step on this process's rank of an MPI job. Returns the exit code.
int runWorker(const Options &options, int *argc, char ***argv);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_OPTIONS_H
