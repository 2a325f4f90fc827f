//===- NullOperation.h - C API: refusing a null operation handle -*- C++ -*-===//
//
// A null MlirOperation (muonModuleGetStep past the last step, a failed
// parse) has no context, so no MLIR diagnostic can carry the error: the
// C API functions that take an operation say so on stderr and fail instead
// of dereferencing it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_LIB_CAPI_NULLOPERATION_H
#define MUON_LIB_CAPI_NULLOPERATION_H

#include "mlir-c/IR.h"

#include "llvm/Support/raw_ostream.h"

namespace muon::capi {

/// Whether `op` is null; then "FN: the operation is null" on stderr.
inline bool isNullOperation(MlirOperation op, const char *fn) {
  if (!mlirOperationIsNull(op))
    return false;
  llvm::errs() << fn << ": the operation is null\n";
  return true;
}

} // namespace muon::capi

#endif // MUON_LIB_CAPI_NULLOPERATION_H
