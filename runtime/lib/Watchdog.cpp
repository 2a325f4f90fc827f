//===- Watchdog.cpp - A deadline for host phases with no collective -------===//
//
// Waits in collectives time out when a peer stops answering; a rank alone,
// or a rank stuck in its host program between steps, has no wait to time
// out. The watchdog is one thread that sleeps until the armed phase's
// deadline (MUON_RT_TIMEOUT_S after arming) and, if the phase is still
// armed then, reports it as this rank's error and aborts the job like any
// other runtime failure.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "muon/Runtime/muon_runtime.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <algorithm>
#include <thread>

using namespace muon::rt;

namespace {

class Watchdog {
public:
  void arm(std::string what) {
    // Read the timeout here, on the caller's thread: a bad value is
    // reported by the caller, not by the watchdog thread.
    double seconds = timeoutSeconds();
    std::lock_guard<std::mutex> lock(mutex);
    phase = std::move(what);
    limit = seconds;
    // The clock counts nanoseconds in 64 bits (about 292 years): a longer
    // timeout would overflow the deadline into the past, so anything above
    // 10^9 s (31 years) is waited as that.
    double wait = std::min(seconds, 1e9);
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(wait));
    armed = true;
    ++generation;
    if (!thread.joinable())
      thread = std::thread([this] { watch(); });
    wake.notify_one();
  }

  void disarm() {
    std::lock_guard<std::mutex> lock(mutex);
    armed = false;
    ++generation;
    wake.notify_one();
  }

private:
  using Clock = std::chrono::steady_clock;

  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (!armed) {
        wake.wait(lock);
        continue;
      }
      uint64_t seen = generation;
      if (wake.wait_until(lock, deadline,
                          [&] { return generation != seen; }))
        continue; // re-armed or disarmed in time
      char limitText[32];
      std::snprintf(limitText, sizeof limitText, "%g", limit);
      std::string cause = phase + " did not finish within " + limitText +
                          " s (MUON_RT_TIMEOUT_S)";
      lock.unlock();
      fatal("watchdog", "", cause);
    }
  }

  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
  std::string phase;
  double limit = 0;
  Clock::time_point deadline;
  bool armed = false;
  uint64_t generation = 0;
};

// Never destroyed: the thread may still wait when the process exits.
Watchdog &watchdog() {
  static Watchdog *w = new Watchdog();
  return *w;
}

} // namespace

extern "C" {
void muon_rt_watchdog_arm(const char *what) {
  watchdog().arm(what ? what : "a host phase");
}
void muon_rt_watchdog_disarm(void) { watchdog().disarm(); }
}
