//===- Trace.h - Timelines as Chrome trace JSON ------------------*- C++ -*-===//
//
// One format for the estimated timeline (muon-timeline, from the schedule
// simulation) and the measured one (muon-run --trace, from the runtime's
// records), so the two open side by side in Perfetto or chrome://tracing:
// one process per rank, with a "compute" and a "comm" thread.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_PLAN_TRACE_H
#define MUON_PLAN_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace muon {
namespace plan {

struct TraceEvent {
  enum Lane { Compute = 0, Comm = 1 };
  int64_t rank = 0;
  Lane lane = Compute;
  double start = 0, end = 0; // seconds
  std::string name;
};

/// The events as Chrome trace JSON ("X" events in microseconds, process and
/// thread names as metadata). `title` names the trace in its metadata.
std::string chromeTraceJson(const std::vector<TraceEvent> &events,
                            int64_t numRanks, const std::string &title);

} // namespace plan
} // namespace muon

#endif // MUON_PLAN_TRACE_H
