//===- MuonOps.h - muon dialect operations ----------------------*- C++ -*-===//

#ifndef MUON_DIALECT_MUON_IR_MUONOPS_H
#define MUON_DIALECT_MUON_IR_MUONOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "muon/Dialect/Dist/IR/DistTypes.h"
#include "muon/Dialect/Muon/IR/MuonAttrs.h"

#include <array>
#include <string>

#define GET_OP_CLASSES
#include "muon/Dialect/Muon/IR/MuonOps.h.inc"

namespace muon::optim {
/// The largest lr and weight_decay a step takes (2^60): the update's
/// constants (lr times the lr_adjust scale, 1 - lr * weight_decay) are then
/// well inside the f32 range the step computes in.
inline constexpr double kMaxLrOrWeightDecay = 0x1p60;
} // namespace muon::optim

#endif // MUON_DIALECT_MUON_IR_MUONOPS_H
