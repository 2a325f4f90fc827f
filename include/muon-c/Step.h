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

#include <stdbool.h>
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

/// The same report as one JSON array with an object per step (the format
/// of `muon-report{format=json}`, docs/muon-dialect.md), in one callback
/// call. Modifies the module and fails like muonStepReport.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepReportJSON(
    MlirOperation module, MlirStringCallback callback, void *userData);

/// What muonStepReportWithOptions writes.
typedef struct MuonStepReportOptions {
  /// One JSON array with an object per step (muonStepReportJSON's format)
  /// instead of the text tables.
  bool json;
  /// Also estimate every schedule of each step's owners (naive, one at a
  /// time, rounds, rounds + prefetch 1 and 2) against the lower bounds, as
  /// `muon-report{schedules}` does: a "schedule estimates" table, or the
  /// JSON keys "schedule_estimates", "lower_bound_us" and
  /// "owner_path_bound_us".
  bool schedules;
  /// Make the rounds (and their estimates) as
  /// `muon-expand-step{ns-stack-bytes}` does: an owner's same-shape matrices
  /// stacked up to this many bytes (target=cuda compiles with 64 MiB); 0,
  /// one matrix per call. Negative is refused (a diagnostic on the module).
  int64_t nsStackBytes;
} MuonStepReportOptions;

/// The defaults: text, no schedule estimates, nsStackBytes 0 (what
/// muonStepReport writes).
MLIR_CAPI_EXPORTED MuonStepReportOptions muonStepReportOptionsDefault(void);

/// muonStepReport / muonStepReportJSON with `options`. Modifies the module
/// and fails like muonStepReport, and for a negative nsStackBytes.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepReportWithOptions(
    MlirOperation module, MuonStepReportOptions options,
    MlirStringCallback callback, void *userData);

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

/*--- What each rank stores -------------------------------------------------*/
/* For hosts that feed a compiled step: the global shapes of the parameters
 * and the piece of each tensor a rank passes to the entry (its local shard),
 * by the layout arithmetic the compiler types the shards with. The step's
 * operand types must verify (a parsed module does). Every query below fails
 * (-1, or failure, with a diagnostic on the step) for a step that does not
 * plan: one whose mesh cannot be found, or a global-view step (plain tensor
 * operands) before convert-shard-to-dist has given it layouts. */

/// The tensors of one parameter. The numbers are the runtime's roles
/// (MUON_RT_ROLE_* in muon_runtime.h).
typedef enum MuonTensorKind {
  MuonTensorParam = 0,
  MuonTensorGrad = 1,
  MuonTensorMomentum = 2
} MuonTensorKind;

/// The number of ranks of the step's mesh, or -1 when `step` is not a
/// `muon.step` or does not plan (a diagnostic says why).
MLIR_CAPI_EXPORTED int64_t muonStepNumRanks(MlirOperation step);

/// The number of dims of parameter `param`, or -1 (not a step, no such
/// parameter: a diagnostic says which).
MLIR_CAPI_EXPORTED intptr_t muonStepParamRank(MlirOperation step,
                                              intptr_t param);

/// The name of parameter `param` (its #muon.param name, else "param<i>"),
/// in one callback call. Fails like muonStepParamRank.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepParamName(
    MlirOperation step, intptr_t param, MlirStringCallback callback,
    void *userData);

/// Writes the global shape of parameter `param` (muonStepParamRank entries).
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepParamShape(MlirOperation step,
                                                        intptr_t param,
                                                        int64_t *shape);

/// Blocked Newton-Schulz (a `split = d [sizes]` annotation): the number of
/// blocks of parameter `param`, 0 when its matrices are orthogonalised
/// whole. With `dim` and `sizes` not NULL, writes the blocked tensor dim and
/// the block sizes (that many entries). Returns -1 on failure (a diagnostic
/// says why).
MLIR_CAPI_EXPORTED intptr_t muonStepParamBlocks(MlirOperation step,
                                                intptr_t param, int64_t *dim,
                                                int64_t *sizes);

/// Where tensor `kind` of parameter `param` lives on `rank` (0 <= rank <
/// muonStepNumRanks). Every array has muonStepParamRank entries.
///   - `localShape`, `localOffsets`: the block of the global tensor the rank
///     stores, offsets in global coordinates. When `*flattened` is set
///     (flat storage), only entry 0 is meaningful: the rank stores elements
///     [localOffsets[0], localOffsets[0] + localShape[0]) of the compute
///     block below, flattened row-major; the other entries are 0.
///   - `computeShape`, `computeOffsets`: the rank's compute block (equal to
///     the local block unless the storage is sharded further in memory).
/// A gradient with partial placements is a term of a sum: see
/// muonStepPartialTerm.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepLocalShard(
    MlirOperation step, intptr_t param, MuonTensorKind kind, int64_t rank,
    int64_t *localShape, int64_t *localOffsets, bool *flattened,
    int64_t *computeShape, int64_t *computeOffsets);

/// Whether `rank` holds (part of) parameter `param`: false outside the group
/// an `expert = axis[i]` or `stage = axis[i]` annotation names (there the
/// parameter does not exist; the rank passes tensors of the local shape,
/// and its results for that parameter carry no meaning), and for `whole`
/// storage away from the owner's coordinate (the rank stores nothing; its
/// local shape is empty). Returns -1 on error (a diagnostic says which),
/// else 0 or 1.
MLIR_CAPI_EXPORTED int muonStepRankHoldsParam(MlirOperation step,
                                              intptr_t param, int64_t rank);

/// For the gradient of parameter `param`: the rank's term among the terms
/// of its partial placements (the group index over the partial axes), the
/// number of terms, and the factor that turns the sum of the terms into the
/// gradient (1 / size for every `avg` axis). A gradient without partial
/// placements has one term (index 0) and factor 1.
MLIR_CAPI_EXPORTED MlirLogicalResult muonStepPartialTerm(
    MlirOperation step, intptr_t param, int64_t rank, int64_t *term,
    int64_t *terms, double *scale);

#ifdef __cplusplus
}
#endif

#endif /* MUON_C_STEP_H */
