//===- MuonAttrs.h - muon dialect attributes --------------------*- C++ -*-===//

#ifndef MUON_DIALECT_MUON_IR_MUONATTRS_H
#define MUON_DIALECT_MUON_IR_MUONATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "muon/Dialect/Muon/IR/MuonDialect.h"

#define GET_ATTRDEF_CLASSES
#include "muon/Dialect/Muon/IR/MuonAttrs.h.inc"

#endif // MUON_DIALECT_MUON_IR_MUONATTRS_H
