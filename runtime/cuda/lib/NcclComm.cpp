//===- NcclComm.cpp - The runtime's collectives over NCCL -----------------===//
//
// Each collective is one NCCL group on the process's communication stream,
// followed by a CUDA event: the runtime's asynchronous tokens are those
// events, and waiting is polling them (with NCCL's asynchronous error of the
// communicator checked on every poll, so a failed peer is an error, not a
// hang). Collectives NCCL has no v-variant of are grouped point-to-point
// calls or grouped broadcasts/reductions, one per member.
//
// Communicators are non-blocking (config.blocking = 0): creation, splits and
// the enqueueing of a group (which connects peers on first use) return at
// once and are polled with a timeout, so a peer that never arrives ends in
// an error the runtime reports instead of a hang.
//
// Host buffers are staged: the input is copied into pinned memory and to the
// device when the collective starts, the blocks the collective writes come
// back through pinned memory and are copied out when the event has passed
// (the rest of the output is left alone, as MPI leaves it). Device buffers
// are used as they are, by a collective that waits for the work queued
// before it on the compute stream (the legacy default stream).
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime_nccl.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

thread_local std::string lastError;

int fail(std::string message) {
  lastError = std::move(message);
  return 1;
}

std::string cudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::string ncclText(ncclResult_t r, ncclComm_t comm) {
  std::string s = ncclGetErrorString(r);
  const char *detail = comm ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  if (detail && *detail)
    s += std::string(" (") + detail + ")";
  return s;
}

/// The stream every collective of the process is queued on: one stream keeps
/// the collectives in the program's order on every rank, which NCCL needs
/// when several communicators share a device.
cudaStream_t commStream = nullptr;

/// Recorded on the compute stream before a collective on device buffers,
/// which the communication stream then waits for.
cudaEvent_t computeQueued = nullptr;

/// Pinned host blocks for staging, kept for reuse (pinning is slow).
std::multimap<size_t, void *> freePinned;

size_t pinnedSize(size_t bytes) {
  size_t size = 4096;
  while (size < bytes)
    size *= 2;
  return size;
}

/// A pinned block of pinnedSize(bytes): blocks are reused within their size
/// class only, so a small collective never holds a large block.
void *takePinned(size_t bytes, size_t &size, std::string &error) {
  size = pinnedSize(bytes);
  auto it = freePinned.find(size);
  if (it != freePinned.end()) {
    void *p = it->second;
    freePinned.erase(it);
    return p;
  }
  void *p = nullptr;
  cudaError_t e = cudaMallocHost(&p, size);
  if (e != cudaSuccess) {
    error = "cudaMallocHost(" + std::to_string(size) + "): " + cudaText(e);
    return nullptr;
  }
  return p;
}

/// `s` seconds for a message (%g: a timeout may exceed an int).
std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

/// Waits for a non-blocking communicator's pending call to finish: "" when
/// it succeeded, else why (NCCL's error, or "timed out after N s `doing`").
std::string settled(ncclComm_t comm, double timeout, const char *doing) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  for (int spins = 0;; ++spins) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress))
      return ncclText(r != ncclSuccess ? r : state, comm);
    if (state == ncclSuccess)
      return "";
    if (spins > 64)
      std::this_thread::yield();
    if (std::chrono::duration<double>(clock::now() - start).count() > timeout)
      return "timed out after " + seconds(timeout) + " s " + doing;
  }
}

/// Waits, for at most `timeout` seconds, for `stream` to finish what is
/// queued on it: "" when it did, else why (a CUDA error, the
/// communicator's asynchronous NCCL error, or "timed out after N s ...").
/// A stream stuck behind a dead peer never finishes; cudaStreamSynchronize
/// would wait for ever.
std::string drained(cudaStream_t stream, ncclComm_t comm, double timeout) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  for (int spins = 0;; ++spins) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess)
      return "";
    if (e != cudaErrorNotReady)
      return "cudaStreamQuery: " + cudaText(e);
    cudaGetLastError(); // not ready is not an error: keep it from later checks
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress))
      return ncclText(r != ncclSuccess ? r : state, comm);
    if (spins > 64)
      std::this_thread::yield();
    if (std::chrono::duration<double>(clock::now() - start).count() > timeout)
      return "timed out after " + seconds(timeout) +
             " s waiting for the communication stream to finish its queued "
             "work";
  }
}

