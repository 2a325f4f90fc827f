//===- Collectives.cpp - Collectives on tensors over the backend ----------===//
//
// Turns a collective on row-major tensors split along any dim into a
// v-collective on contiguous blocks: when the split dim is not the outermost
// non-trivial one, pieces are packed into (or unpacked from) a staging
// buffer. Shapes are checked against the extents the compiler resolved, so a
// rank that passes the wrong tensor gets an error instead of a corrupt
// exchange. Synchronous calls are the asynchronous ones plus a wait.
//
//===----------------------------------------------------------------------===//

#include "Call.h"

#include "muon/Layout/Layout.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <thread>

using namespace muon::rt;

Counts Counts::of(const std::vector<int64_t> &counts) {
  Counts c;
  c.counts = counts;
  int64_t d = 0;
  for (int64_t n : counts) {
    c.displs.push_back(d);
    d += n;
  }
  return c;
}

int64_t Counts::total() const {
  int64_t t = 0;
  for (int64_t n : counts)
    t += n;
  return t;
}

namespace {

std::map<int64_t, Request> requests;
int64_t nextRequest = 1;

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void waitFor(Request &r) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  double cpuStart = threadCpuSeconds();
  double limit = timeoutSeconds();
  for (int spins = 0;; ++spins) {
    std::string error;
    bool done = r.op->test(error);
    if (!error.empty())
      fatal(r.name, r.comm, error);
    if (done)
      break;
    if (spins < 64)
      continue;
    // Oversubscribed ranks share cores: give the core away while waiting.
    // A yield returns at once when no other process wants the core (a sleep
    // costs the timer slack, ~50 us, on every poll of a short collective);
    // past a few thousand polls the wait is long and sleeping frees the core
    // for good.
    if (spins < 4096)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    double waited = std::chrono::duration<double>(clock::now() - start).count();
    if (waited > limit) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", limit);
      fatal(r.name, r.comm,
            std::string("timed out after ") + text +
                " s (MUON_RT_TIMEOUT_S): a peer did not take part (dead, "
                "hung, or in a different collective)");
    }
  }
  muon_rt_counters &c = counters();
  c.wait_seconds += std::chrono::duration<double>(clock::now() - start).count();
  c.wait_cpu_seconds += threadCpuSeconds() - cpuStart;
  if (r.finish)
    r.finish();
  if (tracing())
    traceEvent(TraceLane::Comm, r.name + " " + r.comm, r.issued, traceNow());
}

} // namespace

void muon::rt::progressRequests() {
  for (auto &[id, r] : requests) {
    std::string error;
    r.op->progress(error);
    if (!error.empty())
      fatal(r.name, r.comm, error);
  }
}

int64_t muon::rt::submit(Request r, int64_t async) {
  if (!async) {
    waitFor(r);
    return 0;
  }
  int64_t id = nextRequest++;
  requests.emplace(id, std::move(r));
  return id;
}

namespace {

/// Where a gather-like call receives: straight into `out` when the pieces
/// are contiguous there (outer == 1), else into staging that `r.finish`
/// unpacks into `out`.
float *receiveBuffer(Request &r, const TensorView &out,
                     const std::vector<int64_t> &extents, int64_t outer,
                     int64_t inner, int64_t total) {
  if (outer <= 1)
    return out.data;
  r.staging.resize(total);
  float *full = out.data;
  float *staged = r.staging.data();
  r.finish = [=] { restage(full, staged, extents, outer, inner, false); };
  return staged;
}

} // namespace

Counts muon::rt::blockCounts(const std::vector<int64_t> &extents, int64_t outer,
                             int64_t inner) {
  std::vector<int64_t> n;
  for (int64_t e : extents)
    n.push_back(outer * e * inner);
  return Counts::of(n);
}

namespace {

Reduce reduceOf(int64_t r, const Call &call) {
  switch (r) {
  case MUON_RT_SUM:
    return Reduce::Sum;
  case MUON_RT_AVG:
    return Reduce::Avg;
  case MUON_RT_MAX:
    return Reduce::Max;
  case MUON_RT_MIN:
    return Reduce::Min;
  default:
    call.fail("unknown reduction " + std::to_string(r));
  }
  return Reduce::Sum; // not reached: fail() aborts the job
}

} // namespace

