//===- main.cpp - A host compiler linking the installed muon libraries ----===//
//
// Registers only muon's entry points (muon::registerAllDialects: no global
// pass registration, no upstream "register everything"), then either
//   muon-consumer FILE.mlir          prints every dist.to_local's local type
//                                    as the layout API computes it, or
//   muon-consumer --lower FILE.mlir  builds the muon-to-llvm pipeline in C++
//                                    and prints the lowered module.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  bool lower = argc == 3 && llvm::StringRef(argv[1]) == "--lower";
  if (argc != 2 && !lower) {
    llvm::errs() << "usage: muon-consumer [--lower] FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  muon::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[argc - 1], &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 1;
  if (lower) {
    mlir::PassManager pm(&context);
    muon::MuonToLLVMOptions options;
    options.assignOwners = true;
    muon::buildMuonToLLVMPipeline(pm, options);
    if (mlir::failed(pm.run(*module)))
      return 1;
    module->print(llvm::outs());
    return 0;
  }
  module->walk([&](muon::dist::ToLocalOp op) {
    llvm::outs() << "local: "
                 << muon::dist::localTensorType(op.getInput().getType(), op)
                 << "\n";
  });
  return 0;
}
