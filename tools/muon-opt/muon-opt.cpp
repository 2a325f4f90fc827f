//===- muon-opt.cpp - mlir-opt for the dist and muon dialects -------------===//
//
// Parses, verifies and transforms IR that uses the project's dialects, with
// every upstream dialect and pass available around them.
//
//===----------------------------------------------------------------------===//

#include "muon/InitAll.h"
#include "muon/Support/LargeStack.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  muon::registerToolDialects(registry);
  muon::registerToolPasses();
  // Deeply nested input must not overflow the stack (LargeStack.h).
  return muon::runOnLargeStack("muon-opt", [&] {
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        argc, argv,
        "muon-opt: compiler driver for the distributed Muon optimizer step.\n"
        "Dialects: dist (tensors on a device mesh), muon (the optimizer step)\n"
        "plus all of upstream MLIR. Start with --muon-to-llvm (the whole\n"
        "lowering) or the individual passes below.\n"
        "Docs: docs/architecture.md, docs/muon-dialect.md, "
        "docs/dist-dialect.md\n",
        registry));
  });
}
