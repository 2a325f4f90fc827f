//===- collectives_check.cpp - The runtime's collectives on real data -----===//
//
// Run under mpirun with 3 ranks (test/Runtime/collectives.test). Exercises
// the calls that compiled Muon steps do not use today (all_gather,
// reduce_scatter, all_reduce max/min, all_to_all, asynchronous requests)
// plus uneven extents and dims other than 0, through the C ABI exactly as
// compiled code calls it. Prints "ok <case>" per case on rank 0; a wrong
// value prints "MISMATCH" and exits 1. With argument `device` the tensors
// are in device memory inside a target=cuda step (the GPU's, or host memory
// behind the stand-in library host_device_library.cpp). With argument
// `bad-wait` it waits on an unknown request, with `bad-batch` rank 1 adds a
// batch item whose piece has the wrong size, with `host-arg` a target=cuda
// step is handed an entry argument in host memory (the runtime must fail
// with a message).
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <vector>

// What compiled steps allocate through (the runtime provides it).
extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes);

namespace {

/// Whether the tensors live in device memory, inside a target=cuda step
/// (argument `device`; without a GPU, MUON_RT_CUDA_LIBRARY names the host
/// stand-in library).
bool onDevice = false;

/// A float tensor with its ranked descriptor, passable as muon_rt_memref.
/// On the device, ref() uploads `data` when it changed since the last
/// upload or download, and got() downloads it.
struct T {
  std::vector<float> data, synced;
  float *device = nullptr;
  std::vector<int64_t> desc;
  muon_rt_memref descriptor;
  T(std::vector<int64_t> shape, float fill = 0) {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    data.assign(n, fill);
    desc = {reinterpret_cast<int64_t>(data.data()),
            reinterpret_cast<int64_t>(data.data()), 0};
    desc.insert(desc.end(), shape.begin(), shape.end());
    std::vector<int64_t> st(shape.size(), 1);
    for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
      st[i] = st[i + 1] * shape[i + 1];
    desc.insert(desc.end(), st.begin(), st.end());
    descriptor = {static_cast<int64_t>(shape.size()), desc.data()};
  }
  T(const T &) = delete;
  ~T() {
    if (device)
      muon_rt_cuda_free(device);
  }
  muon_rt_memref *ref() {
    float *at = data.data();
    if (onDevice) {
      if (!device || data != synced) {
        if (device)
          muon_rt_cuda_free(device);
        device = muon_rt_cuda_to_device(data.data(), data.size());
        synced = data;
      }
      at = device;
    }
    desc[0] = desc[1] = reinterpret_cast<int64_t>(at);
    return &descriptor;
  }
  const std::vector<float> &got() {
    if (onDevice && device) {
      muon_rt_cuda_to_host(data.data(), device, data.size());
      synced = data;
    }
    return data;
  }
};

struct I64 {
  std::vector<int64_t> v;
  muon_rt_i64_array a;
  I64(std::vector<int64_t> values) : v(std::move(values)) {
    a = {v.data(), v.data(), 0, static_cast<int64_t>(v.size()), 1};
  }
};

int rank, failures = 0;

void expect(const char *name, const std::vector<float> &got,
            const std::vector<float> &want) {
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i)
    ok = std::fabs(got[i] - want[i]) <= 1e-6f;
  if (!ok) {
    ++failures;
    std::printf("MISMATCH %s on rank %d:", name, rank);
    for (float g : got)
      std::printf(" %g", g);
    std::printf("\n");
  }
}

void done(const char *name) {
  muon_rt_barrier();
  if (rank == 0)
    std::printf("ok %s\n", name);
}

} // namespace

