//===- muon-lsp-server.cpp - LSP server for .mlir files using our dialects ===//
//
// Point an editor's MLIR extension at this binary (instead of
// mlir-lsp-server) to get diagnostics, hover and go-to-definition for IR that
// uses the dist dialect. See docs/editor-setup.md.
//
//===----------------------------------------------------------------------===//

#include "muon/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  muon::registerToolDialects(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}
