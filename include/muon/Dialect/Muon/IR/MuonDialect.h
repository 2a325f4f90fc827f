//===- MuonDialect.h - The muon dialect -------------------------*- C++ -*-===//

#ifndef MUON_DIALECT_MUON_IR_MUONDIALECT_H
#define MUON_DIALECT_MUON_IR_MUONDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"
#include "muon/Dialect/Dist/IR/DistDialect.h"

#include "muon/Dialect/Muon/IR/MuonDialect.h.inc"
#include "muon/Dialect/Muon/IR/MuonEnums.h.inc"

#endif // MUON_DIALECT_MUON_IR_MUONDIALECT_H
