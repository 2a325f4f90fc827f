//===- DistTypes.h - dist dialect types -------------------------*- C++ -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTTYPES_H
#define MUON_DIALECT_DIST_IR_DISTTYPES_H

#include "mlir/IR/Types.h"
#include "muon/Dialect/Dist/IR/DistAttrs.h"

#define GET_TYPEDEF_CLASSES
#include "muon/Dialect/Dist/IR/DistTypes.h.inc"

#endif // MUON_DIALECT_DIST_IR_DISTTYPES_H