/// Shutdown drains the one communication stream once, within one timeout,
/// however many communicators are destroyed after it (a stream stuck
/// behind one communicator would otherwise cost a timeout per
/// communicator); once it failed, the others are aborted without waiting.
/// Creating a communicator starts over.
struct Shutdown {
  bool started = false;
  std::chrono::steady_clock::time_point deadline;
  std::string failed;
} shutdown;

int64_t extent(const int64_t *counts, const int64_t *displs, int members) {
  int64_t e = 0;
  for (int j = 0; j < members; ++j)
    if (counts[j] > 0)
      e = std::max(e, displs[j] + counts[j]);
  return e;
}

/// The ranges written on this member, sorted, adjacent ones merged.
std::vector<std::pair<int64_t, int64_t>>
writtenRanges(const muon_nccl_collective *c, int members, int me,
              int64_t outElems) {
  std::vector<std::pair<int64_t, int64_t>> r;
  auto blocksOf = [&](const int64_t *counts, const int64_t *displs) {
    for (int j = 0; j < members; ++j)
      if (counts[j] > 0)
        r.push_back({displs[j], counts[j]});
  };
  switch (c->kind) {
  case MUON_NCCL_ALL_GATHER_V:
    blocksOf(c->counts, c->displs);
    break;
  case MUON_NCCL_GATHER_V:
    if (me == c->root)
      blocksOf(c->counts, c->displs);
    break;
  case MUON_NCCL_ALL_TO_ALL_V:
    blocksOf(c->recv_counts, c->recv_displs);
    break;
  default:
    if (outElems > 0)
      r.push_back({0, outElems});
  }
  std::sort(r.begin(), r.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (auto &range : r) {
    if (!merged.empty() &&
        merged.back().first + merged.back().second >= range.first)
      merged.back().second =
          std::max(merged.back().second,
                   range.first + range.second - merged.back().first);
    else
      merged.push_back(range);
  }
  return merged;
}

/// Equal blocks laid end to end: NCCL's own all-gather and reduce-scatter.
bool uniform(const int64_t *counts, const int64_t *displs, int members) {
  for (int j = 0; j < members; ++j)
    if (counts[j] != counts[0] || displs[j] != j * counts[0])
      return false;
  return true;
}

ncclRedOp_t toNccl(int reduce) {
  switch (reduce) {
  case MUON_NCCL_MAX:
    return ncclMax;
  case MUON_NCCL_MIN:
    return ncclMin;
  default:
    return ncclSum;
  }
}

} // namespace

struct muon_nccl_comm {
  ncclComm_t comm = nullptr;
  int size = 1, rank = 0, device = 0;
  double timeout = 300;
};

struct muon_nccl_op {
  muon_nccl_comm *comm = nullptr;
  cudaEvent_t done = nullptr;
  bool finished = false;
  // Host staging (null for device buffers).
  void *pinnedIn = nullptr, *pinnedOut = nullptr;
  size_t pinnedInBytes = 0, pinnedOutBytes = 0;
  float *hostOut = nullptr;
  /// The (offset, count) element ranges the collective writes on this
  /// member: only those come back (MPI leaves the rest of `out` alone too).
  std::vector<std::pair<int64_t, int64_t>> written;
};

