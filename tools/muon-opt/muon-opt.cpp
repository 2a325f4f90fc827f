//===- muon-opt.cpp - mlir-opt for the dist and muon dialects -------------===//
//
// Parses, verifies and transforms IR that uses the project's dialects, with
// every upstream dialect and pass available around them.
//
//===----------------------------------------------------------------------===//

#include "muon/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  muon::registerToolDialects(registry);
  muon::registerToolPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "muon-opt: compiler driver for the distributed Muon optimizer step.\n"
      "Dialects: dist (tensors on a device mesh) plus all of upstream MLIR.\n"
      "Docs: docs/dist-dialect.md\n",
      registry));
}
