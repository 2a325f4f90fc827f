//===- DistOps.h - dist dialect operations ----------------------*- C++ -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTOPS_H
#define MUON_DIALECT_DIST_IR_DISTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "muon/Dialect/Dist/IR/DistTypes.h"
#include "muon/Dialect/Dist/IR/DistInterfaces.h.inc"

#define GET_OP_CLASSES
#include "muon/Dialect/Dist/IR/DistOps.h.inc"

#endif // MUON_DIALECT_DIST_IR_DISTOPS_H
