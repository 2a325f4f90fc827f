//===- NcclBackend.cpp - The NCCL backend (MUON_RT_BACKEND=nccl) ----------===//
//
// Tensor collectives go over NCCL (libmuon_runtime_nccl, loaded on first
// use); MPI stays underneath for what is not tensor data: launching,
// barriers, shape exchanges, and handing NCCL its unique id. Each backend
// communicator is an MPI communicator and an NCCL one split from the NCCL
// world with the same colour and key, so both order their members alike.
// In a target=cuda step NCCL gets the step's device buffers as they are;
// host buffers (a CPU step over this transport) it stages itself.
//
// The NCCL world is created at the first communicator, a point every rank
// reaches collectively: a process that never communicates never touches a
// GPU. Rank r uses GPU (local rank mod device count); NCCL needs one GPU per
// rank (the MPI backend lets ranks share one), so ranks that would share one
// are stopped with that cause.
//
//===----------------------------------------------------------------------===//

#include "Call.h"
#include "GpuLibrary.h"

#include "muon/Runtime/muon_runtime_nccl.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace muon::rt;

namespace {

const char *const kOp = "init";
const char *const kComm = "nccl";

/// The entry points of libmuon_runtime_nccl (muon_runtime_nccl.h).
struct NcclLibrary {
  const char *(*error)();
  int (*deviceCount)();
  int (*identity)(int, void *, char *);
  int (*uniqueId)(void *);
  int (*init)(muon_nccl_comm **, const void *, int, int, int, double);
  int (*split)(muon_nccl_comm *, int, int, muon_nccl_comm **, double);
  void (*abort)(muon_nccl_comm *);
  int (*destroy)(muon_nccl_comm *);
  int (*start)(muon_nccl_comm *, const muon_nccl_collective *, int,
               muon_nccl_op **);
  int (*test)(muon_nccl_op *);
  void (*free)(muon_nccl_op *);
};

NcclLibrary loadLibrary() {
  NcclLibrary l{};
  std::string tried;
  void *h = openGpuLibrary("libmuon_runtime_nccl.so", "MUON_RT_NCCL_LIBRARY",
                           tried);
  if (!h)
    fatal(kOp, kComm,
          "cannot load the NCCL transport libmuon_runtime_nccl.so (" + tried +
              "): build with the CUDA toolkit and NCCL, or set "
              "MUON_RT_NCCL_LIBRARY");
  gpuSymbol(h, "muon_nccl_error", l.error, kOp, kComm);
  gpuSymbol(h, "muon_nccl_device_count", l.deviceCount, kOp, kComm);
  gpuSymbol(h, "muon_nccl_device_identity", l.identity, kOp, kComm);
  gpuSymbol(h, "muon_nccl_unique_id", l.uniqueId, kOp, kComm);
  gpuSymbol(h, "muon_nccl_comm_init", l.init, kOp, kComm);
  gpuSymbol(h, "muon_nccl_comm_split", l.split, kOp, kComm);
  gpuSymbol(h, "muon_nccl_comm_abort", l.abort, kOp, kComm);
  gpuSymbol(h, "muon_nccl_comm_destroy", l.destroy, kOp, kComm);
  gpuSymbol(h, "muon_nccl_start", l.start, kOp, kComm);
  gpuSymbol(h, "muon_nccl_test", l.test, kOp, kComm);
  gpuSymbol(h, "muon_nccl_op_free", l.free, kOp, kComm);
  return l;
}

class NcclOp : public PendingOp {
public:
  NcclOp(const NcclLibrary &lib, muon_nccl_op *op) : lib(lib), op(op) {}
  ~NcclOp() override { lib.free(op); }
  bool test(std::string &error) override {
    int r = lib.test(op);
    if (r < 0)
      error = std::string("NCCL: ") + lib.error();
    return r != 0;
  }

private:
  const NcclLibrary &lib;
  muon_nccl_op *op;
};

class NcclBackend : public Backend {
public:
  NcclBackend(int *argc, char ***argv) : mpi(createMpiBackend(argc, argv)) {}

  std::string name() const override { return "nccl"; }
  int64_t worldRank() const override { return mpi->worldRank(); }
  int64_t worldSize() const override { return mpi->worldSize(); }
  int64_t commRank(int comm) const override { return mpi->commRank(comm); }
  bool takesDevicePointers() const override { return true; }

