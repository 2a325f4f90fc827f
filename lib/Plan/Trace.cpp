//===- Trace.cpp - Timelines as Chrome trace JSON -------------------------===//

#include "muon/Plan/Trace.h"

#include <cstdio>

using namespace muon;
using namespace muon::plan;

namespace {
std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}
} // namespace

std::string plan::chromeTraceJson(const std::vector<TraceEvent> &events,
                                  int64_t numRanks, const std::string &title) {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": " +
                    quoted(title) + "},\n\"traceEvents\": [\n";
  bool first = true;
  auto add = [&](const std::string &event) {
    out += (first ? "  " : ",\n  ") + event;
    first = false;
  };
  for (int64_t r = 0; r < numRanks; ++r) {
    std::string pid = std::to_string(r);
    add("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid +
        ", \"args\": {\"name\": \"rank " + pid + "\"}}");
    add("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": " + pid +
        ", \"args\": {\"sort_index\": " + pid + "}}");
    add("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid +
        ", \"tid\": 0, \"args\": {\"name\": \"compute\"}}");
    add("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid +
        ", \"tid\": 1, \"args\": {\"name\": \"comm\"}}");
  }
  for (const TraceEvent &e : events)
    add("{\"ph\": \"X\", \"name\": " + quoted(e.name) + ", \"cat\": \"" +
        (e.lane == TraceEvent::Comm ? "comm" : "compute") + "\", \"pid\": " +
        std::to_string(e.rank) + ", \"tid\": " +
        std::to_string(static_cast<int>(e.lane)) + ", \"ts\": " +
        number(e.start * 1e6) + ", \"dur\": " +
        number((e.end - e.start) * 1e6) + "}");
  return out + "\n]}\n";
}
