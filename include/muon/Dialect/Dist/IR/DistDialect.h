//===- DistDialect.h - The dist dialect -------------------------*- C++ -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTDIALECT_H
#define MUON_DIALECT_DIST_IR_DISTDIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Mutex.h"

#include "muon/Dialect/Dist/IR/DistDialect.h.inc"
#include "muon/Dialect/Dist/IR/DistEnums.h.inc"

#endif // MUON_DIALECT_DIST_IR_DISTDIALECT_H
