//===- HostStaging.cpp - Device tensors over a host-memory backend --------===//
//
// In a target=cuda step the tensors are in device memory, and MPI (without
// CUDA support, as Debian builds it) takes host memory. Each tensor
// primitive is therefore staged: its input is copied to the host when it
// starts (the copy waits for the work queued before it on the compute
// stream, so it reads what the step wrote), and the part of its output the
// primitive writes on this member is copied back when it completes, before
// the collective's own unpacking is queued. Only the contiguous blocks a
// primitive exchanges cross the bus; packing and unpacking stay on the
// device (Staging.h). This is what lets several ranks share one GPU (NCCL
// refuses that), so that a multi-rank GPU step can be checked on a machine
// with a single GPU.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "CudaLibrary.h"
#include "CudaStep.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace muon::rt;

namespace {

const char *const kOp = "host staging";

/// Host copy of `n` floats of device memory (at least one element, so that
/// two buffers of one call never compare equal: Open MPI reads recvbuf ==
/// sendbuf as MPI_IN_PLACE).
std::vector<float> toHost(const float *device, int64_t n) {
  std::vector<float> host(static_cast<size_t>(std::max<int64_t>(n, 1)));
  if (n > 0 &&
      cudaLibrary(kOp).copy(host.data(), device,
                            sizeof(float) * static_cast<size_t>(n), ToHost))
    cudaFailed(kOp, "copying " + std::to_string(n) + " floats to the host");
  return host;
}

/// Host scratch of `n` floats (at least one, as toHost).
std::vector<float> scratch(int64_t n) {
  return std::vector<float>(static_cast<size_t>(std::max<int64_t>(n, 1)));
}

/// A primitive over host copies: it owns them until the primitive is done,
/// then copies the first `back` floats of its output to `device`.
class StagedOp : public PendingOp {
public:
  StagedOp(std::vector<float> in, std::vector<float> out, float *device,
           int64_t back)
      : in(std::move(in)), out(std::move(out)), device(device), back(back) {}

  bool test(std::string &error) override {
    if (done)
      return true;
    if (!inner->test(error) || !error.empty())
      return false;
    done = true;
    if (back > 0 && cudaLibrary(kOp).copy(
                        device, out.data(),
                        sizeof(float) * static_cast<size_t>(back), ToDevice))
      cudaFailed(kOp, "copying " + std::to_string(back) +
                          " floats back to the device");
    return true;
  }
  void progress(std::string &error) override {
    if (!done)
      inner->progress(error);
  }

  std::vector<float> in, out;
  Backend::Op inner;

private:
  float *device;
  int64_t back;
  bool done = false;
};

/// Starts a staged primitive: `start` gets the host input and output.
template <typename Start>
Backend::Op staged(std::vector<float> in, std::vector<float> out, float *device,
                   int64_t back, Start start) {
  auto op =
      std::make_unique<StagedOp>(std::move(in), std::move(out), device, back);
  op->inner = start(op->in.data(), op->out.data());
  if (!op->inner)
    return nullptr; // the primitive's error says why
  return op;
}

/// `inner` with every tensor primitive staged; the rest passes through.
class HostStaging : public Backend {
public:
  explicit HostStaging(Backend &inner) : inner(inner) {}

  std::string name() const override { return inner.name(); }
  int64_t worldRank() const override { return inner.worldRank(); }
  int64_t worldSize() const override { return inner.worldSize(); }
  int64_t commRank(int comm) const override { return inner.commRank(comm); }
  int split(int64_t color, int64_t key, std::string &error) override {
    return inner.split(color, key, error);
  }
  void finalize() override { inner.finalize(); }
  [[noreturn]] void abort(int code) override {
    inner.abort(code);
    std::_Exit(code); // not reached: the backend ends the process
  }
  void barrier() override { inner.barrier(); }
  Op worldBarrier(std::string &error) override {
    return inner.worldBarrier(error);
  }
  Op broadcastBytes(int comm, void *buf, int64_t bytes, int root,
                    std::string &error) override {
    return inner.broadcastBytes(comm, buf, bytes, root, error);
  }
  Op allGatherBytes(int comm, const void *in, int64_t bytes, void *out,
                    std::string &error) override {
    return inner.allGatherBytes(comm, in, bytes, out, error);
  }

  Op allGatherV(int comm, const float *in, int64_t n, float *out,
                const Counts &c, std::string &error) override {
    return staged(toHost(in, n), scratch(c.total()), out, c.total(),
                  [&](const float *i, float *o) {
                    return inner.allGatherV(comm, i, n, o, c, error);
                  });
  }
  Op gatherV(int comm, const float *in, int64_t n, float *out, const Counts &c,
             int root, std::string &error) override {
    int64_t got = commRank(comm) == root ? c.total() : 0;
    return staged(toHost(in, n), scratch(got), out, got,
                  [&](const float *i, float *o) {
                    return inner.gatherV(comm, i, n, o, c, root, error);
                  });
  }
  Op scatterV(int comm, const float *in, const Counts &c, float *out, int64_t n,
              int root, std::string &error) override {
    int64_t sent = commRank(comm) == root ? c.total() : 0;
    return staged(toHost(in, sent), scratch(n), out, n,
                  [&](const float *i, float *o) {
                    return inner.scatterV(comm, i, c, o, n, root, error);
                  });
  }
  Op reduceScatterV(int comm, const float *in, float *out, const Counts &c,
                    Reduce r, std::string &error) override {
    int64_t mine = c.counts[commRank(comm)];
    return staged(toHost(in, c.total()), scratch(mine), out, mine,
                  [&](const float *i, float *o) {
                    return inner.reduceScatterV(comm, i, o, c, r, error);
                  });
  }
  Op allReduce(int comm, const float *in, float *out, int64_t n, Reduce r,
               std::string &error) override {
    return staged(toHost(in, n), scratch(n), out, n,
                  [&](const float *i, float *o) {
                    return inner.allReduce(comm, i, o, n, r, error);
                  });
  }
  Op broadcast(int comm, float *buf, int64_t n, int root,
               std::string &error) override {
    // In place on the host copy: the root's holds its data and stays as it
    // is on the device; the others' is written and goes back.
    bool isRoot = commRank(comm) == root;
    return staged({}, isRoot ? toHost(buf, n) : scratch(n), buf, isRoot ? 0 : n,
                  [&](const float *, float *o) {
                    return inner.broadcast(comm, o, n, root, error);
                  });
  }
  Op allToAllV(int comm, const float *in, const Counts &send, float *out,
               const Counts &recv, std::string &error) override {
    return staged(toHost(in, send.total()), scratch(recv.total()), out,
                  recv.total(), [&](const float *i, float *o) {
                    return inner.allToAllV(comm, i, send, o, recv, error);
                  });
  }

private:
  Backend &inner;
};

} // namespace

Backend &muon::rt::tensorBackend() {
  Backend &b = backend();
  if (!deviceResident() || b.takesDevicePointers())
    return b;
  static HostStaging staged(b);
  return staged;
}
