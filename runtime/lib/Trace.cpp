//===- Trace.cpp - What a rank did when, for muon-run --trace -------------===//

#include "Trace.h"

#include "muon/Runtime/muon_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace muon::rt;

namespace {
struct Event {
  TraceLane lane;
  std::string name;
  double start, end;
};
bool on = false;
std::chrono::steady_clock::time_point origin;
std::vector<Event> events;
} // namespace

bool muon::rt::tracing() { return on; }

double muon::rt::traceNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       origin)
      .count();
}

void muon::rt::traceEvent(TraceLane lane, std::string name, double start,
                          double end) {
  if (on)
    events.push_back({lane, std::move(name), start, end});
}

extern "C" {
void muon_rt_trace_start(void) {
  events.clear();
  origin = std::chrono::steady_clock::now();
  on = true;
}

void muon_rt_trace_stop(void) { on = false; }

int64_t muon_rt_trace_count(void) {
  return static_cast<int64_t>(events.size());
}

int64_t muon_rt_trace_event(int64_t index, int32_t *lane, double *start,
                            double *end, char *name, int64_t capacity) {
  if (index < 0 || index >= static_cast<int64_t>(events.size()))
    return -1;
  const Event &e = events[index];
  if (lane)
    *lane = static_cast<int32_t>(e.lane);
  if (start)
    *start = e.start;
  if (end)
    *end = e.end;
  if (name && capacity > 0) {
    size_t n = std::min<size_t>(e.name.size(), capacity - 1);
    std::memcpy(name, e.name.data(), n);
    name[n] = '\0';
  }
  return static_cast<int64_t>(e.name.size());
}

void muon_rt_trace_mark(int32_t lane, const char *name, double start,
                        double end) {
  traceEvent(lane == 1 ? TraceLane::Comm : TraceLane::Compute,
             name ? name : "", start, end);
}

double muon_rt_trace_now(void) { return traceNow(); }
}
