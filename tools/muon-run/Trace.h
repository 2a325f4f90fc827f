//===- Trace.h - muon-run --trace: the measured timeline --------*- C++ -*-===//

#ifndef MUON_TOOLS_MUONRUN_TRACE_H
#define MUON_TOOLS_MUONRUN_TRACE_H

#include <cstdint>
#include <string>

namespace muon {
namespace run {

/// Starts recording on every rank, having removed any part of `path` an
/// earlier run left for `rank` (after a barrier, so that the ranks'
/// clocks start together).
void startTrace(const std::string &path, int64_t rank);

/// Stops recording, and writes every rank's events to `path` as Chrome
/// trace JSON (the format of muon-timeline): each rank writes its part next
/// to `path`, and rank 0 merges them. Collective over the job. Returns ""
/// or why the file could not be written (on rank 0).
std::string writeTrace(const std::string &path, int64_t rank, int64_t size);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_TRACE_H
