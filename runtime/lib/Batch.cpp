//===- Batch.cpp - Many rooted gathers or scatters in one exchange --------===//
//
// dist.gather_batch / dist.scatter_batch: the items of a batch (each one
// rooted gather or scatter over the same communicator, with its own tensor,
// dim, root and extents) travel in one all-to-all with per-member counts.
// Member j sends member d the concatenation, in item order, of its pieces
// of the items rooted at d (gather), or, on a root, the pieces for d of the
// items it roots (scatter). A root's own piece of an item it roots is
// copied straight between operand and result instead (Item::local). Every
// piece is checked against its extents as the single collectives check it;
// the batch counts as one call. A broadcast
// batch whose direct exchange would load a root with many copies runs as
// scatter + all-gather instead (muon/Runtime/BroadcastBatch.h).
//
//===----------------------------------------------------------------------===//

#include "Call.h"

#include "muon/Runtime/BroadcastBatch.h"

#include <map>
#include <memory>

using namespace muon::rt;

namespace {

enum BatchKind : int64_t {
  GatherKind = MUON_RT_BATCH_GATHER,
  ScatterKind = MUON_RT_BATCH_SCATTER,
  BroadcastKind = MUON_RT_BATCH_BROADCAST
};

/// One item: its tensors (validated) and where its pieces go.
struct Item {
  TensorView in, out;
  int64_t root = 0;
  std::vector<int64_t> extents;
  int64_t outer = 1, inner = 1, total = 0;
  /// Offset of every member's piece along the split dim.
  std::vector<int64_t> offsets;
  /// Elements of this rank's own piece (the gather's operand, the
  /// scatter's or broadcast's result).
  int64_t piece = 0;
  /// Elements of member `m`'s piece (as the root's full tensor holds it).
  int64_t block(int64_t m) const { return outer * extents[m] * inner; }
  /// Rooted at this rank, its own piece copied straight between operand
  /// and result (or already in place) instead of travelling through the
  /// exchange (packed, copied to itself by the backend, unpacked): on 2
  /// ranks half of every batch's bytes. See markLocal.
  bool local = false;
};

struct Batch {
  int64_t comm = 0;
  BatchKind kind = GatherKind;
  std::vector<Item> items;
};

std::map<int64_t, Batch> open;
int64_t nextBatch = 1;

/// The all-to-all of a batch: counts, and both buffers in the request's
/// staging (the blocks to send, one spare element, the received blocks), so
/// they live until the request completes. The spare element keeps the two
/// pointers apart when a member sends or receives nothing: Open MPI's
/// non-blocking collectives take recvbuf == sendbuf for MPI_IN_PLACE and
/// then ignore the send counts, which hangs the members waiting for them.
struct Exchange {
  Counts send, recv;
  float *sendBuf = nullptr, *recvBuf = nullptr;

