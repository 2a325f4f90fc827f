//===- LargeStack.cpp - Run a tool on a thread with a large stack ---------===//
//
// An overflow of a large-stack thread is recognised by where it faults:
// in the guard below the thread's stack (or just under it, where a large
// frame jumps over the guard). The SIGSEGV handler that recognises it runs
// on an alternate signal stack of the thread (the overflowed stack has no
// room left), says so and exits; any other fault goes on to the handler
// that was there before (LLVM's crash report in a tool, the host's in a
// library), so a crash is reported as it always was.
//
//===----------------------------------------------------------------------===//

#include "muon/Support/LargeStack.h"

#include "llvm/Support/Signals.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

namespace muon {
namespace {

/// Guard pages below each large stack: a frame larger than the guard can
/// jump over it into whatever is mapped below, so it is generous.
constexpr size_t kGuardBytes = size_t(1) << 20;
/// What a fault this far below the guard still counts as an overflow.
constexpr size_t kBelowGuardBytes = size_t(1) << 20;
/// Room for the SIGSEGV handler (and LLVM's crash report, which runs on
/// the same alternate stack when the fault is not an overflow).
constexpr size_t kAltStackBytes = size_t(256) << 10;

/// The address ranges whose faults are overflows, one per live large-stack
/// thread (a tool starts one or two); read in the signal handler.
/// A slot is claimed (`taken`) before its range is written, and its range
/// is nonzero only while complete.
constexpr int kMaxThreads = 16;
std::atomic<bool> taken[kMaxThreads];
std::atomic<uintptr_t> overflowLow[kMaxThreads];
std::atomic<uintptr_t> overflowHigh[kMaxThreads];

/// The overflow message, written by the signal handler (no allocation
/// there). Set before any large-stack thread starts.
char message[256];
size_t messageLength = 0;

struct sigaction previousHandler;

void onSegmentationFault(int sig, siginfo_t *info, void *context) {
  auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (int i = 0; i < kMaxThreads; ++i)
    if (address >= overflowLow[i].load() && address < overflowHigh[i].load()) {
      ssize_t ignored = write(STDERR_FILENO, message, messageLength);
      (void)ignored;
      // The system call rather than _exit: AddressSanitizer would warn at
      // a call of a noreturn function from a handler on another stack.
      syscall(SYS_exit_group, 1);
    }
  // Not an overflow: the handler before ours reports it, or (the default)
  // the fault, repeated when this returns, ends the process.
  sigaction(SIGSEGV, &previousHandler, nullptr);
  if (previousHandler.sa_flags & SA_SIGINFO)
    previousHandler.sa_sigaction(sig, info, context);
  else if (previousHandler.sa_handler != SIG_DFL &&
           previousHandler.sa_handler != SIG_IGN)
    previousHandler.sa_handler(sig);
}

/// Installs the handler once per process, in front of the handlers in
/// place (with RegisterLLVMs, LLVM's, registered first: LLVM registers its
/// handlers once, and later requests such as InitLLVM's in MlirOptMain keep
/// them), so ours sees a fault first and passes on what is not an
/// overflow.
void installHandler(llvm::StringRef tool, CrashHandlers handlers) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::string text =
        tool.str() +
        ": error: the input is nested too deeply: it needs more than the " +
        std::to_string(kLargeStackBytes >> 30) +
        " GiB of stack the tool runs on (MLIR parses, verifies and prints "
        "one level of nesting per call)\n";
    messageLength = std::min(text.size(), sizeof(message));
    std::memcpy(message, text.data(), messageLength);
    if (handlers == CrashHandlers::RegisterLLVMs)
      llvm::sys::SetInterruptFunction(nullptr);
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = onSegmentationFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previousHandler);
  });
}

struct Start {
  void *(*fn)(void *);
  void *arg;
};

