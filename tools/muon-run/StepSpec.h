//===- StepSpec.h - What muon-run needs to know about a step --*- C++ -*-===//
//
// Read off the input module before lowering: the entry function, which of
// its arguments / results is which parameter, gradient or momentum, their
// global shapes and layouts, the mesh, and the hyperparameters the
// reference needs.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_STEPSPEC_H
#define MUON_TOOLS_MUONRUN_STEPSPEC_H

#include "Reference.h"
#include "muon/Layout/Layout.h"
#include "muon/Plan/ParamPlan.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace muon {
namespace run {

enum class Role { Param = 0, Momentum = 1, Grad = 2 };

/// One entry-point argument or result.
struct TensorSpec {
  Role role = Role::Param;
  int64_t param = 0;
  layout::Layout layout;
};

struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  layout::Layout layout; ///< Of the parameter (and momentum).
  plan::ParamPlan plan;
};

struct StepSpec {
  std::string entry;
  layout::Mesh mesh;
  std::vector<ParamSpec> params;
  std::vector<TensorSpec> args, results;
  Hyper hyper;
};

/// Finds the entry (`entry`, or the only function with a muon.step) and
/// describes it. Errors are emitted as diagnostics on the offending op.
mlir::FailureOr<StepSpec> describeStep(mlir::ModuleOp module,
                                       llvm::StringRef entry);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_STEPSPEC_H
