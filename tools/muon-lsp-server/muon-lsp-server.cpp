//===- muon-lsp-server.cpp - LSP server for .mlir files using our dialects ===//
//
// Point an editor's MLIR extension at this binary (instead of
// mlir-lsp-server) to get diagnostics, hover and go-to-definition for IR that
// uses the dist dialect. See docs/editor-setup.md.
//
// Two things upstream's server does not survive are kept away from it:
// - The JSON and IR parsers recurse once per nesting level: deeply nested
//   input must not overflow the stack. The server (and the message filter,
//   which parses too) run on threads with a large stack
//   (muon/Support/LargeStack.h).
// - A well-framed message that is not a JSON-RPC object ends upstream's
//   transport: a filter between stdin and the transport drops such messages
//   (MessageFilter.h).
//
//===----------------------------------------------------------------------===//

#include "MessageFilter.h"

#include "muon/InitAll.h"
#include "muon/Support/LargeStack.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"
#include "llvm/ADT/StringRef.h"

#include <cstdio>
#include <pthread.h>
#include <unistd.h>

namespace {
int serve(int argc, char **argv) {
  mlir::DialectRegistry registry;
  muon::registerToolDialects(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}

struct Filter {
  std::FILE *in, *out;
  muon::lsp::Framing framing;
};

void *filter(void *p) {
  auto *f = static_cast<Filter *>(p);
  muon::lsp::filterMessages(f->in, f->out, f->framing);
  return nullptr;
}

/// The framing the server will read (its -lit-test and -input-style
/// options), so the filter splits messages exactly as the transport does.
muon::lsp::Framing framingOf(int argc, char **argv) {
  auto framing = muon::lsp::Framing::Standard;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = llvm::StringRef(argv[i]).ltrim('-');
    if (a == "lit-test" || a == "input-style=delimited" ||
        (a == "input-style" && i + 1 < argc &&
         llvm::StringRef(argv[i + 1]) == "delimited"))
      framing = muon::lsp::Framing::Delimited;
    else if (a == "input-style=standard" ||
             (a == "input-style" && i + 1 < argc &&
              llvm::StringRef(argv[i + 1]) == "standard"))
      framing = muon::lsp::Framing::Standard;
  }
  return framing;
}

/// Puts the filter between the real stdin and the transport (which reads
/// fd 0 through `stdin`). Without a pipe or a thread the server reads
/// stdin directly, as upstream's does.
void interposeFilter(Filter &f, int argc, char **argv) {
  int fds[2];
  int original = dup(STDIN_FILENO);
  if (original < 0 || pipe(fds) != 0)
    return;
  f = Filter{fdopen(original, "r"), fdopen(fds[1], "w"),
             framingOf(argc, argv)};
  pthread_t thread;
  if (!f.in || !f.out ||
      !muon::startLargeStackThread("muon-lsp-server", filter, &f, thread)) {
    close(fds[0]);
    return;
  }
  pthread_detach(thread);
  dup2(fds[0], STDIN_FILENO);
  close(fds[0]);
}
} // namespace

int main(int argc, char **argv) {
  bool help = false, version = false;
  for (int i = 1; i < argc; ++i) {
    help |= llvm::StringRef(argv[i]).ltrim('-').starts_with("help");
    version |= llvm::StringRef(argv[i]).ltrim('-') == "version";
  }
  static Filter f;
  if (!help && !version)
    interposeFilter(f, argc, argv);
  if (help) {
    // Upstream's options follow under its own overview line.
    std::printf(
        "muon-lsp-server: MLIR's language server with the dist and muon "
        "dialects and every upstream dialect: diagnostics, hover and "
        "go-to-definition for .mlir files. Point the editor's MLIR extension "
        "at this binary (docs/editor-setup.md). It reads JSON-RPC on stdin "
        "and answers on stdout; messages that are not JSON-RPC objects are "
        "dropped with a line on stderr instead of stopping the server.\n\n");
    std::fflush(stdout);
  }

  return muon::runOnLargeStack("muon-lsp-server",
                               [&] { return serve(argc, argv); });
}