extern "C" {

int64_t _mlir_ciface_muon_rt_all_gather(int64_t comm, muon_rt_memref *in,
                                        muon_rt_memref *out, int64_t dim,
                                        muon_rt_i64_array *ext, int64_t async) {
  Call c("all_gather", comm, in, out);
  std::vector<int64_t> extents = c.extentsOf(ext);
  c.checkPieces(c.in, c.out, dim, extents, "operand", "result");
  int64_t outer = c.out.outer(dim), inner = c.out.inner(dim);
  Counts counts = blockCounts(extents, outer, inner);
  Request r = c.request();
  float *target =
      receiveBuffer(r, c.out, extents, outer, inner, counts.total());
  std::string error;
  counters().bytes_sent += 4 * c.in.numElements();
  r.op = tensorBackend().allGatherV(c.comm->backendId, c.in.data,
                                    c.in.numElements(), target, counts, error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_gather(int64_t comm, muon_rt_memref *in,
                                    muon_rt_memref *out, int64_t dim,
                                    int64_t root, muon_rt_i64_array *ext,
                                    int64_t async) {
  Call c("gather", comm, in, out);
  std::vector<int64_t> extents = c.extentsOf(ext);
  c.checkRoot(root);
  if (c.comm->rank == root)
    c.checkPieces(c.in, c.out, dim, extents, "operand", "result");
  else
    c.checkPiece(c.in, dim, extents, "operand");
  int64_t outer = c.out.outer(dim), inner = c.out.inner(dim);
  Counts counts = blockCounts(extents, outer, inner);
  Request r = c.request();
  float *target = c.comm->rank == root ? receiveBuffer(r, c.out, extents, outer,
                                                       inner, counts.total())
                                       : c.out.data;
  const float *source = c.in.data;
  if (async && !c.operandCopied) {
    float *copy = r.sent.resize(c.in.numElements());
    copyFloats(copy, c.in.data, c.in.numElements());
    source = copy;
  }
  std::string error;
  counters().bytes_sent += 4 * c.in.numElements();
  r.op = tensorBackend().gatherV(c.comm->backendId, source, c.in.numElements(),
                                 target, counts, static_cast<int>(root), error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_scatter(int64_t comm, muon_rt_memref *in,
                                     muon_rt_memref *out, int64_t dim,
                                     int64_t root, muon_rt_i64_array *ext,
                                     int64_t async) {
  Call c("scatter", comm, in, out);
  std::vector<int64_t> extents = c.extentsOf(ext);
  c.checkRoot(root);
  if (c.comm->rank == root)
    c.checkPieces(c.out, c.in, dim, extents, "result", "operand");
  else
    c.checkPiece(c.out, dim, extents, "result");
  int64_t outer = c.in.outer(dim), inner = c.in.inner(dim);
  Counts counts = blockCounts(extents, outer, inner);
  Request r = c.request();
  const float *source = c.in.data;
  if ((outer > 1 || async) && c.comm->rank == root) {
    // Into `staging`: `sent` may hold the operand itself (request()).
    float *packed = r.staging.resize(counts.total());
    restage(c.in.data, packed, extents, outer, inner, true);
    source = packed;
  }
  std::string error;
  if (c.comm->rank == root)
    counters().bytes_sent += 4 * c.in.numElements();
  r.op = tensorBackend().scatterV(c.comm->backendId, source, counts, c.out.data,
                                  c.out.numElements(), static_cast<int>(root),
                                  error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_reduce_scatter(int64_t comm, muon_rt_memref *in,
                                            muon_rt_memref *out, int64_t dim,
                                            int64_t reduction,
                                            muon_rt_i64_array *ext,
                                            int64_t async) {
  Call c("reduce_scatter", comm, in, out);
  Reduce red = reduceOf(reduction, c);
  std::vector<int64_t> extents = c.extentsOf(ext);
  c.checkPieces(c.out, c.in, dim, extents, "result", "operand");
  int64_t outer = c.in.outer(dim), inner = c.in.inner(dim);
  Counts counts = blockCounts(extents, outer, inner);
  Request r = c.request();
  const float *source = c.in.data;
  // Asynchronous: the caller may free or reuse its input at once, so the
  // runtime sends a copy (docs/runtime.md, "Asynchronous calls").
  if (outer > 1 || async) {
    r.staging.resize(counts.total());
    restage(c.in.data, r.staging.data(), extents, outer, inner, true);
    source = r.staging.data();
  }
  if (red == Reduce::Avg) {
    float *o = c.out.data;
    int64_t n = c.out.numElements();
    float s = 1.0f / static_cast<float>(c.comm->size);
    r.finish = [=] { scaleFloats(o, n, s); };
  }
  std::string error;
  counters().bytes_sent += 4 * c.in.numElements();
  r.op = tensorBackend().reduceScatterV(c.comm->backendId, source, c.out.data,
                                        counts, red, error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_all_reduce(int64_t comm, muon_rt_memref *in,
                                        muon_rt_memref *out, int64_t reduction,
                                        int64_t async) {
  Call c("all_reduce", comm, in, out);
  Reduce red = reduceOf(reduction, c);
  if (c.in.shape != c.out.shape)
    c.fail("operand " + c.in.shapeStr() + " and result " + c.out.shapeStr() +
           " differ");
  Request r = c.request();
  int64_t n = c.out.numElements();
  const float *source = c.in.data;
  if (async) { // sent from a copy, as above
    float *copy = r.staging.resize(n);
    restage(c.in.data, copy, {n}, 1, 1, true);
    source = copy;
  }
  if (red == Reduce::Avg) {
    float *o = c.out.data;
    float s = 1.0f / static_cast<float>(c.comm->size);
    r.finish = [=] { scaleFloats(o, n, s); };
  }
  std::string error;
  counters().bytes_sent += 4 * n;
  r.op = tensorBackend().allReduce(c.comm->backendId, source, c.out.data, n,
                                   red, error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_broadcast(int64_t comm, muon_rt_memref *in,
                                       muon_rt_memref *out, int64_t root,
                                       int64_t async) {
  Call c("broadcast", comm, in, out);
  c.checkRoot(root);
  if (c.comm->rank == root && c.in.shape != c.out.shape)
    c.fail("operand " + c.in.shapeStr() + " and result " + c.out.shapeStr() +
           " differ");
  int64_t n = c.out.numElements();
  Request r = c.request();
  if (c.comm->rank == root)
    copyFloats(c.out.data, c.in.data, n);
  std::string error;
  if (c.comm->rank == root)
    counters().bytes_sent += 4 * n;
  r.op = tensorBackend().broadcast(c.comm->backendId, c.out.data, n,
                                   static_cast<int>(root), error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_all_to_all(int64_t comm, muon_rt_memref *in,
                                        muon_rt_memref *out, int64_t splitDim,
                                        int64_t concatDim, int64_t async) {
  Call c("all_to_all", comm, in, out);
  c.checkDim(splitDim, c.in);
  c.checkDim(concatDim, c.in);
  int64_t k = c.comm->size;
  std::vector<int64_t> sendExt;
  for (int64_t j = 0; j < k; ++j)
    sendExt.push_back(muon::layout::chunk(c.in.shape[splitDim], k, j).size);
  // What arrives from every member: its piece number `rank` of the split,
  // all of one shape, concatenated along concatDim.
  std::vector<int64_t> piece = c.in.shape;
  piece[splitDim] = sendExt[c.comm->rank];
  std::vector<int64_t> expect = piece;
  expect[concatDim] *= k;
  if (c.out.shape != expect)
    c.fail("result " + c.out.shapeStr() + " should be " + shapeStr(expect) +
           " (split dim " + std::to_string(splitDim) + " over " +
           std::to_string(k) + " ranks, concatenated along dim " +
           std::to_string(concatDim) + ")");
  Request r = c.request();
  int64_t sOuter = c.in.outer(splitDim), sInner = c.in.inner(splitDim);
  Counts send = blockCounts(sendExt, sOuter, sInner);
  // One spare element keeps the buffers apart when nothing is sent (Open
  // MPI reads recvbuf == sendbuf as MPI_IN_PLACE; see Batch.cpp).
  r.staging.resize(send.total() + 1 + c.out.numElements());
  float *sendBuf = r.staging.data();
  float *recvBuf = sendBuf + send.total() + 1;
  restage(c.in.data, sendBuf, sendExt, sOuter, sInner, true);
  std::vector<int64_t> recvExt(k, piece[concatDim]);
  TensorView o = c.out;
  int64_t cOuter = o.outer(concatDim), cInner = o.inner(concatDim);
  Counts recv = blockCounts(recvExt, cOuter, cInner);
  float *full = o.data;
  r.finish = [=] { restage(full, recvBuf, recvExt, cOuter, cInner, false); };
  std::string error;
  counters().bytes_sent += 4 * c.in.numElements();
  r.op = tensorBackend().allToAllV(c.comm->backendId, sendBuf, send, recvBuf,
                                   recv, error);
  c.check(r.op, error);
  return submit(std::move(r), async);
}

int64_t _mlir_ciface_muon_rt_root_dim(int64_t comm, muon_rt_memref *in,
                                      int64_t root, int64_t dim) {
  Call c("root_dim", comm, in, in);
  c.checkRoot(root);
  c.checkDim(dim, c.in);
  int64_t size = c.in.shape[dim];
  Request r = c.request();
  std::string error;
  r.op = backend().broadcastBytes(c.comm->backendId, &size, sizeof size,
                                  static_cast<int>(root), error);
  c.check(r.op, error);
  submit(std::move(r), 0);
  return size;
}

int64_t _mlir_ciface_muon_rt_member_dims(int64_t comm, muon_rt_memref *in,
                                         int64_t dim, muon_rt_i64_array *out) {
  Call c("member_dims", comm, in, in);
  c.checkDim(dim, c.in);
  if (!out || out->size != c.comm->size || out->stride != 1)
    c.fail("extent table does not have one entry per member");
  int64_t mine = c.in.shape[dim];
  Request r = c.request();
  std::string error;
  r.op = backend().allGatherBytes(c.comm->backendId, &mine, sizeof mine,
                                  out->aligned + out->offset, error);
  c.check(r.op, error);
  submit(std::move(r), 0);
  int64_t total = 0;
  for (int64_t i = 0; i < out->size; ++i)
    total += out->aligned[out->offset + i];
  return total;
}

void _mlir_ciface_muon_rt_chunk_extents(int64_t length,
                                        muon_rt_i64_array *weights,
                                        muon_rt_i64_array *out) {
  std::vector<int64_t> w = valuesOf(weights);
  if (!out || out->stride != 1 ||
      (!w.empty() && (int64_t)w.size() != out->size))
    fatal("chunk_extents", "", "weights and extent table sizes differ");
  // The compiler's tables are verified; a host's may not be (a zero sum
  // would divide by zero in the rule).
  std::string bad =
      muon::layout::verifyWeights(w, out->size, "the weights table");
  if (length < 0 || !bad.empty())
    fatal("chunk_extents", "",
          length < 0 ? "negative length " + std::to_string(length) : bad);
  std::vector<int64_t> sizes = muon::layout::chunkSizes(length, out->size, w);
  std::copy(sizes.begin(), sizes.end(), out->aligned + out->offset);
}

//--- Host helpers: collective over the world, with the timeout -------------

} // extern "C"

void muon::rt::arriveAll(const std::string &op, const std::string &comm) {
  Request r{nullptr, {}, {}, {}, op, comm, tracing() ? traceNow() : 0.0};
  std::string error;
  r.op = backend().worldBarrier(error);
  if (!r.op)
    fatal(op, comm, error);
  submit(std::move(r), 0);
}

namespace {
/// The world as a one-axis mesh (created on first use, like any comm).
const Communicator &world(int64_t &handle) {
  static int64_t h = 0;
  if (!h) {
    int64_t shape = backend().worldSize(), axis = 0;
    muon_rt_i64_array s{&shape, &shape, 0, 1, 1}, a{&axis, &axis, 0, 1, 1};
    h = _mlir_ciface_muon_rt_comm(&s, &a);
  }
  handle = h;
  return communicator(h, "host");
}

Request hostRequest(const char *name, const Communicator &c) {
  return Request{nullptr, {}, {}, {}, name, c.name,
                 tracing() ? traceNow() : 0.0};
}
} // namespace

extern "C" {

void muon_rt_host_counts(int64_t n, int64_t *counts) {
  int64_t handle;
  const Communicator &c = world(handle);
  Request r = hostRequest("host_counts", c);
  std::string error;
  r.op = backend().allGatherBytes(c.backendId, &n, sizeof n, counts, error);
  if (!r.op)
    fatal(r.name, r.comm, error);
  submit(std::move(r), 0);
}

void muon_rt_host_gather_f32(const float *data, int64_t n, float *out,
                             const int64_t *counts) {
  int64_t handle;
  const Communicator &c = world(handle);
  Request r = hostRequest("host_gather", c);
  if (counts[c.rank] != n)
    fatal(r.name, r.comm,
          "this rank sends " + std::to_string(n) +
              " elements but the counts "
              "say " +
              std::to_string(counts[c.rank]));
  Counts all = Counts::of(std::vector<int64_t>(counts, counts + c.size));
  std::string error;
  r.op = backend().gatherV(c.backendId, data, n, out, all, 0, error);
  if (!r.op)
    fatal(r.name, r.comm, error);
  submit(std::move(r), 0);
}

void muon_rt_host_all_gather_f64(const double *data, int64_t n, double *out) {
  int64_t handle;
  const Communicator &c = world(handle);
  Request r = hostRequest("host_all_gather", c);
  std::string error;
  r.op = backend().allGatherBytes(
      c.backendId, data, n * static_cast<int64_t>(sizeof(double)), out, error);
  if (!r.op)
    fatal(r.name, r.comm, error);
  submit(std::move(r), 0);
}

void muon_rt_wait(int64_t request) {
  if (request == 0) // a synchronous call's result, or dist.completed_token
    return;
  auto it = requests.find(request);
  if (it == requests.end())
    fatal("wait", "",
          "unknown or already completed request " + std::to_string(request));
  Request r = std::move(it->second);
  requests.erase(it);
  waitFor(r);
}

} // extern "C"
