//===- State.h - Process-wide state of the runtime ------------*- C++ -*-===//

#ifndef MUON_RUNTIME_STATE_H
#define MUON_RUNTIME_STATE_H

#include "muon/Runtime/muon_runtime.h"

#include <string>

namespace muon {
namespace rt {

/// This rank's counters (muon_rt_get_counters).
muon_rt_counters &counters();

/// A communicator created by muon_rt_comm.
struct Communicator {
  int backendId = -1;
  int64_t size = 1;
  int64_t rank = 0; ///< This process's index in the group.
  std::string name; ///< For messages: "mesh 2x2 axes [1] (world ranks 1,3)".
};

/// The communicator behind a handle; aborts on an unknown handle.
const Communicator &communicator(int64_t handle, const char *op);

/// Waits for every rank to arrive here, within the timeout (a job-wide
/// abort naming `op` otherwise). Used in front of calls that block without
/// a timeout of their own, such as communicator creation.
void arriveAll(const std::string &op, const std::string &comm);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_STATE_H
