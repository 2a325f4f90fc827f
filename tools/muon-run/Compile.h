//===- Compile.h - Parse, describe and lower a step module ----*- C++ -*-===//
//
// The one front half of muon-run, shared by the launcher (which lowers once
// to report a bad input before starting any rank) and every worker (which
// then JIT-compiles the result).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_COMPILE_H
#define MUON_TOOLS_MUONRUN_COMPILE_H

#include "Options.h"
#include "StepSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace muon {
namespace run {

/// Registers every dialect muon-run's input and pipeline can hold, plus the
/// translation to LLVM IR.
void registerRunDialects(mlir::DialectRegistry &registry);

/// Parses `o.input`, describes its step and lowers the module with
/// muon-to-llvm. With `printDiagnostics`, diagnostics are printed as
/// muon-opt prints them (`file:line:col: error: ...` and the source line);
/// otherwise they go to the context's handlers. Without `printRemarks`,
/// remarks and warnings are dropped (a rank whose launcher printed them
/// already).
mlir::FailureOr<StepSpec>
parseAndLower(mlir::MLIRContext &context, const Options &o,
              mlir::OwningOpRef<mlir::ModuleOp> &module,
              bool printDiagnostics = true, bool printRemarks = true);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_COMPILE_H