  int split(int64_t color, int64_t key, std::string &error) override {
    if (!world)
      startWorld();
    int id = mpi->split(color, key, error);
    if (id < 0)
      return id;
    muon_nccl_comm *comm = nullptr;
    if (lib.split(world, static_cast<int>(color), static_cast<int>(key), &comm,
                  timeoutSeconds()) != 0) {
      error = std::string("NCCL: ") + lib.error();
      return -1;
    }
    if (static_cast<int>(comms.size()) <= id)
      comms.resize(id + 1, nullptr);
    comms[id] = comm;
    return id;
  }

  void finalize() override {
    // The job's work is done: a communicator that does not close cleanly is
    // worth a line, not a failure.
    auto close = [&](muon_nccl_comm *&c) {
      if (c && lib.destroy(c) != 0)
        std::fprintf(stderr, "muon-rt: warning: rank %lld: finalize on nccl: %s\n",
                     static_cast<long long>(mpi->worldRank()), lib.error());
      c = nullptr;
    };
    for (muon_nccl_comm *&c : comms)
      close(c);
    close(world);
    mpi->finalize();
  }
  [[noreturn]] void abort(int code) override {
    // NCCL's abort returns even when peers are gone; MPI's then ends the job.
    for (muon_nccl_comm *c : comms)
      if (c)
        lib.abort(c);
    if (world)
      lib.abort(world);
    mpi->abort(code);
    std::_Exit(code);
  }
  void barrier() override { mpi->barrier(); }
  Op worldBarrier(std::string &error) override {
    return mpi->worldBarrier(error);
  }

  Op allGatherV(int comm, const float *in, int64_t n, float *out,
                const Counts &c, std::string &error) override {
    muon_nccl_collective k = blocks(MUON_NCCL_ALL_GATHER_V, c);
    k.in = in;
    k.in_count = n;
    k.out = out;
    return start(comm, k, error);
  }
  Op gatherV(int comm, const float *in, int64_t n, float *out, const Counts &c,
             int root, std::string &error) override {
    muon_nccl_collective k = blocks(MUON_NCCL_GATHER_V, c);
    k.in = in;
    k.in_count = n;
    k.out = out;
    k.root = root;
    return start(comm, k, error);
  }
  Op scatterV(int comm, const float *in, const Counts &c, float *out,
              int64_t n, int root, std::string &error) override {
    muon_nccl_collective k = blocks(MUON_NCCL_SCATTER_V, c);
    k.in = in;
    k.out = out;
    k.out_count = n;
    k.root = root;
    return start(comm, k, error);
  }
  Op reduceScatterV(int comm, const float *in, float *out, const Counts &c,
                    Reduce r, std::string &error) override {
    muon_nccl_collective k = blocks(MUON_NCCL_REDUCE_SCATTER_V, c);
    k.in = in;
    k.out = out;
    k.reduce = reduction(r);
    return start(comm, k, error);
  }
  Op allReduce(int comm, const float *in, float *out, int64_t n, Reduce r,
               std::string &error) override {
    muon_nccl_collective k{};
    k.kind = MUON_NCCL_ALL_REDUCE;
    k.in = in;
    k.in_count = n;
    k.out = out;
    k.out_count = n;
    k.reduce = reduction(r);
    return start(comm, k, error);
  }
  Op broadcast(int comm, float *buf, int64_t n, int root,
               std::string &error) override {
    muon_nccl_collective k{};
    k.kind = MUON_NCCL_BROADCAST;
    k.out = buf;
    k.out_count = n;
    k.root = root;
    return start(comm, k, error);
  }
  // Shapes and other bytes that are not tensor data stay on MPI.
  Op broadcastBytes(int comm, void *buf, int64_t bytes, int root,
                    std::string &error) override {
    return mpi->broadcastBytes(comm, buf, bytes, root, error);
  }
  Op allGatherBytes(int comm, const void *in, int64_t bytes, void *out,
                    std::string &error) override {
    return mpi->allGatherBytes(comm, in, bytes, out, error);
  }
  Op allToAllV(int comm, const float *in, const Counts &send, float *out,
               const Counts &recv, std::string &error) override {
    muon_nccl_collective k = blocks(MUON_NCCL_ALL_TO_ALL_V, send);
    k.in = in;
    k.out = out;
    k.recv_counts = recv.counts.data();
    k.recv_displs = recv.displs.data();
    return start(comm, k, error);
  }

private:
  static muon_nccl_collective blocks(int kind, const Counts &c) {
    muon_nccl_collective k{};
    k.kind = kind;
    k.counts = c.counts.data();
    k.displs = c.displs.data();
    return k;
  }
  /// An average is a sum the layer above divides (as over MPI).
  static int reduction(Reduce r) {
    return r == Reduce::Max   ? MUON_NCCL_MAX
           : r == Reduce::Min ? MUON_NCCL_MIN
                              : MUON_NCCL_SUM;
  }
  Op start(int comm, const muon_nccl_collective &k, std::string &error) {
    if (comm < 0 || comm >= static_cast<int>(comms.size()) || !comms[comm]) {
      error = "no NCCL communicator " + std::to_string(comm);
      return nullptr;
    }
    muon_nccl_op *op = nullptr;
    // In a target=cuda step the tensors are on the device: NCCL takes them
    // as they are (and orders the collective after the step's queued work).
    int memory = deviceResident() ? MUON_NCCL_DEVICE : MUON_NCCL_HOST;
    if (lib.start(comms[comm], &k, memory, &op) != 0) {
      error = std::string("NCCL: ") + lib.error();
      return nullptr;
    }
    return std::make_unique<NcclOp>(lib, op);
  }

