//===- LargeStack.cpp - C API: run MLIR work on a large stack -------------===//

#include "muon-c/LargeStack.h"

#include "muon/Support/LargeStack.h"

#include "mlir/CAPI/Support.h"

int muonRunOnLargeStack(MlirStringRef who, int (*body)(void *userData),
                        void *userData) {
  return muon::runOnLargeStack(
      unwrap(who), [&] { return body(userData); },
      muon::CrashHandlers::LeaveAsTheyAre);
}