extern "C" {

const char *muon_nccl_error(void) { return lastError.c_str(); }

int muon_nccl_version(void) {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

int muon_nccl_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

int muon_nccl_device_identity(int device, void *uuid, char *pci) {
  cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetPCIBusId(pci, 32, device);
  if (e != cudaSuccess)
    return fail("GPU " + std::to_string(device) + ": " + cudaText(e));
  std::memcpy(uuid, &prop.uuid, 16);
  return 0;
}

int muon_nccl_unique_id(void *id) {
  ncclUniqueId u;
  ncclResult_t r = ncclGetUniqueId(&u);
  if (r != ncclSuccess)
    return fail("ncclGetUniqueId: " + ncclText(r, nullptr));
  static_assert(sizeof(u) == MUON_NCCL_ID_BYTES, "ncclUniqueId size");
  std::memcpy(id, &u, sizeof u);
  return 0;
}

int muon_nccl_comm_init(muon_nccl_comm **out, const void *id, int nranks,
                        int rank, int device, double timeout_s) {
  *out = nullptr;
  shutdown = Shutdown();
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return fail("cudaSetDevice(" + std::to_string(device) + "): " + cudaText(e));
  if (!commStream) {
    e = cudaStreamCreateWithFlags(&commStream, cudaStreamNonBlocking);
    if (e != cudaSuccess)
      return fail("cudaStreamCreate: " + cudaText(e));
    // Staging buffers come from the stream-ordered pool; keep what it
    // holds between steps instead of returning it to the driver.
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
      uint64_t keep = UINT64_MAX;
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
  }
  ncclUniqueId u;
  std::memcpy(&u, id, sizeof u);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  auto *c = new muon_nccl_comm();
  c->size = nranks;
  c->rank = rank;
  c->device = device;
  c->timeout = timeout_s;
  ncclResult_t r = ncclCommInitRankConfig(&c->comm, nranks, u, rank, &config);
  std::string why = r != ncclSuccess && r != ncclInProgress
                        ? ncclText(r, c->comm)
                    : c->comm
                        ? settled(c->comm, timeout_s, "waiting for the other ranks")
                        : "no communicator returned";
  if (!why.empty()) {
    if (c->comm)
      ncclCommAbort(c->comm);
    delete c;
    return fail("ncclCommInitRankConfig (rank " + std::to_string(rank) +
                " of " + std::to_string(nranks) + ", GPU " +
                std::to_string(device) + "): " + why);
  }
  *out = c;
  return 0;
}

int muon_nccl_comm_split(muon_nccl_comm *parent, int color, int key,
                         muon_nccl_comm **out, double timeout_s) {
  *out = nullptr;
  shutdown = Shutdown();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  auto *c = new muon_nccl_comm();
  c->device = parent->device;
  c->timeout = timeout_s;
  ncclResult_t r = ncclCommSplit(parent->comm, color, key, &c->comm, &config);
  const char *waiting = "waiting for the other ranks";
  std::string why = r != ncclSuccess && r != ncclInProgress
                        ? ncclText(r, parent->comm)
                        : settled(parent->comm, timeout_s, waiting);
  if (why.empty())
    why = c->comm ? settled(c->comm, timeout_s, waiting)
                  : "no communicator returned";
  if (why.empty()) {
    r = ncclCommCount(c->comm, &c->size);
    if (r == ncclSuccess)
      r = ncclCommUserRank(c->comm, &c->rank);
    if (r != ncclSuccess)
      why = ncclText(r, c->comm);
  }
  if (!why.empty()) {
    if (c->comm)
      ncclCommAbort(c->comm);
    delete c;
    return fail("ncclCommSplit (colour " + std::to_string(color) + "): " + why);
  }
  *out = c;
  return 0;
}

int muon_nccl_comm_size(const muon_nccl_comm *comm) { return comm->size; }
int muon_nccl_comm_rank(const muon_nccl_comm *comm) { return comm->rank; }

void muon_nccl_comm_abort(muon_nccl_comm *comm) {
  if (!comm)
    return;
  ncclCommAbort(comm->comm);
  delete comm;
}

int muon_nccl_comm_destroy(muon_nccl_comm *comm) {
  if (!comm)
    return 0;
  if (commStream) {
    using clock = std::chrono::steady_clock;
    if (!shutdown.started) {
      shutdown.started = true;
      // The clock counts nanoseconds in 64 bits: a timeout past 10^9 s
      // would overflow the deadline into the past, so it is waited as that.
      shutdown.deadline =
          clock::now() +
          std::chrono::duration_cast<clock::duration>(
              std::chrono::duration<double>(std::min(comm->timeout, 1e9)));
    }
    if (shutdown.failed.empty()) {
      double left =
          std::chrono::duration<double>(shutdown.deadline - clock::now())
              .count();
      shutdown.failed = drained(commStream, comm->comm, std::max(0.0, left));
    }
    if (!shutdown.failed.empty()) {
      ncclCommAbort(comm->comm);
      delete comm;
      return fail("destroying a communicator: " + shutdown.failed);
    }
  }
  ncclResult_t r = ncclCommFinalize(comm->comm);
  std::string why = r != ncclSuccess && r != ncclInProgress
                        ? ncclText(r, comm->comm)
                        : settled(comm->comm, comm->timeout, "finishing");
  if (!why.empty()) {
    ncclCommAbort(comm->comm);
    delete comm;
    return fail("ncclCommFinalize: " + why);
  }
  r = ncclCommDestroy(comm->comm);
  delete comm;
  return r == ncclSuccess ? 0 : fail("ncclCommDestroy: " + ncclText(r, nullptr));
}

int muon_nccl_start(muon_nccl_comm *comm, const muon_nccl_collective *c,
                    int memory, muon_nccl_op **out) {
  *out = nullptr;
  const int p = comm->size, me = comm->rank;
  const bool host = memory == MUON_NCCL_HOST;
  if (c->kind < MUON_NCCL_ALL_GATHER_V || c->kind > MUON_NCCL_ALL_TO_ALL_V)
    return fail("unknown collective kind " + std::to_string(c->kind));
  bool rooted = c->kind == MUON_NCCL_GATHER_V ||
                c->kind == MUON_NCCL_SCATTER_V ||
                c->kind == MUON_NCCL_BROADCAST;
  if (rooted && (c->root < 0 || c->root >= p))
    return fail("root " + std::to_string(c->root) + " outside a group of " +
                std::to_string(p));
  bool blocks = c->kind != MUON_NCCL_ALL_REDUCE && c->kind != MUON_NCCL_BROADCAST;
  if (blocks && (!c->counts || !c->displs))
    return fail("a v-collective without counts");
  if (c->kind == MUON_NCCL_ALL_TO_ALL_V && (!c->recv_counts || !c->recv_displs))
    return fail("an all-to-all without receive counts");

  // Elements read from `in` and written to `out` on this member.
  int64_t inElems = 0, outElems = 0;
  switch (c->kind) {
  case MUON_NCCL_ALL_GATHER_V:
    inElems = c->in_count;
    outElems = extent(c->counts, c->displs, p);
    if (c->in_count != c->counts[me])
      return fail("all_gather_v: this member sends " +
                  std::to_string(c->in_count) + " elements, its block has " +
                  std::to_string(c->counts[me]));
    break;
  case MUON_NCCL_GATHER_V:
    inElems = c->in_count;
    outElems = me == c->root ? extent(c->counts, c->displs, p) : 0;
    if (c->in_count != c->counts[me])
      return fail("gather_v: this member sends " + std::to_string(c->in_count) +
                  " elements, its block has " + std::to_string(c->counts[me]));
    break;
  case MUON_NCCL_SCATTER_V:
    inElems = me == c->root ? extent(c->counts, c->displs, p) : 0;
    outElems = c->out_count;
    if (c->out_count != c->counts[me])
      return fail("scatter_v: this member receives " +
                  std::to_string(c->out_count) + " elements, its block has " +
                  std::to_string(c->counts[me]));
    break;
  case MUON_NCCL_REDUCE_SCATTER_V:
    inElems = extent(c->counts, c->displs, p);
    outElems = c->counts[me];
    break;
  case MUON_NCCL_ALL_REDUCE:
    inElems = outElems = c->in_count;
    break;
  case MUON_NCCL_BROADCAST:
    // The root's `out` is the data sent.
    inElems = me == c->root ? c->out_count : 0;
    outElems = c->out_count;
    break;
  case MUON_NCCL_ALL_TO_ALL_V:
    inElems = extent(c->counts, c->displs, p);
    outElems = extent(c->recv_counts, c->recv_displs, p);
    if (c->counts[me] != c->recv_counts[me])
      return fail("all_to_all_v: this member sends itself " +
                  std::to_string(c->counts[me]) + " elements but expects " +
                  std::to_string(c->recv_counts[me]));
    break;
  }
  const float *inSrc = c->kind == MUON_NCCL_BROADCAST ? c->out : c->in;
  if ((inElems > 0 && !inSrc) || (outElems > 0 && !c->out))
    return fail("a null buffer");

  cudaError_t e = cudaSetDevice(comm->device);
  if (e != cudaSuccess)
    return fail("cudaSetDevice: " + cudaText(e));
  auto op = new muon_nccl_op();
  op->comm = comm;
  std::string error;
  float *dStage = nullptr;
  // A failed start frees nothing that work already queued may still use,
  // and never waits: the stream may be stuck behind a dead peer, and the
  // caller is about to abort the communicators.
  auto abandon = [&](std::string why) {
    if (dStage)
      cudaFreeAsync(dStage, commStream);
    muon_nccl_op_free(op);
    return fail(std::move(why));
  };
  cudaStream_t s = commStream;
  // Device views of the input and output (at least one element, so that
  // every pointer handed to NCCL is valid).
  const float *dIn = c->in;
  float *dOut = c->out;
  size_t inBytes = sizeof(float) * inElems, outBytes = sizeof(float) * outElems;
  if (host) {
    size_t total = sizeof(float) * (std::max<int64_t>(inElems, 1) +
                                    std::max<int64_t>(outElems, 1));
    e = cudaMallocAsync(reinterpret_cast<void **>(&dStage), total, s);
    if (e != cudaSuccess)
      return abandon("cudaMallocAsync(" + std::to_string(total) +
                     " bytes): " + cudaText(e));
    dIn = dStage;
    dOut = dStage + std::max<int64_t>(inElems, 1);
    if (inElems > 0) {
      op->pinnedIn = takePinned(inBytes, op->pinnedInBytes, error);
      if (!op->pinnedIn)
        return abandon(error);
      std::memcpy(op->pinnedIn, inSrc, inBytes);
      e = cudaMemcpyAsync(dStage, op->pinnedIn, inBytes,
                          cudaMemcpyHostToDevice, s);
      if (e != cudaSuccess)
        return abandon("cudaMemcpyAsync (to the device): " + cudaText(e));
    }
    if (c->kind == MUON_NCCL_BROADCAST)
      dOut = const_cast<float *>(dIn);
  } else {
    // Device buffers are written by the work queued on the compute stream
    // (the legacy default stream: kernels, Newton-Schulz, the runtime's
    // packing): the collective starts after it.
    if (!computeQueued)
      e = cudaEventCreateWithFlags(&computeQueued, cudaEventDisableTiming);
    if (e == cudaSuccess)
      e = cudaEventRecord(computeQueued, cudaStreamLegacy);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent(s, computeQueued, 0);
    if (e != cudaSuccess)
      return abandon("ordering after the compute stream: " + cudaText(e));
  }

  // A member's own block moves by a device copy, not through NCCL.
  auto selfCopy = [&](float *to, const float *from, int64_t n) {
    if (n > 0 && to != from && e == cudaSuccess)
      e = cudaMemcpyAsync(to, from, sizeof(float) * n,
                          cudaMemcpyDeviceToDevice, s);
  };
  ncclComm_t nc = comm->comm;
  ncclResult_t r = ncclSuccess;
  auto call = [&](ncclResult_t result) {
    if (r == ncclSuccess && result != ncclSuccess && result != ncclInProgress)
      r = result;
  };
  const int64_t *cnt = c->counts, *dsp = c->displs;
  switch (c->kind) {
  case MUON_NCCL_ALL_GATHER_V:
    if (uniform(cnt, dsp, p)) {
      call(ncclAllGather(dIn, dOut, cnt[0], ncclFloat32, nc, s));
      break;
    }
    selfCopy(dOut + dsp[me], dIn, cnt[me]);
    call(ncclGroupStart());
    for (int j = 0; j < p; ++j)
      if (cnt[j] > 0)
        call(ncclBroadcast(dOut + dsp[j], dOut + dsp[j], cnt[j], ncclFloat32,
                           j, nc, s));
    call(ncclGroupEnd());
    break;
  case MUON_NCCL_GATHER_V:
    if (me == c->root)
      selfCopy(dOut + dsp[me], dIn, cnt[me]);
    call(ncclGroupStart());
    if (me != c->root) {
      if (cnt[me] > 0)
        call(ncclSend(dIn, cnt[me], ncclFloat32, c->root, nc, s));
    } else {
      for (int j = 0; j < p; ++j)
        if (j != me && cnt[j] > 0)
          call(ncclRecv(dOut + dsp[j], cnt[j], ncclFloat32, j, nc, s));
    }
    call(ncclGroupEnd());
    break;
  case MUON_NCCL_SCATTER_V:
    if (me == c->root)
      selfCopy(dOut, dIn + dsp[me], cnt[me]);
    call(ncclGroupStart());
    if (me != c->root) {
      if (cnt[me] > 0)
        call(ncclRecv(dOut, cnt[me], ncclFloat32, c->root, nc, s));
    } else {
      for (int j = 0; j < p; ++j)
        if (j != me && cnt[j] > 0)
          call(ncclSend(dIn + dsp[j], cnt[j], ncclFloat32, j, nc, s));
    }
    call(ncclGroupEnd());
    break;
  case MUON_NCCL_REDUCE_SCATTER_V:
    if (uniform(cnt, dsp, p)) {
      call(ncclReduceScatter(dIn, dOut, cnt[0], ncclFloat32,
                             toNccl(c->reduce), nc, s));
      break;
    }
    // One reduction to each member of its block (the receive buffer is
    // only written on the root).
    call(ncclGroupStart());
    for (int j = 0; j < p; ++j)
      if (cnt[j] > 0)
        call(ncclReduce(dIn + dsp[j], dOut, cnt[j], ncclFloat32,
                        toNccl(c->reduce), j, nc, s));
    call(ncclGroupEnd());
    break;
  case MUON_NCCL_ALL_REDUCE:
    if (inElems > 0)
      call(ncclAllReduce(dIn, dOut, inElems, ncclFloat32, toNccl(c->reduce),
                         nc, s));
    break;
  case MUON_NCCL_BROADCAST:
    if (outElems > 0)
      call(ncclBroadcast(dOut, dOut, outElems, ncclFloat32, c->root, nc, s));
    break;
  case MUON_NCCL_ALL_TO_ALL_V: {
    const int64_t *rc = c->recv_counts, *rd = c->recv_displs;
    selfCopy(dOut + rd[me], dIn + dsp[me], cnt[me]);
    call(ncclGroupStart());
    for (int j = 0; j < p; ++j) {
      if (j == me)
        continue;
      if (cnt[j] > 0)
        call(ncclSend(dIn + dsp[j], cnt[j], ncclFloat32, j, nc, s));
      if (rc[j] > 0)
        call(ncclRecv(dOut + rd[j], rc[j], ncclFloat32, j, nc, s));
    }
    call(ncclGroupEnd());
    break;
  }
  }
  if (e != cudaSuccess)
    return abandon("cudaMemcpyAsync (on the device): " + cudaText(e));
  if (r != ncclSuccess)
    return abandon(ncclText(r, nc));
  // A non-blocking communicator may still be enqueueing (connecting peers on
  // first use): wait for that, within the timeout, before queueing more.
  std::string why = settled(nc, comm->timeout,
                            "queueing the collective (a peer did not take "
                            "part)");
  if (!why.empty())
    return abandon(why);
  if (host) {
    if (outElems > 0) {
      op->pinnedOut = takePinned(outBytes, op->pinnedOutBytes, error);
      if (!op->pinnedOut)
        return abandon(error);
      op->hostOut = c->out;
      op->written = writtenRanges(c, p, me, outElems);
      float *pinned = static_cast<float *>(op->pinnedOut);
      for (auto [offset, count] : op->written)
        if (e == cudaSuccess)
          e = cudaMemcpyAsync(pinned + offset, dOut + offset,
                              sizeof(float) * count, cudaMemcpyDeviceToHost,
                              s);
      if (e != cudaSuccess)
        return abandon("cudaMemcpyAsync (to the host): " + cudaText(e));
    }
    // Stream-ordered: the memory is reused only after the copy above.
    e = cudaFreeAsync(dStage, s);
    dStage = nullptr;
    if (e != cudaSuccess)
      return abandon("cudaFreeAsync: " + cudaText(e));
  }
  e = cudaEventCreateWithFlags(&op->done, cudaEventDisableTiming);
  if (e == cudaSuccess)
    e = cudaEventRecord(op->done, s);
  if (e != cudaSuccess)
    return abandon("cudaEventRecord: " + cudaText(e));
  *out = op;
  return 0;
}

int muon_nccl_test(muon_nccl_op *op) {
  if (op->finished)
    return 1;
  cudaError_t e = cudaEventQuery(op->done);
  if (e == cudaErrorNotReady)
    cudaGetLastError(); // not an error: keep it from later calls' checks
  // NCCL's asynchronous error, also once the event has passed (the kernels
  // of a failed communicator may end early, their output not written).
  ncclResult_t state = ncclSuccess;
  ncclResult_t r = ncclCommGetAsyncError(op->comm->comm, &state);
  if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
    lastError = ncclText(r != ncclSuccess ? r : state, op->comm->comm);
    return -1;
  }
  if (e == cudaErrorNotReady)
    return 0;
  if (e != cudaSuccess) {
    lastError = "cudaEventQuery: " + cudaText(e);
    return -1;
  }
  const float *pinned = static_cast<const float *>(op->pinnedOut);
  for (auto [offset, count] : op->written)
    std::memcpy(op->hostOut + offset, pinned + offset, sizeof(float) * count);
  op->finished = true;
  return 1;
}

void muon_nccl_op_free(muon_nccl_op *op) {
  if (!op)
    return;
  // Staging memory goes back to the pool only once the stream has passed
  // the operation's copies; an operation freed before that (a failed job)
  // leaves it to the stream. Never waits: the stream may be stuck behind a
  // dead peer.
  if (op->finished) {
    if (op->pinnedIn)
      freePinned.emplace(op->pinnedInBytes, op->pinnedIn);
    if (op->pinnedOut)
      freePinned.emplace(op->pinnedOutBytes, op->pinnedOut);
  }
  if (op->done)
    cudaEventDestroy(op->done);
  delete op;
}

} // extern "C"
