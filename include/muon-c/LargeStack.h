/*===-- muon-c/LargeStack.h - C API: run MLIR work on a large stack -*- C
-*-===*\
|*                                                                            *|
|* MLIR parses, verifies and prints one level of nesting per call: text      *|
|* nested some thousands of levels deep overflows a main thread's 8 MiB      *|
|* stack. A host that parses text it did not write can make those calls on a *|
|* thread with a 4 GiB stack, as the project's tools do. See docs/c-api.md.  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MUON_C_LARGESTACK_H
#define MUON_C_LARGESTACK_H

#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Calls `body(userData)` on a thread whose stack reserves 4 GiB of
/// address space (only the pages it touches are used), waits for it and
/// returns its result. The thread is kept for later calls (about 16 us a
/// call); a call made while it is busy (from another thread, or from inside
/// `body`) gets a thread of its own. Calls `body` on the calling thread
/// where no such thread can be had. Should the body overflow even that stack, the process writes
/// "WHO: error: the input is nested too deeply ..." on stderr and exits
/// with status 1 instead of crashing. The body must not call back into a
/// runtime bound to the calling thread (e.g. Python, whose lock the caller
/// holds).
MLIR_CAPI_EXPORTED int muonRunOnLargeStack(MlirStringRef who,
                                           int (*body)(void *userData),
                                           void *userData);

#ifdef __cplusplus
}
#endif

#endif // MUON_C_LARGESTACK_H
