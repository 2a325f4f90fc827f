//===- MpiBackend.cpp - The MPI backend (host memory) ---------------------===//
//
// Non-blocking MPI collectives on MPI_FLOAT. Errors are returned (never
// MPI's default abort without a message): MPI_ERRORS_RETURN is set on every
// communicator and each code is turned into text for the caller to report.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

// The C API only: no MPI C++ bindings (deprecated, and a link dependency).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>
#include <cstdlib>

using namespace muon::rt;

namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, len);
}

std::vector<int> toInt(const std::vector<int64_t> &v, bool &ok) {
  std::vector<int> r;
  r.reserve(v.size());
  for (int64_t x : v) {
    if (x > INT_MAX)
      ok = false;
    r.push_back(static_cast<int>(x));
  }
  return r;
}

class MpiOp : public PendingOp {
public:
  MPI_Request request = MPI_REQUEST_NULL;
  // MPI keeps pointers to the count arrays until completion.
  std::vector<int> a, b, c, d;
  bool test(std::string &error) override {
    int done = 0;
    int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      return true;
    }
    return done != 0;
  }
};

MPI_Op toMpi(Reduce r) {
  switch (r) {
  case Reduce::Max:
    return MPI_MAX;
  case Reduce::Min:
    return MPI_MIN;
  default:
    return MPI_SUM; // Avg divides afterwards.
  }
}

class MpiBackend : public Backend {
public:
  MpiBackend(int *argc, char ***argv) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      MPI_Init(argc, argv);
      ownsMpi = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int r = 0, s = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    rank = r;
    size = s;
  }
  std::string name() const override { return "mpi"; }
  int64_t worldRank() const override { return rank; }
  int64_t worldSize() const override { return size; }
  int64_t commRank(int comm) const override {
    int r = 0;
    MPI_Comm_rank(comms[comm], &r);
    return r;
  }

  int split(int64_t color, int64_t key, std::string &error) override {
    MPI_Comm comm;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(color),
                            static_cast<int>(key), &comm);
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      return -1;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    comms.push_back(comm);
    return static_cast<int>(comms.size() - 1);
  }

  void finalize() override {
    int fin = 0;
    MPI_Finalized(&fin);
    if (ownsMpi && !fin) {
      for (MPI_Comm &c : comms)
        MPI_Comm_free(&c);
      comms.clear();
      MPI_Finalize();
    }
  }
  void abort(int code) override {
    // After MPI_Finalize (a host's error past muon_rt_finalize) MPI_Abort
    // may not be called: this process alone ends.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  Op worldBarrier(std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    int rc = MPI_Ibarrier(MPI_COMM_WORLD, &op->request);
    return finish(std::move(op), rc, error);
  }

  Op allGatherV(int comm, const float *in, int64_t n, float *out,
                const Counts &c, std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!counts(c, *op, error) || !fits(n, error))
      return nullptr;
    int rc = MPI_Iallgatherv(in, static_cast<int>(n), MPI_FLOAT, out, op->a.data(), op->b.data(), MPI_FLOAT, comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op gatherV(int comm, const float *in, int64_t n, float *out, const Counts &c,
             int root, std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!counts(c, *op, error) || !fits(n, error))
      return nullptr;
    int rc = MPI_Igatherv(in, static_cast<int>(n), MPI_FLOAT, out, op->a.data(), op->b.data(), MPI_FLOAT, root, comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op scatterV(int comm, const float *in, const Counts &c, float *out,
              int64_t n, int root, std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!counts(c, *op, error) || !fits(n, error))
      return nullptr;
    int rc = MPI_Iscatterv(in, op->a.data(), op->b.data(), MPI_FLOAT, out, static_cast<int>(n), MPI_FLOAT, root, comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op reduceScatterV(int comm, const float *in, float *out, const Counts &c,
                    Reduce r, std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!counts(c, *op, error))
      return nullptr;
    int rc = MPI_Ireduce_scatter(in, out, op->a.data(), MPI_FLOAT, toMpi(r), comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op allReduce(int comm, const float *in, float *out, int64_t n, Reduce r,
               std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!fits(n, error))
      return nullptr;
    // MPI forbids aliasing send and receive buffers.
    const void *send = in == out ? MPI_IN_PLACE : in;
    int rc = MPI_Iallreduce(send, out, static_cast<int>(n), MPI_FLOAT, toMpi(r), comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op broadcast(int comm, float *buf, int64_t n, int root,
               std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!fits(n, error))
      return nullptr;
    int rc = MPI_Ibcast(buf, static_cast<int>(n), MPI_FLOAT, root, comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op broadcastBytes(int comm, void *buf, int64_t bytes, int root,
                    std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!fits(bytes, error))
      return nullptr;
    int rc = MPI_Ibcast(buf, static_cast<int>(bytes), MPI_BYTE, root,
                        comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }
  Op allGatherBytes(int comm, const void *in, int64_t bytes, void *out,
                    std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!fits(bytes, error))
      return nullptr;
    int rc = MPI_Iallgather(in, static_cast<int>(bytes), MPI_BYTE, out,
                            static_cast<int>(bytes), MPI_BYTE, comms[comm],
                            &op->request);
    return finish(std::move(op), rc, error);
  }
  Op allToAllV(int comm, const float *in, const Counts &send, float *out,
               const Counts &recv, std::string &error) override {
    auto op = std::make_unique<MpiOp>();
    if (!counts(send, *op, error))
      return nullptr;
    bool ok = true;
    op->c = toInt(recv.counts, ok);
    op->d = toInt(recv.displs, ok);
    if (!ok) {
      error = "buffer larger than 2^31 elements";
      return nullptr;
    }
    int rc = MPI_Ialltoallv(in, op->a.data(), op->b.data(), MPI_FLOAT, out, op->c.data(), op->d.data(), MPI_FLOAT, comms[comm], &op->request);
    return finish(std::move(op), rc, error);
  }

private:
  static bool fits(int64_t n, std::string &error) {
    if (n <= INT_MAX)
      return true;
    error = "buffer larger than 2^31 elements";
    return false;
  }
  static bool counts(const Counts &c, MpiOp &op, std::string &error) {
    bool ok = true;
    op.a = toInt(c.counts, ok);
    op.b = toInt(c.displs, ok);
    if (!ok)
      error = "buffer larger than 2^31 elements";
    return ok;
  }
  static Op finish(std::unique_ptr<MpiOp> op, int rc, std::string &error) {
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      return nullptr;
    }
    return op;
  }

  int64_t rank = 0, size = 1;
  bool ownsMpi = false;
  std::vector<MPI_Comm> comms;
};

} // namespace

std::unique_ptr<Backend> muon::rt::createMpiBackend(int *argc, char ***argv) {
  return std::make_unique<MpiBackend>(argc, argv);
}