  void allocate(Request &r, const std::vector<int64_t> &sendN,
                const std::vector<int64_t> &recvN) {
    send = Counts::of(sendN);
    recv = Counts::of(recvN);
    r.staging.resize(send.total() + 1 + recv.total());
    sendBuf = r.staging.data();
    recvBuf = sendBuf + send.total() + 1;
  }
};

const char *nameOf(BatchKind k) {
  return k == GatherKind    ? "gather_batch"
         : k == ScatterKind ? "scatter_batch"
                            : "broadcast_batch";
}

Batch &batchOf(int64_t handle, const char *op) {
  auto it = open.find(handle);
  if (it == open.end())
    fatal(op, "", "unknown or already ended batch " + std::to_string(handle));
  return it->second;
}

/// Elements per member in a batch's exchange, seen from this rank: `own[r]`
/// are this rank's pieces of the items member r roots (what a gather sends
/// there, what a scatter receives from there), `rooted[m]` member m's pieces
/// of the items this rank roots (what a gather receives, a scatter sends).
/// A local item's own piece is in neither.
struct PieceCounts {
  std::vector<int64_t> own, rooted;
};

PieceCounts pieceCounts(const Batch &b, const Communicator &c) {
  PieceCounts p{std::vector<int64_t>(c.size, 0),
                std::vector<int64_t>(c.size, 0)};
  for (const Item &it : b.items) {
    if (!it.local)
      p.own[it.root] += it.piece;
    if (it.root == c.rank)
      for (int64_t m = 0; m < c.size; ++m)
        if (m != c.rank || !it.local)
          p.rooted[m] += it.block(m);
  }
  return p;
}

/// Marks the items whose own piece can be copied directly (Item::local):
/// rooted here, with the piece exactly where the full tensor holds it
/// (nothing to copy) or operand and result apart, and no other item's
/// result overlapping the operand (the local copies run one after another,
/// so an earlier one would write what a later one reads). Any other piece
/// goes through the exchange, which packs every operand before writing a
/// result. The compiler's items always have results of their own.
void markLocal(Batch &b, const Communicator &c, bool gathering) {
  for (Item &it : b.items) {
    if (it.root != c.rank)
      continue;
    const TensorView &full = gathering ? it.out : it.in;
    const TensorView &piece = gathering ? it.in : it.out;
    // The piece is contiguous in the full tensor when it is one row of
    // blocks (outer 1) or the whole split dim.
    bool contiguous = it.outer == 1 || it.extents[c.rank] == it.total;
    bool inPlace =
        contiguous && piece.data == full.data + it.offsets[c.rank] * it.inner;
    it.local = inPlace || !overlaps(it.in, it.out);
    for (const Item &other : b.items)
      if (&other != &it && overlaps(it.in, other.out))
        it.local = false;
  }
}

/// Copies every local item's own piece from operand to result: after the
/// sends are packed, so every operand a send reads is read first.
void copyLocal(const Batch &b, const Communicator &c, bool gathering) {
  for (const Item &it : b.items)
    if (it.local)
      copyBlock(gathering ? it.out.data : it.in.data,
                gathering ? it.in.data : it.out.data, it.total,
                it.offsets[c.rank], it.extents[c.rank], it.outer, it.inner,
                /*toBlock=*/!gathering);
}

/// The exchange of a gather batch: every member sends each root its pieces;
/// a root unpacks what arrives into its items' results.
void planGather(Batch &b, const Communicator &c, Request &r, Exchange &x) {
  int64_t k = c.size;
  markLocal(b, c, /*gathering=*/true);
  PieceCounts counts = pieceCounts(b, c);
  x.allocate(r, counts.own, counts.rooted);
  std::vector<int64_t> at = x.send.displs;
  for (const Item &it : b.items) {
    if (it.local)
      continue;
    copyFloats(x.sendBuf + at[it.root], it.in.data, it.piece);
    at[it.root] += it.piece;
  }
  copyLocal(b, c, /*gathering=*/true);
  std::vector<Item> items = b.items;
  float *recv = x.recvBuf;
  int64_t me = c.rank;
  Counts rc = x.recv;
  r.finish = [items, recv, me, rc, k] {
    for (int64_t s = 0; s < k; ++s) {
      float *block = recv + rc.displs[s];
      for (const Item &it : items) {
        if (it.root != me || (s == me && it.local))
          continue;
        copyBlock(it.out.data, block, it.total, it.offsets[s], it.extents[s],
                  it.outer, it.inner, /*toBlock=*/false);
        block += it.block(s);
      }
    }
  };
}

/// The exchange of a scatter batch: a root sends each member its pieces of
/// the items it roots; every member copies what arrives into its results.
void planScatter(Batch &b, const Communicator &c, Request &r, Exchange &x) {
  int64_t k = c.size;
  markLocal(b, c, /*gathering=*/false);
  PieceCounts counts = pieceCounts(b, c);
  x.allocate(r, counts.rooted, counts.own);
  for (int64_t d = 0; d < k; ++d) {
    float *block = x.sendBuf + x.send.displs[d];
    for (const Item &it : b.items) {
      if (it.root != c.rank || (d == c.rank && it.local))
        continue;
      copyBlock(it.in.data, block, it.total, it.offsets[d], it.extents[d],
                it.outer, it.inner, /*toBlock=*/true);
      block += it.block(d);
    }
  }
  copyLocal(b, c, /*gathering=*/false);
  std::vector<Item> items = b.items;
  float *recv = x.recvBuf;
  Counts rc = x.recv;
  r.finish = [items, recv, rc] {
    std::vector<int64_t> at = rc.displs;
    for (const Item &it : items) {
      if (it.local)
        continue;
      copyFloats(it.out.data, recv + at[it.root], it.piece);
      at[it.root] += it.piece;
    }
  };
}

/// Two backend operations in sequence: the second starts (from `next`)
/// in the first test() that finds the first complete. Only test() starts
/// it, never progress(): test() runs where the program waits, in the same
/// order on every member, and MPI needs the collectives of a communicator
/// started in one order on all its members. progress(), called between
/// the GEMMs of Newton-Schulz, runs at different points on different ranks
/// (a rank with nothing to orthogonalise never calls it).
class ThenOp : public PendingOp {
public:
  ThenOp(Backend::Op first, std::function<Backend::Op(std::string &)> next)
      : first(std::move(first)), next(std::move(next)) {}
  void progress(std::string &error) override {
    if (second)
      second->progress(error);
    else
      first->progress(error);
  }
  bool test(std::string &error) override {
    if (!second) {
      bool done = first->test(error);
      if (!error.empty() || !done)
        return done;
      second = next(error);
      if (!second)
        return true; // `error` says why
    }
    return second->test(error);
  }

private:
  Backend::Op first;
  std::function<Backend::Op(std::string &)> next;
  Backend::Op second;
};

std::vector<BroadcastItem> broadcastItems(const Batch &b) {
  std::vector<BroadcastItem> items;
  for (const Item &it : b.items)
    items.push_back({it.root, it.piece});
  return items;
}

/// A broadcast batch as scatter + all-gather. Phase 1 (all-to-all): a root
/// sends member d chunk d of each item it roots (item order); member m
/// receives, from each root s in member order, its chunks of the items s
/// roots. Phase 2 (all-gather): every member contributes what it received,
/// as received; every member then copies each member's chunks into the
/// items' results. Returns the bytes this rank hands the backend.
int64_t planBroadcastSplit(Batch &b, const Communicator &c, Request &r) {
  int64_t k = c.size, me = c.rank;
  std::vector<int64_t> sendN(k, 0), recvN(k, 0), gathered(k, 0);
  for (const Item &it : b.items)
    for (int64_t m = 0; m < k; ++m) {
      int64_t chunk = broadcastChunk(it.piece, k, m);
      gathered[m] += chunk;
      if (it.root == me)
        sendN[m] += chunk;
      if (m == me)
        recvN[it.root] += chunk;
    }
  // The backend copies the counts it needs when a call starts.
  Counts send = Counts::of(sendN), recv = Counts::of(recvN),
         all = Counts::of(gathered);
  // One spare element between buffers keeps their pointers apart when one
  // is empty (see Exchange).
  r.staging.resize(send.total() + 1 + recv.total() + 1 + all.total());
  float *sendBuf = r.staging.data();
  float *recvBuf = sendBuf + send.total() + 1;
  float *allBuf = recvBuf + recv.total() + 1;
  for (int64_t d = 0; d < k; ++d) {
    float *at = sendBuf + send.displs[d];
    for (const Item &it : b.items) {
      if (it.root != me)
        continue;
      int64_t n = broadcastChunk(it.piece, k, d);
      copyFloats(at, it.in.data + broadcastChunkOffset(it.piece, k, d), n);
      at += n;
    }
  }
  std::string error;
  Backend &transport = tensorBackend();
  Backend::Op scatter =
      transport.allToAllV(c.backendId, sendBuf, send, recvBuf, recv, error);
  if (!scatter)
    fatal(r.name, r.comm, error);
  int backendId = c.backendId;
  int64_t mine = recv.total();
  r.op = std::make_unique<ThenOp>(
      std::move(scatter),
      [&transport, backendId, recvBuf, mine, allBuf, all](std::string &e) {
        return transport.allGatherV(backendId, recvBuf, mine, allBuf, all, e);
      });
  std::vector<Item> items = b.items;
  r.finish = [items, allBuf, all, k] {
    for (int64_t m = 0; m < k; ++m) {
      float *block = allBuf + all.displs[m];
      for (int64_t s = 0; s < k; ++s)
        for (const Item &it : items) {
          if (it.root != s)
            continue;
          int64_t n = broadcastChunk(it.piece, k, m);
          copyFloats(it.out.data + broadcastChunkOffset(it.piece, k, m), block,
                     n);
          block += n;
        }
    }
  };
  return 4 * (send.total() + mine);
}

} // namespace