  /// Waits for an MPI operation of the start-up as the runtime waits for any
  /// collective (its timeout, its error line).
  static void await(Op op, const std::string &what, const std::string &error) {
    if (!op)
      fatal(kOp, kComm, what + ": " + error);
    submit(Request{std::move(op), {}, {}, {}, kOp,
                   std::string(kComm) + " (" + what + ")"},
           0);
  }

  /// The NCCL world: rank 0's unique id sent to every rank over MPI.
  void startWorld() {
    lib = loadLibrary();
    int devices = lib.deviceCount();
    if (devices < 1)
      fatal(kOp, kComm,
            "no CUDA device on this machine (the NCCL transport needs one "
            "GPU per rank; use the MPI transport without GPUs)");
    std::string error;
    int worldComm = mpi->split(0, mpi->worldRank(), error);
    if (worldComm < 0)
      fatal(kOp, kComm, "MPI world: " + error);
    // Local rank mod devices: also right where each rank sees only its own
    // GPU (CUDA_VISIBLE_DEVICES per rank). Ranks that end up on one GPU
    // (compared by UUID over the whole job) stop with the cause, before
    // NCCL would refuse them with less to go on.
    int device = localRank() % devices;
    struct Identity {
      unsigned char uuid[16];
      char pci[32];
    } mine{};
    if (lib.identity(device, mine.uuid, mine.pci) != 0)
      fatal(kOp, kComm, lib.error());
    std::vector<Identity> all(mpi->worldSize());
    Op shared =
        mpi->allGatherBytes(worldComm, &mine, sizeof mine, all.data(), error);
    await(std::move(shared), "comparing the ranks' GPUs", error);
    for (int64_t r = 0; r < mpi->worldSize(); ++r)
      if (r != mpi->worldRank() &&
          std::memcmp(all[r].uuid, mine.uuid, sizeof mine.uuid) == 0)
        fatal(kOp, kComm,
              "this rank and rank " + std::to_string(r) + " share GPU " +
                  mine.pci + ": NCCL needs one GPU per rank; use the MPI "
                  "transport to share a GPU");
    char id[MUON_NCCL_ID_BYTES] = {};
    if (mpi->worldRank() == 0 && lib.uniqueId(id) != 0)
      fatal(kOp, kComm, lib.error());
    Op sent = mpi->broadcastBytes(worldComm, id, sizeof id, 0, error);
    await(std::move(sent), "sending NCCL's unique id", error);
    if (lib.init(&world, id, static_cast<int>(mpi->worldSize()),
                 static_cast<int>(mpi->worldRank()), device,
                 timeoutSeconds()) != 0)
      fatal(kOp, kComm, lib.error());
  }

  std::unique_ptr<Backend> mpi;
  NcclLibrary lib{};
  muon_nccl_comm *world = nullptr;
  std::vector<muon_nccl_comm *> comms; // by MPI communicator id
};

} // namespace

std::unique_ptr<Backend> muon::rt::createNcclBackend(int *argc, char ***argv) {
  return std::make_unique<NcclBackend>(argc, argv);
}
