//===- MuonDialect.cpp - The muon dialect ---------------------------------===//

#include "muon/Dialect/Muon/IR/MuonDialect.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace muon::optim;

#include "muon/Dialect/Muon/IR/MuonDialect.cpp.inc"
#include "muon/Dialect/Muon/IR/MuonEnums.cpp.inc"

void MuonDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "muon/Dialect/Muon/IR/MuonOps.cpp.inc"
      >();
  registerAttributes();
}