/// The first frame of a large-stack thread: an alternate signal stack, its
/// overflow range registered while `fn` runs.
void *trampoline(void *p) {
  Start start = *static_cast<Start *>(p);
  delete static_cast<Start *>(p);

  stack_t alternate = {};
  alternate.ss_sp = std::malloc(kAltStackBytes);
  alternate.ss_size = kAltStackBytes;
  bool haveAlternate = alternate.ss_sp && sigaltstack(&alternate, nullptr) == 0;

  int slot = -1;
  pthread_attr_t attr;
  void *low = nullptr;
  size_t size = 0, guard = 0;
  if (haveAlternate && pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &low, &size) == 0 &&
        pthread_attr_getguardsize(&attr, &guard) == 0) {
      // The lowest address of the stack, with or without its guard: from
      // kBelowGuardBytes under the guard to the guard's top either way.
      auto base = reinterpret_cast<uintptr_t>(low);
      uintptr_t below = guard + kBelowGuardBytes;
      for (int i = 0; i < kMaxThreads && slot < 0; ++i) {
        bool expected = false;
        if (taken[i].compare_exchange_strong(expected, true)) {
          overflowLow[i] = base > below ? base - below : 1;
          overflowHigh[i] = base + guard;
          slot = i;
        }
      }
    }
    pthread_attr_destroy(&attr);
  }

  void *result = start.fn(start.arg);

  if (slot >= 0) {
    overflowHigh[slot] = 0;
    overflowLow[slot] = 0;
    taken[slot] = false;
  }
  if (haveAlternate) {
    stack_t off = {};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  }
  std::free(alternate.ss_sp);
  return result;
}

} // namespace

bool startLargeStackThread(llvm::StringRef tool, void *(*fn)(void *), void *arg,
                           pthread_t &thread, CrashHandlers handlers) {
  installHandler(tool, handlers);
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0)
    return false;
  auto *start = new Start{fn, arg};
  bool ok = pthread_attr_setstacksize(&attr, kLargeStackBytes) == 0 &&
            pthread_attr_setguardsize(&attr, kGuardBytes) == 0 &&
            pthread_create(&thread, &attr, trampoline, start) == 0;
  pthread_attr_destroy(&attr);
  if (!ok)
    delete start;
  return ok;
}

namespace {

/// A large-stack thread kept for later calls: a host that parses, prints
/// and verifies through runOnLargeStack calls it often, and a thread costs
/// a 4 GiB mapping to start (under AddressSanitizer a 512 MiB shadow too,
/// which a fuzzer making one per input ran out of). It runs one call at a
/// time; a call that finds it busy (another host thread's, or one made
/// from inside a call) gets a thread of its own.
class Worker {
public:
  /// Runs `body` on the worker; false where it is busy or cannot start.
  bool tryRun(llvm::StringRef tool, CrashHandlers handlers,
              llvm::function_ref<int()> body, int &result) {
    std::unique_lock<std::mutex> lock(mutex);
    if (busy)
      return false;
    if (!started) {
      pthread_t thread;
      if (!startLargeStackThread(tool, loop, this, thread, handlers))
        return false;
      pthread_detach(thread);
      started = true;
      // A child of fork() has no worker thread: it starts its own.
      static std::once_flag once;
      std::call_once(once, [] { pthread_atfork(nullptr, nullptr, forget); });
    }
    busy = true;
    job = &body;
    wake.notify_one();
    done.wait(lock, [&] { return job == nullptr; });
    result = jobResult;
    busy = false;
    return true;
  }

  static Worker &get() {
    // Never destroyed: the thread waits on its members until the process
    // ends, and a call may still run while static destructors do (exit()).
    static Worker *worker = new Worker;
    return *worker;
  }

private:
  static void *loop(void *p) {
    auto *w = static_cast<Worker *>(p);
    std::unique_lock<std::mutex> lock(w->mutex);
    for (;;) {
      w->wake.wait(lock, [&] { return w->job != nullptr; });
      llvm::function_ref<int()> *todo = w->job;
      lock.unlock();
      int r = (*todo)();
      lock.lock();
      w->jobResult = r;
      w->job = nullptr;
      w->done.notify_one();
    }
    return nullptr;
  }

  static void forget() { new (&get()) Worker; }

  std::mutex mutex;
  std::condition_variable wake, done;
  llvm::function_ref<int()> *job = nullptr;
  int jobResult = 1;
  bool started = false, busy = false;
};

} // namespace

int runOnLargeStack(llvm::StringRef tool, llvm::function_ref<int()> body,
                    CrashHandlers handlers) {
  int result = 1;
  if (Worker::get().tryRun(tool, handlers, body, result))
    return result;
  struct Call {
    llvm::function_ref<int()> body;
    int result = 1;
  } call{body};
  auto run = [](void *p) -> void * {
    auto *c = static_cast<Call *>(p);
    c->result = c->body();
    return nullptr;
  };
  pthread_t thread;
  if (!startLargeStackThread(tool, run, &call, thread, handlers))
    return body(); // No large stack to be had: run on this one.
  pthread_join(thread, nullptr);
  return call.result;
}

} // namespace muon
