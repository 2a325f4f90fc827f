//===- StepSpec.h - What muon-run needs to know about a step --*- C++ -*-===//
//
// Read off the input module before lowering: the entry function, the
// parameters' global shapes and layouts, the mesh, and the hyperparameters
// the reference needs. Which argument / result is which parameter, gradient
// or momentum is read after lowering from the roles the compiler records.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_STEPSPEC_H
#define MUON_TOOLS_MUONRUN_STEPSPEC_H

#include "Options.h"
#include "Reference.h"
#include "muon/Conversion/Passes.h"
#include "muon/Layout/Layout.h"
#include "muon/Plan/ParamPlan.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace muon {
namespace run {

/// A tensor's role, numbered as the compiler's role table numbers it.
enum class Role {
  Param = MUON_RT_ROLE_PARAM,
  Grad = MUON_RT_ROLE_GRAD,
  Momentum = MUON_RT_ROLE_MOMENTUM,
  Lr = MUON_RT_ROLE_LR,
  WeightDecay = MUON_RT_ROLE_WEIGHT_DECAY
};

/// One entry-point argument or result: a tensor of a parameter, or (Lr,
/// WeightDecay) an f64 hyper-parameter (param -1, no layout).
struct TensorSpec {
  Role role = Role::Param;
  int64_t param = 0;
  layout::Layout layout;

  bool isScalar() const { return role == Role::Lr || role == Role::WeightDecay; }
};

struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  layout::Layout layout; ///< Of the parameter (and momentum).
  layout::Layout gradLayout;
  plan::ParamPlan plan;
};

struct StepSpec {
  std::string entry;
  layout::Mesh mesh;
  std::vector<ParamSpec> params;
  std::vector<TensorSpec> args, results;
  Hyper hyper;
};

/// Finds the entry (`entry`, or the only function with a muon.step),
/// checks muon-run's entry rules (docs/running.md) and describes the
/// parameters. Errors are emitted as diagnostics on the offending op.
/// `args` and `results` stay empty: readRoles fills them. The target decides
/// which Newton-Schulz precisions run (cpu: f32; cuda: f32 and bf16).
/// A step that reads lr or weight_decay as an operand takes its value from
/// `o.lr` / `o.weightDecay` (--lr, --weight-decay), which must then be set,
/// and only then.
mlir::FailureOr<StepSpec> describeStep(mlir::ModuleOp module,
                                       const Options &o);

/// Fills spec.args / spec.results from the role table the compiler
/// publishes for the entry (__muon_roles_<entry>, muon_runtime.h), read off
/// the lowered module. An argument with several roles is an error.
mlir::LogicalResult readRoles(mlir::ModuleOp lowered, StepSpec &spec);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_STEPSPEC_H
