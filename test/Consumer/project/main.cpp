//===- main.cpp - A host compiler linking the installed muon libraries ----===//
//
// Registers the dist dialect through muon's C++ entry point, parses a file,
// and prints every dist.to_local's local type as the layout API computes it.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: muon-consumer FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  muon::registerAllDialects(registry);
  registry.insert<mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 1;
  module->walk([&](muon::dist::ToLocalOp op) {
    llvm::outs() << "local: "
                 << muon::dist::localTensorType(op.getInput().getType(), op)
                 << "\n";
  });
  return 0;
}
