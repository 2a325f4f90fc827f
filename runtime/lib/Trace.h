//===- Trace.h - What a rank did when, for muon-run --trace ----*- C++ -*-===//
//
// Off by default (one branch per call). Hosts switch it on with
// muon_rt_trace_start() after a barrier, so every rank's clock starts at
// about the same moment, and read the events back with muon_rt_trace_event.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_TRACE_H
#define MUON_RUNTIME_TRACE_H

#include <string>

namespace muon {
namespace rt {

enum class TraceLane { Compute = 0, Comm = 1 };

bool tracing();
/// Seconds since muon_rt_trace_start (steady clock).
double traceNow();
void traceEvent(TraceLane lane, std::string name, double start, double end);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_TRACE_H
