//===- muon-lsp-server.cpp - LSP server for .mlir files using our dialects ===//
//
// Point an editor's MLIR extension at this binary (instead of
// mlir-lsp-server) to get diagnostics, hover and go-to-definition for IR that
// uses the dist dialect. See docs/editor-setup.md.
//
// The JSON and IR parsers recurse once per nesting level: deeply nested
// input must not overflow the stack and kill the server an editor relies
// on. The server therefore runs on a thread with a large stack (reserved
// address space; only the pages a deep input touches are used).
//
//===----------------------------------------------------------------------===//

#include "muon/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

#include <cstdio>
#include <pthread.h>

namespace {
struct Args {
  int argc;
  char **argv;
  int result = 1;
};

void *serve(void *p) {
  auto *args = static_cast<Args *>(p);
  mlir::DialectRegistry registry;
  muon::registerToolDialects(registry);
  args->result =
      mlir::failed(mlir::MlirLspServerMain(args->argc, args->argv, registry));
  return nullptr;
}
} // namespace

int main(int argc, char **argv) {
  constexpr size_t kStackBytes = size_t(4) << 30; // 4 GiB of address space
  Args args{argc, argv};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_t thread;
  if (pthread_attr_setstacksize(&attr, kStackBytes) != 0 ||
      pthread_create(&thread, &attr, serve, &args) != 0) {
    // No large stack to be had: serve on this one.
    pthread_attr_destroy(&attr);
    serve(&args);
    return args.result;
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
  return args.result;
}