int main(int argc, char **argv) {
  muon_rt_init(&argc, &argv);
  rank = static_cast<int>(muon_rt_world_rank());
  onDevice = argc > 1 && std::strcmp(argv[1], "device") == 0;
  if (onDevice)
    muon_rt_cuda_step_begin();
  I64 mesh({3}), axes({0});
  int64_t comm = _mlir_ciface_muon_rt_comm(&mesh.a, &axes.a);
  if (argc > 1 && std::strcmp(argv[1], "bad-wait") == 0)
    muon_rt_wait(42);
  if (argc > 1 && std::strcmp(argv[1], "mesh-overflow") == 0) {
    // 3 (2^62 + 1)^4 wraps to 3 in 64 bits, the world size: refused, not
    // taken for a 3-rank mesh.
    int64_t big = (int64_t(1) << 62) + 1;
    I64 wrapping({3, big, big, big, big}), first({0});
    _mlir_ciface_muon_rt_comm(&wrapping.a, &first.a);
  }
  if (argc > 1 && std::strcmp(argv[1], "zero-weights") == 0) {
    // A host's weights table is checked: a zero sum would divide by zero.
    I64 weights({0, 0}), out({0, 0});
    _mlir_ciface_muon_rt_chunk_extents(10, &weights.a, &out.a);
  }
  if (argc > 1 && std::strcmp(argv[1], "bad-runs") == 0) {
    // A shape table whose runs do not start at rank 0 is refused, not
    // read as if they did.
    I64 shapes({MUON_RT_SHAPE_RUNS, 3, 1, 1, 2});
    T arg({2}, 1.0f);
    _mlir_ciface_muon_rt_check_arg(3, arg.ref(), &shapes.a);
  }
  if (argc > 1 && std::strcmp(argv[1], "wrong-dims") == 0) {
    // Runs of 3-D shapes read for a 1-D argument: the entries would also
    // split into runs of 1-D shapes, the header's dim count tells.
    I64 shapes({MUON_RT_SHAPE_RUNS, 3, 3, 0, 2, 1, 1});
    T arg({2}, 1.0f);
    _mlir_ciface_muon_rt_check_arg(6, arg.ref(), &shapes.a);
  }
  if (argc > 1 && std::strcmp(argv[1], "old-table") == 0) {
    // A table of one row per rank (an older compiler's) is refused.
    I64 shapes({2, 2, 2});
    T arg({2}, 1.0f);
    _mlir_ciface_muon_rt_check_arg(5, arg.ref(), &shapes.a);
  }
  if (argc > 1 && std::strcmp(argv[1], "huge-vector") == 0 && rank == 0) {
    // A container asked for more than the address space throws
    // std::length_error, not bad_alloc: still the out-of-memory line.
    std::vector<float> v(static_cast<size_t>(PTRDIFF_MAX));
    std::printf("%zu\n", v.size());
  }
  if (argc > 1 && std::strcmp(argv[1], "negative-size") == 0) {
    // A descriptor with a negative size is refused, not handed to MPI.
    std::vector<float> data(2, 1.0f);
    auto at = reinterpret_cast<int64_t>(data.data());
    std::vector<int64_t> desc = {at, at, 0, -2, 1};
    muon_rt_memref ref{1, desc.data()};
    _mlir_ciface_muon_rt_all_reduce(comm, &ref, &ref, MUON_RT_SUM, 0);
  }
  if (argc > 1 && std::strcmp(argv[1], "huge-size") == 0) {
    // Sizes whose product overflows 64 bits are refused, not wrapped.
    std::vector<float> data(2, 1.0f);
    auto at = reinterpret_cast<int64_t>(data.data());
    int64_t big = int64_t(1) << 33;
    std::vector<int64_t> desc = {at, at, 0, big, big, big, 1};
    muon_rt_memref ref{2, desc.data()};
    _mlir_ciface_muon_rt_all_reduce(comm, &ref, &ref, MUON_RT_SUM, 0);
  }
  if (argc > 1 && std::strcmp(argv[1], "uncaught") == 0 && rank == 1)
    throw std::runtime_error("a host's own exception");
  if (argc > 1 && std::strcmp(argv[1], "huge-alloc") == 0 && rank == 0)
    // Size plus header must not wrap to a small block.
    _mlir_memref_to_llvm_alloc(SIZE_MAX);
  if (argc > 1 && std::strcmp(argv[1], "host-arg") == 0) {
    // A target=cuda step's entry arguments must be memory of the rank's
    // GPU: device memory passes the check, host memory ends the job.
    onDevice = true;
    muon_rt_cuda_step_begin();
    I64 shapes({MUON_RT_SHAPE_RUNS, 3, 1, 0, 2});
    T onGpu({2}, 1.0f);
    _mlir_ciface_muon_rt_check_arg(0, onGpu.ref(), &shapes.a);
    std::vector<float> host(2, 1.0f);
    auto at = reinterpret_cast<int64_t>(host.data());
    std::vector<int64_t> desc = {at, at, 0, 2, 1};
    muon_rt_memref ref{1, desc.data()};
    _mlir_ciface_muon_rt_check_arg(7, &ref, &shapes.a);
  }

  { // Shape tables of runs: rank 0 holds 2x4, ranks 1 and 2 hold 1x4 (two
    // runs), then every rank 3x4 (one run); each rank passes its own.
    I64 twoRuns({MUON_RT_SHAPE_RUNS, 3, 2, 0, 2, 4, 1, 1, 4});
    T mine({rank == 0 ? 2 : 1, 4}, 1.0f);
    _mlir_ciface_muon_rt_check_arg(0, mine.ref(), &twoRuns.a);
    I64 oneRun({MUON_RT_SHAPE_RUNS, 3, 2, 0, 3, 4});
    T same({3, 4}, 1.0f);
    _mlir_ciface_muon_rt_check_arg(1, same.ref(), &oneRun.a);
    done("check_arg shape runs");
  }

  { // all_gather along dim 1, uneven pieces 2, 2, 1 of 5 columns.
    I64 ext({2, 2, 1});
    int64_t e = ext.v[rank];
    T in({2, e}), out({2, 5});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < e; ++j)
        in.data[i * e + j] = rank * 100 + i * 10 + j;
    _mlir_ciface_muon_rt_all_gather(comm, in.ref(), out.ref(), 1, &ext.a, 0);
    expect("all_gather", out.got(),
           {0, 1, 100, 101, 200, 10, 11, 110, 111, 210});
    done("all_gather dim 1 uneven");
  }
  { // reduce_scatter sum and avg along dim 0: rows 2, 2, 1 of 5.
    I64 ext({2, 2, 1});
    T in({5, 2});
    for (int64_t k = 0; k < 10; ++k)
      in.data[k] = (rank + 1) * k;
    T out({ext.v[rank], 2});
    _mlir_ciface_muon_rt_reduce_scatter(comm, in.ref(), out.ref(), 0, MUON_RT_SUM,
                                        &ext.a, 0);
    std::vector<float> want;
    for (int64_t k = 0; k < 2 * ext.v[rank]; ++k)
      want.push_back(6.0f * (4 * rank + k));
    expect("reduce_scatter sum", out.got(), want);
    _mlir_ciface_muon_rt_reduce_scatter(comm, in.ref(), out.ref(), 0, MUON_RT_AVG,
                                        &ext.a, 0);
    for (float &w : want)
      w /= 3;
    expect("reduce_scatter avg", out.got(), want);
    done("reduce_scatter sum/avg uneven");
  }
  { // all_reduce max and min.
    T in({2}, 0), out({2});
    in.data = {float(rank), float(-rank)};
    _mlir_ciface_muon_rt_all_reduce(comm, in.ref(), out.ref(), MUON_RT_MAX, 0);
    expect("all_reduce max", out.got(), {2, 0});
    _mlir_ciface_muon_rt_all_reduce(comm, in.ref(), out.ref(), MUON_RT_MIN, 0);
    expect("all_reduce min", out.got(), {0, -2});
    done("all_reduce max/min");
  }
  { // all_to_all: row j of every rank goes to rank j, concatenated on dim 1.
    T in({3, 2}), out({1, 6});
    for (int64_t k = 0; k < 6; ++k)
      in.data[k] = rank * 10 + k;
    _mlir_ciface_muon_rt_all_to_all(comm, in.ref(), out.ref(), 0, 1, 0);
    std::vector<float> want;
    for (int src = 0; src < 3; ++src)
      for (int c = 0; c < 2; ++c)
        want.push_back(src * 10 + rank * 2 + c);
    expect("all_to_all", out.got(), want);
    done("all_to_all split 0 concat 1");
  }
  { // Asynchronous: start two, wait in reverse order.
    I64 ext({1, 1, 1});
    T a({1}, float(rank)), ga({3}), b({2}, 1.0f), rb({2});
    int64_t r1 = _mlir_ciface_muon_rt_all_gather(comm, a.ref(), ga.ref(), 0,
                                                 &ext.a, 1);
    int64_t r2 = _mlir_ciface_muon_rt_all_reduce(comm, b.ref(), rb.ref(),
                                                 MUON_RT_SUM, 1);
    // The runtime sends a copy of an asynchronous call's input: the caller
    // may change it at once.
    if (!onDevice)
      std::fill(b.data.begin(), b.data.end(), 100.0f);
    muon_rt_wait(r2);
    muon_rt_wait(r1);
    expect("async all_gather", ga.got(), {0, 1, 2});
    expect("async all_reduce", rb.got(), {3, 3});
    done("async requests");
  }
  { // broadcast from member 2; weighted scatter from 0; gather to 1.
    T in({2}, float(rank + 5)), out({2});
    _mlir_ciface_muon_rt_broadcast(comm, in.ref(), out.ref(), 2, 0);
    expect("broadcast", out.got(), {7, 7});
    I64 ext({1, 2, 3});
    T full({6}), piece({ext.v[rank]});
    for (int k = 0; k < 6; ++k)
      full.data[k] = rank == 0 ? k : -1;
    _mlir_ciface_muon_rt_scatter(comm, full.ref(), piece.ref(), 0, 0, &ext.a, 0);
    std::vector<float> want;
    for (int k = 0; k < ext.v[rank]; ++k)
      want.push_back((rank == 0 ? 0 : rank == 1 ? 1 : 3) + k);
    expect("scatter weighted", piece.got(), want);
    T back({6}, -9);
    _mlir_ciface_muon_rt_gather(comm, piece.ref(), back.ref(), 0, 1, &ext.a, 0);
    if (rank == 1)
      expect("gather", back.got(), {0, 1, 2, 3, 4, 5});
    done("broadcast, weighted scatter, gather");
  }
  { // Batches: three gathers (two to member 2, along dims 1 and 1, one to
    // member 0 along dim 0; uneven pieces) in one exchange, then the same
    // pieces scattered back in one asynchronous exchange.
    I64 e0({2, 2, 1}), e1({2, 1, 1}), e2({1, 1, 1});
    T a({2, e0.v[rank]}), b({e1.v[rank], 3}), c({2, 1});
    for (size_t k = 0; k < a.data.size(); ++k)
      a.data[k] = rank * 100 + k;
    for (size_t k = 0; k < b.data.size(); ++k)
      b.data[k] = 1000 + rank * 100 + k;
    c.data = {float(-rank), float(-10 - rank)};
    T ga({2, 5}, -9), gb({4, 3}, -9), gc({2, 3}, -9);
    int64_t batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_GATHER);
    if (argc > 1 && std::strcmp(argv[1], "bad-batch") == 0 && rank == 1) {
      T wrong({1, 3});
      _mlir_ciface_muon_rt_batch_item(batch, wrong.ref(), gb.ref(), 1, 0, &e2.a);
    }
    _mlir_ciface_muon_rt_batch_item(batch, a.ref(), ga.ref(), 1, 2, &e0.a);
    _mlir_ciface_muon_rt_batch_item(batch, b.ref(), gb.ref(), 0, 0, &e1.a);
    _mlir_ciface_muon_rt_batch_item(batch, c.ref(), gc.ref(), 1, 2, &e2.a);
    if (muon_rt_batch_end(batch, 0) != 0)
      ++failures, std::printf("MISMATCH synchronous batch returned a request\n");
    if (rank == 2) {
      expect("gather_batch item 0", ga.got(),
             {0, 1, 100, 101, 200, 2, 3, 102, 103, 201});
      expect("gather_batch item 2", gc.got(), {0, -1, -2, -10, -11, -12});
    }
    if (rank == 0)
      expect("gather_batch item 1", gb.got(),
             {1000, 1001, 1002, 1003, 1004, 1005, 1100, 1101, 1102, 1200,
              1201, 1202});
    T sa({2, e0.v[rank]}, -9), sb({e1.v[rank], 3}, -9);
    batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_SCATTER);
    _mlir_ciface_muon_rt_batch_item(batch, gb.ref(), sb.ref(), 0, 0, &e1.a);
    _mlir_ciface_muon_rt_batch_item(batch, ga.ref(), sa.ref(), 1, 2, &e0.a);
    int64_t req = muon_rt_batch_end(batch, 1);
    muon_rt_wait(req);
    expect("scatter_batch item 0", sb.got(), b.data);
    expect("scatter_batch item 1", sa.got(), a.data);
    done("gather_batch / scatter_batch uneven, dims 0 and 1, async");
  }
  { // A broadcast batch: a 2x3 tensor from member 0 and a 4-vector from
    // member 2, to every member in one exchange.
    T a({2, 3}, -1), b({4}, -1), ra({2, 3}, -9), rb({4}, -9);
    if (rank == 0)
      for (int k = 0; k < 6; ++k)
        a.data[k] = 10 + k;
    if (rank == 2)
      b.data = {7, 8, 9, 6};
    I64 none(std::vector<int64_t>{});
    int64_t batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_BROADCAST);
    _mlir_ciface_muon_rt_batch_item(batch, a.ref(), ra.ref(), 0, 0, &none.a);
    _mlir_ciface_muon_rt_batch_item(batch, b.ref(), rb.ref(), 0, 2, &none.a);
    muon_rt_wait(muon_rt_batch_end(batch, 1));
    expect("broadcast_batch item 0", ra.got(), {10, 11, 12, 13, 14, 15});
    expect("broadcast_batch item 1", rb.got(), {7, 8, 9, 6});
    done("broadcast_batch from two roots, async");
  }
  { // A broadcast batch large enough to run as scatter + all-gather
    // (muon/Runtime/BroadcastBatch.h): 800003 elements from member 1, in
    // place (operand and result the same buffer), chunks 266668/266668/
    // 266667 (direct: 1600006 on member 1; split: 533335 + 533342);
    // 7 elements from member 0 (chunks 3/2/2); 1 element from member 2
    // (chunks 1/0/0: two members have nothing to pass on).
    const int64_t n = 800003;
    T a({n}, -9), b({7}, -1), rb({7}, -9), c({1}, -1), rc({1}, -9);
    if (rank == 1)
      for (int64_t i = 0; i < n; ++i)
        a.data[i] = static_cast<float>(i % 1000) + 0.5f;
    if (rank == 0)
      b.data = {1, 2, 3, 4, 5, 6, 7};
    if (rank == 2)
      c.data = {42};
    I64 none(std::vector<int64_t>{});
    muon_rt_counters before;
    muon_rt_get_counters(&before);
    int64_t batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_BROADCAST);
    _mlir_ciface_muon_rt_batch_item(batch, a.ref(), a.ref(), 0, 1, &none.a);
    _mlir_ciface_muon_rt_batch_item(batch, b.ref(), rb.ref(), 0, 0, &none.a);
    _mlir_ciface_muon_rt_batch_item(batch, c.ref(), rc.ref(), 0, 2, &none.a);
    muon_rt_batch_end(batch, 0);
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; ++i)
      want[i] = static_cast<float>(i % 1000) + 0.5f;
    expect("split broadcast_batch item 0", a.got(), want);
    expect("split broadcast_batch item 1", rb.got(), {1, 2, 3, 4, 5, 6, 7});
    expect("split broadcast_batch item 2", rc.got(), {42});
    // Member 1 handed the backend its whole item (phase 1) and the chunks
    // it received (266668 + 2 + 0, phase 2); the direct exchange would have
    // sent two copies of the item.
    muon_rt_counters after;
    muon_rt_get_counters(&after);
    int64_t sent = after.bytes_sent - before.bytes_sent;
    if (rank == 1 && sent != 4 * (n + 266670))
      ++failures, std::printf("MISMATCH split broadcast_batch sent %lld bytes\n",
                              (long long)sent);
    done("broadcast_batch as scatter + all-gather, uneven chunks, in place");
  }
  { // Own pieces. A root's piece of a gather or scatter batch item is
    // copied between its operand and result directly, not handed to the
    // backend; where the two overlap (a root's piece inside its own full
    // tensor) it travels through the exchange as the others' do.
    I64 ext({1, 2, 3});
    std::vector<float> mine;
    for (int64_t k = 0; k < ext.v[rank]; ++k)
      mine.push_back(10 * rank + k);
    T piece({ext.v[rank]}), full({6}, -9), back({ext.v[rank]}, -9);
    piece.data = mine;
    muon_rt_counters before, after;
    muon_rt_get_counters(&before);
    int64_t batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_GATHER);
    _mlir_ciface_muon_rt_batch_item(batch, piece.ref(), full.ref(), 0, 1,
                                    &ext.a);
    muon_rt_batch_end(batch, 0);
    muon_rt_get_counters(&after);
    if (rank == 1)
      expect("gather_batch own piece", full.got(), {0, 10, 11, 20, 21, 22});
    int64_t sent = after.bytes_sent - before.bytes_sent;
    if (sent != (rank == 1 ? 0 : 4 * ext.v[rank]))
      ++failures, std::printf("MISMATCH own piece: rank %d sent %lld bytes\n",
                              rank, (long long)sent);
    batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_SCATTER);
    _mlir_ciface_muon_rt_batch_item(batch, full.ref(), back.ref(), 0, 1,
                                    &ext.a);
    muon_rt_wait(muon_rt_batch_end(batch, 1));
    expect("scatter_batch own piece", back.got(), mine);
    if (!onDevice) {
      // Member 1's operand inside the result: exactly its piece (elements
      // 1-2; nothing to copy, nothing sent), then elements 0-1 (overlapping
      // its piece elsewhere: sent through the exchange, copied out first).
      for (int64_t at : {1, 0}) {
        T inPlace({6}, -9);
        inPlace.data[at] = 10, inPlace.data[at + 1] = 11;
        std::vector<int64_t> d = {0, 0, at, 2, 1};
        d[0] = d[1] = reinterpret_cast<int64_t>(inPlace.data.data());
        muon_rt_memref view{1, d.data()};
        muon_rt_memref *own = rank == 1 ? &view : piece.ref();
        muon_rt_get_counters(&before);
        batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_GATHER);
        _mlir_ciface_muon_rt_batch_item(batch, own, inPlace.ref(), 0, 1,
                                        &ext.a);
        muon_rt_batch_end(batch, 0);
        muon_rt_get_counters(&after);
        if (rank == 1) {
          expect("gather_batch in place", inPlace.got(),
                 {0, 10, 11, 20, 21, 22});
          if (after.bytes_sent - before.bytes_sent != (at == 1 ? 0 : 8))
            ++failures,
                std::printf("MISMATCH in-place gather at %lld sent "
                            "%lld bytes\n",
                            (long long)at,
                            (long long)(after.bytes_sent - before.bytes_sent));
        }
        if (at == 0)
          continue;
        T out({ext.v[rank]}, -9);
        for (float &v : inPlace.data)
          v += 100;
        batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_SCATTER);
        _mlir_ciface_muon_rt_batch_item(
            batch, inPlace.ref(), rank == 1 ? &view : out.ref(), 0, 1, &ext.a);
        muon_rt_batch_end(batch, 0);
        if (rank == 1)
          expect("scatter_batch in place", inPlace.got(),
                 {100, 110, 111, 120, 121, 122});
        else
          expect("scatter_batch in place", out.got(),
                 rank == 0 ? std::vector<float>{100}
                           : std::vector<float>{120, 121, 122});
      }
    }
    if (!onDevice) {
      // Member 1's operand of item 1 is where item 0's result receives
      // member 1's own piece: item 1 sends what it held at the call
      // (7 7), not what item 0's copy wrote there (10 11).
      T full0({6}, 7), full1({6}, -9);
      std::vector<int64_t> d = {0, 0, 1, 2, 1};
      d[0] = d[1] = reinterpret_cast<int64_t>(full0.data.data());
      muon_rt_memref view{1, d.data()};
      batch = muon_rt_batch_begin(comm, MUON_RT_BATCH_GATHER);
      _mlir_ciface_muon_rt_batch_item(batch, piece.ref(), full0.ref(), 0, 1,
                                      &ext.a);
      _mlir_ciface_muon_rt_batch_item(batch, rank == 1 ? &view : piece.ref(),
                                      full1.ref(), 0, 1, &ext.a);
      muon_rt_batch_end(batch, 0);
      if (rank == 1) {
        expect("gather_batch item 0 beside an aliased item", full0.got(),
               {0, 10, 11, 20, 21, 22});
        expect("gather_batch item 1 reading item 0's result", full1.got(),
               {0, 7, 7, 20, 21, 22});
      }
    }
    done("gather_batch / scatter_batch own pieces, apart and in place");
  }
  {
    muon_rt_counters c;
    muon_rt_get_counters(&c);
    // Every call above (a batch counts once); the batches on views into
    // other buffers run on host memory only.
    if (c.collectives != (onDevice ? 17 : 21))
      ++failures, std::printf("MISMATCH collectives counter %lld\n",
                              (long long)c.collectives);
    done("counters");
  }
  if (onDevice)
    muon_rt_cuda_step_end();
  muon_rt_finalize();
  return failures ? 1 : 0;
}
