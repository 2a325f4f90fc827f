//===- Backend.h - Communication backends of the runtime ------*- C++ -*-===//
//
// The collectives the runtime needs, on contiguous float buffers, as
// non-blocking primitives. Packing, uneven pieces, dims other than 0,
// averaging, timeouts and error reporting live above this interface
// (Collectives.cpp) so that every backend gets them for free: MPI and NCCL.
//
// In a target=cuda step the tensors are in device memory. A backend that
// takes device pointers (NCCL) gets them as they are; the others (MPI) are
// reached through tensorBackend(), which stages each primitive's input and
// output through host memory (HostStaging.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_BACKEND_H
#define MUON_RUNTIME_BACKEND_H

#include "muon/Runtime/muon_runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace muon {
namespace rt {

/// The reductions of the C ABI (muon_runtime.h defines the numbers).
enum class Reduce {
  Sum = MUON_RT_SUM,
  Avg = MUON_RT_AVG,
  Max = MUON_RT_MAX,
  Min = MUON_RT_MIN
};

/// An in-flight operation of a backend.
class PendingOp {
public:
  virtual ~PendingOp() = default;
  /// Polls for completion. Returns true when done; on failure sets `error`.
  /// Called where the program waits for the operation, in program order.
  virtual bool test(std::string &error) = 0;
  /// Lets the operation progress without starting anything new: called
  /// from the middle of computation, at points that differ between ranks.
  virtual void progress(std::string &error) { test(error); }
};

/// Counts and displacements (in elements) of a v-collective.
struct Counts {
  std::vector<int64_t> counts, displs;
  static Counts of(const std::vector<int64_t> &counts);
  int64_t total() const;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual int64_t worldRank() const = 0;
  virtual int64_t worldSize() const = 0;
  /// This process's index in backend communicator `comm`.
  virtual int64_t commRank(int comm) const = 0;
  /// Whether the tensor primitives below take device pointers in a
  /// target=cuda step (they always take host pointers outside one).
  virtual bool takesDevicePointers() const { return false; }
  /// Creates the communicator of the world ranks sharing `color`, ordered by
  /// `key`. Collective over the world. Returns a backend communicator id.
  virtual int split(int64_t color, int64_t key, std::string &error) = 0;
  virtual void finalize() = 0;
  [[noreturn]] virtual void abort(int code) = 0;
  virtual void barrier() = 0;
  /// A non-blocking barrier over the world: waited on with the timeout
  /// before calls that cannot time out themselves (communicator creation).
  using Op = std::unique_ptr<PendingOp>;
  virtual Op worldBarrier(std::string &error) = 0;

  // Non-blocking primitives. Every pointer stays valid until completion.
  // Each returns null and sets `error` when the call itself fails.
  virtual Op allGatherV(int comm, const float *in, int64_t n, float *out,
                        const Counts &c, std::string &error) = 0;
  virtual Op gatherV(int comm, const float *in, int64_t n, float *out,
                     const Counts &c, int root, std::string &error) = 0;
  virtual Op scatterV(int comm, const float *in, const Counts &c, float *out,
                      int64_t n, int root, std::string &error) = 0;
  /// Sum/max/min over the group; member i keeps block i of `c`.
  virtual Op reduceScatterV(int comm, const float *in, float *out,
                            const Counts &c, Reduce r, std::string &error) = 0;
  virtual Op allReduce(int comm, const float *in, float *out, int64_t n,
                       Reduce r, std::string &error) = 0;
  virtual Op broadcast(int comm, float *buf, int64_t n, int root,
                       std::string &error) = 0;
  /// Broadcast of `bytes` raw bytes (shapes, not tensor data).
  virtual Op broadcastBytes(int comm, void *buf, int64_t bytes, int root,
                            std::string &error) = 0;
  /// Every member's `bytes` bytes, concatenated in member order.
  virtual Op allGatherBytes(int comm, const void *in, int64_t bytes, void *out,
                            std::string &error) = 0;
  virtual Op allToAllV(int comm, const float *in, const Counts &send,
                       float *out, const Counts &recv, std::string &error) = 0;
};

/// The process-wide backend (MUON_RT_BACKEND: "mpi", the default, or
/// "nccl"). Initialised on first use.
Backend &backend();
bool backendStarted();
std::unique_ptr<Backend> createMpiBackend(int *argc, char ***argv);
/// Tensor collectives over NCCL (libmuon_runtime_nccl, loaded at the first
/// communicator), the rest over MPI.
std::unique_ptr<Backend> createNcclBackend(int *argc, char ***argv);
void startBackend(int *argc, char ***argv);
/// The backend for the tensor primitives of the collective being called:
/// backend() itself, except in a target=cuda step over a backend that does
/// not take device pointers, where it is backend() behind host staging.
Backend &tensorBackend();

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_BACKEND_H
