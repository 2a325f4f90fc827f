//===- StepRoles.h - Which entry argument is which step operand -*- C++ -*-===//

#ifndef MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPROLES_H
#define MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPROLES_H

#include "muon/Dialect/Muon/IR/MuonOps.h"

namespace muon {
namespace optim {

/// Records on the enclosing function which of its arguments and results are
/// which step operand / result (muon_arg_roles / muon_result_roles: the
/// entry contract a host reads, docs/muon-dialect.md, "Argument roles").
/// Must run before the step is expanded, while its operands and results are
/// still visible. `stepIndex` numbers the steps of the function.
void recordRoles(StepOp step, int64_t stepIndex);

} // namespace optim
} // namespace muon

#endif // MUON_LIB_DIALECT_MUON_TRANSFORMS_STEPROLES_H
