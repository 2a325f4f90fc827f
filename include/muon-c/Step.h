/*===-- muon-c/Step.h - C API: querying muon.step ops -------------*- C -*-===*\
|*                                                                            *|
|* Finds the `muon.step` ops of a module, prints their cost report and the    *|
|* collective plan of one parameter. See docs/c-api.md.                       *|
|*                                                                            *|
|* Errors are MLIR diagnostics emitted on the operation involved: attach a    *|
|* handler with mlirContextAttachDiagnosticHandler to capture them (without   *|
|* one, MLIR prints errors to stderr).                                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MUON_C_STEP_H
#define MUON_C_STEP_H

#include <stdint.h>

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The number of `muon.step` ops nested in `module` (any operation; usually
/// a builtin.module's operation, mlirModuleGetOperation).
MLIR_CAPI_EXPORTED intptr_t muonModuleNumSteps(MlirOperation module);

/// The `index`-th `muon.step` op nested in `module`, in walk order (program
/// order for steps that are not nested in one another). A null operation
/// (mlirOperationIsNull) for an index out of range.
MLIR_CAPI_EXPORTED MlirOperation muonModuleGetStep(MlirOperation module,
                                                   intptr_t index);

/// Writes the muon-report tables of every step in `module` (a builtin.module):
/// per parameter its owner, Newton-Schulz FLOPs, gathered/scattered bytes and
/// gather chain; per rank its load and traffic; the balance. The text goes to
/// `callback` with `userData` (in one or more pieces; nothing for a module
/// without steps).
///
/// MODIFIES `module` IN PLACE: steps without `owners` get them (the
/// muon-assign-owners pass, with each step's own strategy); steps that
/// already have owners keep them. Fails, with diagnostics on the module or
/// the step, for an operation that is not a builtin.module or a step that
/// does not plan; then the callback is not called.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepReport(MlirOperation module,
                                                    MlirStringCallback callback,
                                                    void *userData);

/// The number of parameters of `step`, or -1 when `step` is not a
/// `muon.step`.
MLIR_CAPI_EXPORTED intptr_t muonStepNumParams(MlirOperation step);

/// The collective plan of parameter `param` of `step` for its owner, one
/// step per callback call, in program order, without newline, e.g.
/// "gather tp dim 1 root 0", "newton_schulz holders [tp,dp]" (the format of
/// muon::plan::describe). `step` must have owners (run muonStepReport, the
/// muon-assign-owners pass or the pipeline's first pass, or give them in the
/// IR). Fails, with a diagnostic on the operation and no callback call, for a
/// non-step operation, a parameter index out of range, missing owners or a
/// step that does not plan.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepPlan(MlirOperation step,
                                                  intptr_t param,
                                                  MlirStringCallback callback,
                                                  void *userData);

#ifdef __cplusplus
}
#endif

#endif /* MUON_C_STEP_H */
