//===- Dialects.cpp - C API: muon's dialects and passes -------------------===//

#include "muon-c/Dialects.h"

#include "muon/Dialect/Dist/IR/DistDialect.h"
#include "muon/Dialect/Muon/IR/MuonDialect.h"
#include "muon/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/DialectRegistry.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Dist, dist, muon::dist::DistDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Muon, muon, muon::optim::MuonDialect)

void muonRegisterAllDialects(MlirDialectRegistry registry) {
  muon::registerAllDialects(*unwrap(registry));
}

void muonRegisterAllPasses(void) {
  // The pass registry refuses a pipeline registered twice: register once.
  static const bool registered = (muon::registerAllPasses(), true);
  (void)registered;
}
