//===- DistDialect.cpp - The dist dialect ---------------------------------===//

#include "muon/Dialect/Dist/IR/DistDialect.h"
#include "muon/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace muon::dist;

#include "muon/Dialect/Dist/IR/DistDialect.cpp.inc"
#include "muon/Dialect/Dist/IR/DistEnums.cpp.inc"
#include "muon/Dialect/Dist/IR/DistInterfaces.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "muon/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}
