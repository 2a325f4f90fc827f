//===- LargeStack.h - Run a tool on a thread with a large stack -*- C++ -*-===//
//
// MLIR's parser, printer and verifier recurse once per level of nesting (an
// attribute in an attribute, a region in an op): input nested some
// thousands of levels deep overflows the default 8 MiB stack of a
// process's main thread and ends in a segmentation fault. The tools run
// their work on a thread whose stack reserves kLargeStackBytes of address
// space instead (only the pages a deep input touches are used), which
// takes about a million levels; past that, the stack's guard turns the
// overflow into one line, "TOOL: error: the input is nested too deeply
// ...", and exit status 1, instead of a crash.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_LARGESTACK_H
#define MUON_SUPPORT_LARGESTACK_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <pthread.h>

namespace muon {

/// Address space reserved for the stack of each large-stack thread.
constexpr size_t kLargeStackBytes = size_t(4) << 30;

/// What the first large-stack thread of a process does to its signal
/// handlers. Either way the overflow report goes in front of the handlers
/// in place and hands every other fault on to them.
enum class CrashHandlers {
  /// A tool: LLVM's crash handlers are registered first (LLVM registers
  /// them once per process; InitLLVM later keeps them), so LLVM's crash
  /// report does not run ahead of the overflow report.
  RegisterLLVMs,
  /// A library in a host's process (the C API, Python): the host's
  /// handlers (e.g. Python's for Ctrl-C) are left as they are.
  LeaveAsTheyAre,
};

/// Starts `fn(arg)` on a new thread with a large stack, named `tool` in the
/// message of an overflow. False (nothing started) where no such thread can
/// be had, e.g. where the address space is limited.
bool startLargeStackThread(
    llvm::StringRef tool, void *(*fn)(void *), void *arg, pthread_t &thread,
    CrashHandlers handlers = CrashHandlers::RegisterLLVMs);

/// Runs `body` on a large-stack thread and returns its result: one thread
/// kept for later calls (started by the first), or, while that one is busy
/// (a call from another thread or from inside a call), a new one; on the
/// calling thread where no such thread can be had.
int runOnLargeStack(llvm::StringRef tool, llvm::function_ref<int()> body,
                    CrashHandlers handlers = CrashHandlers::RegisterLLVMs);

} // namespace muon

#endif // MUON_SUPPORT_LARGESTACK_H
