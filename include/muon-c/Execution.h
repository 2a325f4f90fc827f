/*===-- muon-c/Execution.h - C API: compiled steps ----------------*- C -*-===*\
|*                                                                            *|
|* JIT-compiles a lowered module (the output of the muon-to-llvm pipeline)    *|
|* and calls its entry on the host's buffers. The code calls the runtime     *|
|* (libmuon_runtime.so), which must be loaded in the process or named in the *|
|* options. See docs/c-api.md.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MUON_C_EXECUTION_H
#define MUON_C_EXECUTION_H

#include <stdbool.h>
#include <stdint.h>

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled entry point and the code it owns.
typedef struct MuonExecutable {
  void *ptr;
} MuonExecutable;

typedef struct MuonExecutableOptions {
  /// LLVM optimisation level, 0 to 3.
  int optLevel;
  /// Shared libraries whose symbols the code may call besides those of the
  /// process: e.g. the runtime when the host loaded it privately (a Python
  /// extension's dependencies are not global). NULL when none.
  intptr_t numSharedLibraries;
  const MlirStringRef *sharedLibraries;
} MuonExecutableOptions;

/// The defaults: optLevel 2, no extra libraries.
MLIR_CAPI_EXPORTED MuonExecutableOptions muonExecutableOptionsDefault(void);

/// Compiles `lowered` (a builtin.module in the LLVM dialect, as muon-to-llvm
/// leaves it) and looks up the C interface of function `entry`
/// (_mlir_ciface_<entry>) and its role table (__muon_roles_<entry>). On
/// failure returns a null executable and calls `errorCallback` (when not
/// NULL) once with the reason.
MLIR_CAPI_EXPORTED MuonExecutable
muonExecutableCreate(MlirModule lowered, MlirStringRef entry,
                     MuonExecutableOptions options,
                     MlirStringCallback errorCallback, void *userData);

static inline bool muonExecutableIsNull(MuonExecutable e) { return !e.ptr; }

/// Frees the code. Null executables are ignored.
MLIR_CAPI_EXPORTED void muonExecutableDestroy(MuonExecutable e);

/// The entry's role table as the compiler published it (the int64 values
/// described at MUON_RT_ROLES_VERSION in muon_runtime.h: version, number of
/// arguments and results, then per tensor its (role, step, param) triples),
/// and its length in `*size`. Valid while `e` lives. A null executable has
/// none: null, and 0 in `*size`.
MLIR_CAPI_EXPORTED const int64_t *muonExecutableRoleTable(MuonExecutable e,
                                                          intptr_t *size);

/// One argument of the entry: a contiguous row-major f32 buffer with `rank`
/// dims of sizes `shape[0..rank)` (a tensor, or a result's out-buffer), or
/// when `isScalar` an f64 value (a hyper-parameter the step reads at run
/// time: roles MUON_RT_ROLE_LR and MUON_RT_ROLE_WEIGHT_DECAY).
typedef struct MuonArgument {
  float *data;
  intptr_t rank;
  const int64_t *shape;
  bool isScalar;
  double scalar;
} MuonArgument;

static inline MuonArgument muonArgumentTensor(float *data, intptr_t rank,
                                              const int64_t *shape) {
  MuonArgument a = {data, rank, shape, false, 0.0};
  return a;
}

static inline MuonArgument muonArgumentScalar(double value) {
  MuonArgument a = {0, 0, 0, true, value};
  return a;
}

/// Calls the entry with `numArguments` arguments: the entry's arguments in
/// order, then one out-buffer per result; the count must be the role
/// table's arguments plus results, and an argument must be a scalar
/// exactly where the table has a scalar role. A tensor's `rank` must be
/// its type's in the entry (the code reads the descriptor as that type). The code checks each tensor
/// argument's shape against what the rank must hold before any collective;
/// a mismatch, like every runtime error, prints `muon-rt: error: rank R:
/// ...` and ends the job (MPI_Abort): check shapes before calling when the
/// process must survive. Out-buffers must be memory of their own: the step
/// writes a result while it still reads its arguments, so a result that
/// overlaps an argument or another result is refused. Tensors are host
/// memory for a step lowered with target=cpu, and device memory of the GPU
/// the runtime uses (local rank mod device count) for target=cuda, whose
/// step runs its kernels on the legacy default stream and waits for them
/// before returning. Fails, calling
/// `errorCallback`, when `e` is null, the count or a scalar's place is
/// wrong or buffers overlap (nothing runs then).
MLIR_CAPI_EXPORTED MlirLogicalResult muonExecutableInvoke(
    MuonExecutable e, intptr_t numArguments, const MuonArgument *arguments,
    MlirStringCallback errorCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* MUON_C_EXECUTION_H */
