/*===-- muon-c/Dialects.h - C API: muon's dialects and passes -----*- C -*-===*\
|*                                                                            *|
|* Registration of the project's dialects (`dist`, `muon`) and passes for a   *|
|* host that uses MLIR through its C API. See docs/c-api.md.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MUON_C_DIALECTS_H
#define MUON_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__dist__(): the `dist` dialect alone (meshes,
/// distributed tensor types, collectives).
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Dist, dist);

/// mlirGetDialectHandle__muon__(): the `muon` dialect alone (`muon.step`).
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Muon, muon);

/// Inserts into `registry` the project's dialects plus the upstream dialects
/// and interface models the muon-to-llvm pipeline needs (what
/// muon::registerAllDialects does). Call it before creating the context:
/// interface models must be in the registry when the context is made.
/// This is what a host needs; it does not call mlirRegisterAllDialects.
MLIR_CAPI_EXPORTED void muonRegisterAllDialects(MlirDialectRegistry registry);

/// Registers the project's passes and the `muon-to-llvm` pipeline with the
/// global pass registry (muon::registerAllPasses), for textual pipelines
/// (mlirParsePassPipeline / mlirOpPassManagerAddPipeline). Not needed for
/// muonBuildMuonToLLVMPipeline. Calling it again does nothing.
MLIR_CAPI_EXPORTED void muonRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* MUON_C_DIALECTS_H */
