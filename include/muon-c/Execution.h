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
/// and its length in `*size`. Valid while `e` lives.
MLIR_CAPI_EXPORTED const int64_t *muonExecutableRoleTable(MuonExecutable e,
                                                          intptr_t *size);

/// Calls the entry: `numBuffers` contiguous row-major f32 buffers, the
/// arguments then one out-buffer per result, buffer i with `ranks[i]` dims
/// of sizes `shapes[i][0..ranks[i])`. The number of buffers must be the
/// table's arguments plus results. The code checks each argument's shape
/// against what the rank must hold before any collective; a mismatch, like
/// every runtime error, prints `muon-rt: error: rank R: ...` and ends the
/// job (MPI_Abort): check shapes before calling when the process must
/// survive. Fails, calling `errorCallback`, only when the buffer count is
/// wrong.
MLIR_CAPI_EXPORTED MlirLogicalResult muonExecutableInvoke(
    MuonExecutable e, intptr_t numBuffers, float *const *data,
    const intptr_t *ranks, const int64_t *const *shapes,
    MlirStringCallback errorCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* MUON_C_EXECUTION_H */
