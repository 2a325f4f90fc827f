//===- MessageFilter.cpp - Keep messages that end the server out ----------===//

#include "MessageFilter.h"

#include "llvm/Support/JSON.h"

#include <cstring>

using namespace muon::lsp;

std::string muon::lsp::whyMessageEndsServer(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> doc = llvm::json::parse(json);
  if (!doc) {
    llvm::consumeError(doc.takeError());
    return "";
  }
  // The transport's rules (JSONTransport::handleMessage): an object with
  // "jsonrpc": "2.0" that is a call or notification (a string "method") or
  // a response (an "id").
  const llvm::json::Object *object = doc->getAsObject();
  if (!object)
    return "it is not a JSON object";
  if (object->getString("jsonrpc") != std::optional<llvm::StringRef>("2.0"))
    return "it has no \"jsonrpc\": \"2.0\" member";
  if (!object->getString("method") && !object->get("id"))
    return "it has neither a string \"method\" nor an \"id\"";
  return "";
}

namespace {

/// One line including its '\n' (or what is left at end of input).
bool readLine(std::FILE *in, std::string &line) {
  line.clear();
  int c;
  while ((c = std::fgetc(in)) != EOF) {
    line.push_back(static_cast<char>(c));
    if (c == '\n')
      return true;
  }
  return !line.empty();
}

llvm::StringRef trimmed(const std::string &s) {
  return llvm::StringRef(s).trim();
}

/// Reads one message: `raw` is its exact bytes (headers included), `json`
/// the body the transport would parse. False at end of input.
bool readMessage(std::FILE *in, Framing framing, std::string &raw,
                 std::string &json) {
  raw.clear();
  json.clear();
  std::string line;
  if (framing == Framing::Delimited) {
    // As the transport does: lines starting with "//" are dropped, a line
    // "// -----" ends the message.
    bool any = false;
    while (readLine(in, line)) {
      any = true;
      raw += line;
      llvm::StringRef t = trimmed(line);
      if (t.starts_with("//")) {
        if (t == "// -----")
          return true;
        continue;
      }
      json += line;
    }
    return any;
  }
  // Headers up to an empty line; Content-Length is the only one that counts.
  unsigned long long length = 0;
  bool any = false;
  while (readLine(in, line)) {
    any = true;
    raw += line;
    llvm::StringRef t = line;
    if (t.consume_front("Content-Length: "))
      llvm::getAsUnsignedInteger(t.trim(), 0, length);
    else if (trimmed(line).empty())
      break;
  }
  if (!any)
    return false;
  // The transport skips a message with no length or an absurd one without
  // reading its body; so do we (the bytes go on unchanged).
  if (length == 0 || length > (1ull << 30))
    return true;
  json.resize(length);
  size_t got = std::fread(json.data(), 1, length, in);
  json.resize(got);
  raw += json;
  return true;
}

} // namespace

void muon::lsp::filterMessages(std::FILE *in, std::FILE *out,
                               Framing framing) {
  std::string raw, json;
  while (readMessage(in, framing, raw, json)) {
    if (std::string why = whyMessageEndsServer(json); !why.empty()) {
      std::fprintf(stderr,
                   "muon-lsp-server: ignoring a message (%zu bytes) the "
                   "protocol handler would stop on: %s\n",
                   json.size(), why.c_str());
      continue;
    }
    std::fwrite(raw.data(), 1, raw.size(), out);
    std::fflush(out);
  }
  std::fclose(out);
}
