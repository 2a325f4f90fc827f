//===- MessageFilter.h - Keep messages that end the server out -*- C++ -*-===//
//
// Upstream's LSP transport stops serving (the process exits) on a
// well-framed message that is valid JSON but not a JSON-RPC 2.0 object: a
// bare array or number, an object without "jsonrpc": "2.0", a response
// with no id. One stray message from a buggy client must not take the
// server an editor relies on down with it. The filter sits between the
// real stdin and the transport: it reads each message in the same framing
// the transport uses, drops (and logs) the ones that would end the server,
// and passes everything else on byte for byte.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONLSPSERVER_MESSAGEFILTER_H
#define MUON_TOOLS_MUONLSPSERVER_MESSAGEFILTER_H

#include "llvm/ADT/StringRef.h"

#include <cstdio>
#include <string>

namespace muon {
namespace lsp {

/// Why upstream's transport would stop on `json`, or "" when it would
/// handle it (including text that does not parse: it logs and goes on).
std::string whyMessageEndsServer(llvm::StringRef json);

/// How messages are framed: LSP headers, or the lit tests' "// -----".
enum class Framing { Standard, Delimited };

/// Copies messages from `in` to `out` until `in` ends, dropping those
/// whyMessageEndsServer names (each logged to stderr). Closes `out` at the
/// end so the reader sees end of input.
void filterMessages(std::FILE *in, std::FILE *out, Framing framing);

} // namespace lsp
} // namespace muon

#endif // MUON_TOOLS_MUONLSPSERVER_MESSAGEFILTER_H