extern "C" {

int64_t muon_rt_batch_begin(int64_t comm, int64_t kind) {
  if (kind != GatherKind && kind != ScatterKind && kind != BroadcastKind)
    fatal("batch_begin", "", "unknown batch kind " + std::to_string(kind));
  BatchKind k = static_cast<BatchKind>(kind);
  communicator(comm, nameOf(k)); // an unknown handle fails here
  int64_t id = nextBatch++;
  open[id] = Batch{comm, k, {}};
  return id;
}

void _mlir_ciface_muon_rt_batch_item(int64_t batch, muon_rt_memref *in,
                                     muon_rt_memref *out, int64_t dim,
                                     int64_t root, muon_rt_i64_array *ext) {
  Batch &b = batchOf(batch, "batch_item");
  std::string name =
      std::string(nameOf(b.kind)) + " item " + std::to_string(b.items.size());
  Call c(name, b.comm, in, out, /*counted=*/false);
  Item it;
  c.checkRoot(root);
  it.root = root;
  if (b.kind == BroadcastKind) {
    // A scatter in which every member's piece is the root's whole operand:
    // one block of one "row" of all its elements, at offset 0.
    if (c.comm->rank == root && c.in.shape != c.out.shape)
      c.fail("operand " + c.in.shapeStr() + " and result " + c.out.shapeStr() +
             " differ");
    it.in = c.in;
    it.out = c.out;
    it.piece = c.out.numElements();
    it.inner = c.out.numElements();
    it.extents.assign(c.comm->size, 1);
    it.offsets.assign(c.comm->size, 0);
    it.total = 1;
    b.items.push_back(std::move(it));
    return;
  }
  it.extents = c.extentsOf(ext);
  bool isRoot = c.comm->rank == root;
  bool gathering = b.kind == GatherKind;
  const TensorView &piece = gathering ? c.in : c.out;
  const TensorView &full = gathering ? c.out : c.in;
  if (isRoot)
    c.checkPieces(piece, full, dim, it.extents,
                  gathering ? "operand" : "result",
                  gathering ? "result" : "operand");
  else
    c.checkPiece(piece, dim, it.extents, gathering ? "operand" : "result");
  it.in = c.in;
  it.out = c.out;
  it.piece = piece.numElements();
  // Only the root's full tensor is real; the others' pieces are whole.
  it.outer = piece.outer(dim);
  it.inner = piece.inner(dim);
  for (int64_t e : it.extents) {
    it.offsets.push_back(it.total);
    it.total += e;
  }
  b.items.push_back(std::move(it));
}

int64_t muon_rt_batch_end(int64_t batch, int64_t async) {
  Batch b = std::move(batchOf(batch, "batch_end"));
  open.erase(batch);
  const Communicator &c = communicator(b.comm, nameOf(b.kind));
  counters().collectives++;
  Request r{nullptr,
            {},
            {},
            {},
            nameOf(b.kind),
            c.name,
            tracing() ? traceNow() : 0.0};
  if (b.kind == BroadcastKind &&
      broadcastByScatterAllGather(broadcastLoads(broadcastItems(b), c.size))) {
    // Named apart in errors and measured timelines.
    r.name = "broadcast_batch (scatter + all_gather)";
    counters().bytes_sent += planBroadcastSplit(b, c, r);
    return submit(std::move(r), async);
  }
  Exchange x;
  if (b.kind == GatherKind)
    planGather(b, c, r, x);
  else // a broadcast is a scatter of whole pieces (muon_rt_batch_item)
    planScatter(b, c, r, x);
  counters().bytes_sent += 4 * x.send.total();
  std::string error;
  r.op = tensorBackend().allToAllV(c.backendId, x.sendBuf, x.send, x.recvBuf,
                                   x.recv, error);
  if (!r.op)
    fatal(r.name, r.comm, error);
  return submit(std::move(r), async);
}

} // extern "C"
