//===- Faults.h - Deliberate faults for the error-handling tests -*- C++ -*-===//

#ifndef MUON_TOOLS_MUONRUN_FAULTS_H
#define MUON_TOOLS_MUONRUN_FAULTS_H

#include "Options.h"

#include <cstdint>
#include <vector>

namespace muon {
namespace run {

/// --inject-fault=shard-shape: this rank passes argument #0 with one more
/// row than expected at step `t` (the entry's shard check stops the job
/// before the buffer is read past its end).
void injectShapeFault(const Fault &f, int64_t rank, int64_t t,
                      std::vector<std::vector<int64_t>> &argShapes);

/// --inject-fault=kill / hang: this rank dies (SIGKILL) or hangs before
/// step `t`.
void injectProcessFault(const Fault &f, int64_t rank, int64_t t);

/// --inject-fault=corrupt: this rank perturbs its first parameter element
/// by 1e-3 after step `t` (the check must then fail).
void injectCorruption(const Fault &f, int64_t rank, int64_t t,
                      std::vector<std::vector<float>> &localParams);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_FAULTS_H
