//===- Trace.cpp - Timelines as Chrome trace JSON -------------------------===//

#include "muon/Plan/Trace.h"

#include <cstdint>
#include <cstdio>

using namespace muon;
using namespace muon::plan;

namespace {
/// The length of the well-formed UTF-8 sequence at `s[i]`, or 0 (a stray
/// continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut
/// short).
size_t utf8Length(const std::string &s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80)
    return 1;
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size())
    return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

/// `s` as a JSON string. Names come from the IR and may hold any bytes:
/// those that are not UTF-8 become U+FFFD, as in muon-report's JSON, so
/// the trace stays valid JSON.
std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    size_t n = utf8Length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD"; // U+FFFD
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.append(s, i, n);
    }
    i += n;
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
