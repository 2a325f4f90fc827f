//===- Trace.cpp - muon-run --trace: the measured timeline ----------------===//

#include "Trace.h"

#include "muon/Plan/Trace.h"
#include "muon/Runtime/muon_runtime.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace muon;
using namespace muon::run;

namespace {
std::string partPath(const std::string &path, int64_t rank) {
  return path + ".rank" + std::to_string(rank) + ".part";
}
} // namespace

void muon::run::startTrace(const std::string &path, int64_t rank) {
  // A part an earlier run left would pass for this run's when its rank
  // cannot write: each rank removes its own first.
  std::remove(partPath(path, rank).c_str());
  muon_rt_barrier();
  muon_rt_trace_start();
}

std::string muon::run::writeTrace(const std::string &path, int64_t rank,
                                  int64_t size) {
  muon_rt_trace_stop();
  // One line per event: lane, start, end, name (names have no newlines).
  std::string written;
  {
    std::ofstream part(partPath(path, rank));
    // The cause read now: errno means nothing after the loop below.
    std::string cause = part ? "" : std::strerror(errno);
    std::vector<char> name(256);
    for (int64_t i = 0, n = muon_rt_trace_count(); i < n; ++i) {
      int32_t lane = 0;
      double start = 0, end = 0;
      int64_t length = muon_rt_trace_event(i, &lane, &start, &end,
                                           name.data(), name.size());
      if (length >= static_cast<int64_t>(name.size())) {
        name.resize(length + 1);
        muon_rt_trace_event(i, &lane, &start, &end, name.data(), name.size());
      }
      char times[64];
      std::snprintf(times, sizeof times, "%d %.9f %.9f ", lane, start, end);
      part << times << name.data() << "\n";
    }
    part.flush();
    if (!part)
      written = "rank " + std::to_string(rank) + " cannot write " +
                partPath(path, rank) + ": " +
                (cause.empty() ? "the write failed" : cause);
  }
  muon_rt_barrier();
  if (!written.empty())
    return written;
  if (rank != 0)
    return "";
  std::vector<plan::TraceEvent> events;
  for (int64_t r = 0; r < size; ++r) {
    std::ifstream part(partPath(path, r));
    if (!part)
      return "cannot read " + partPath(path, r) + " (rank " +
             std::to_string(r) +
             " could not write it, or this rank does not see its "
             "directory: every rank must see the trace's directory)";
    std::string line;
    while (std::getline(part, line)) {
      std::istringstream in(line);
      plan::TraceEvent e;
      int lane = 0;
      in >> lane >> e.start >> e.end;
      in.get();
      std::getline(in, e.name);
      e.rank = r;
      e.lane = lane == 1 ? plan::TraceEvent::Comm : plan::TraceEvent::Compute;
      events.push_back(std::move(e));
    }
    part.close();
    std::remove(partPath(path, r).c_str());
  }
  std::ofstream out(path);
  out << plan::chromeTraceJson(events, size, "muon-run measured");
  if (!out)
    return "cannot write " + path + ": " + std::strerror(errno);
  return "";
}
