//===- InitAll.cpp - Register the project's dialects and passes -----------===//

#include "muon/InitAll.h"
#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Dist/IR/DistDialect.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"
#include "muon/Dialect/Muon/IR/MuonDialect.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

void muon::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<muon::dist::DistDialect, muon::optim::MuonDialect>();
}

void muon::registerAllPasses() {
  muon::dist::registerDistPasses();
  muon::optim::registerMuonPasses();
  muon::registerConversionPasses();
  muon::registerMuonToLLVMPipeline();
}

void muon::registerToolDialects(mlir::DialectRegistry &registry) {
  muon::registerAllDialects(registry);
  // Users compile whole optimizer graphs: func, arith, tensor, linalg, scf,
  // memref, gpu, shard, bufferization, llvm... all of upstream is one call
  // away in libMLIR.so, so we do not second-guess which they need.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
}

void muon::registerToolPasses() {
  muon::registerAllPasses();
  mlir::registerAllPasses();
}
