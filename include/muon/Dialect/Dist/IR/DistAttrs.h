//===- DistAttrs.h - dist dialect attributes --------------------*- C++ -*-===//

#ifndef MUON_DIALECT_DIST_IR_DISTATTRS_H
#define MUON_DIALECT_DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "muon/Dialect/Dist/IR/DistDialect.h"

#define GET_ATTRDEF_CLASSES
#include "muon/Dialect/Dist/IR/DistAttrs.h.inc"

#endif // MUON_DIALECT_DIST_IR_DISTATTRS_H
