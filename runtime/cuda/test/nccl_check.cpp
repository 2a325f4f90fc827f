//===- nccl_check.cpp - The NCCL transport library on one GPU -------------===//
//
// Every collective of libmuon_runtime_nccl on a one-rank world, with host
// buffers (staged through pinned and device memory) and device buffers,
// checked element by element; a split; the argument errors. One rank is
// what a one-GPU machine can run (NCCL needs a GPU per rank); the step over
// several ranks is test/Run/nccl-transport-4.test. Without a device: exit 77.
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime_nccl.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

/// One line per check; `detail` (a message, or the error expected) is
/// printed with it.
void report(bool ok, const std::string &what, const std::string &detail = "") {
  std::printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  failures += !ok;
}

/// Runs one collective to completion; returns "" or the failure.
std::string run(muon_nccl_comm *comm, const muon_nccl_collective &c,
                int memory) {
  muon_nccl_op *op = nullptr;
  if (muon_nccl_start(comm, &c, memory, &op) != 0)
    return muon_nccl_error();
  int state;
  while ((state = muon_nccl_test(op)) == 0) {
  }
  std::string error = state < 0 ? muon_nccl_error() : "";
  muon_nccl_op_free(op);
  return error;
}

/// A collective on `in` with the output compared to `want`, in host memory
/// and in device memory.
void check(muon_nccl_comm *comm, const std::string &name,
           muon_nccl_collective c, const std::vector<float> &in,
           std::vector<float> out, const std::vector<float> &want) {
  for (int memory : {MUON_NCCL_HOST, MUON_NCCL_DEVICE}) {
    std::vector<float> result = out;
    float *dIn = nullptr, *dOut = nullptr;
    muon_nccl_collective k = c;
    if (memory == MUON_NCCL_HOST) {
      k.in = in.data();
      k.out = result.data();
    } else {
      cudaMalloc(&dIn, sizeof(float) * (in.size() + 1));
      cudaMalloc(&dOut, sizeof(float) * (out.size() + 1));
      cudaMemcpy(dIn, in.data(), sizeof(float) * in.size(),
                 cudaMemcpyHostToDevice);
      cudaMemcpy(dOut, out.data(), sizeof(float) * out.size(),
                 cudaMemcpyHostToDevice);
      k.in = dIn;
      k.out = dOut;
    }
    std::string error = run(comm, k, memory);
    if (memory == MUON_NCCL_DEVICE) {
      cudaMemcpy(result.data(), dOut, sizeof(float) * out.size(),
                 cudaMemcpyDeviceToHost);
      cudaFree(dIn);
      cudaFree(dOut);
    }
    std::string label =
        name + (memory == MUON_NCCL_HOST ? " (host)" : " (device)");
    if (!error.empty()) {
      report(false, label, error);
      continue;
    }
    std::string bad;
    for (size_t i = 0; i < want.size() && bad.empty(); ++i)
      if (result[i] != want[i])
        bad = "element " + std::to_string(i) + " is " +
              std::to_string(result[i]) + ", expected " +
              std::to_string(want[i]);
    report(bad.empty(), label, bad);
  }
}

void expectError(muon_nccl_comm *comm, const std::string &name,
                 const muon_nccl_collective &c, const std::string &text) {
  std::string error = run(comm, c, MUON_NCCL_HOST);
  report(error.find(text) != std::string::npos, "error: " + name,
         error.empty() ? "no error" : error);
}

} // namespace

int main() {
  if (muon_nccl_device_count() < 1) {
    std::printf("SKIPPED: no CUDA device on this machine\n");
    return 77;
  }
  std::printf("NCCL version code %d\n", muon_nccl_version());
  char id[MUON_NCCL_ID_BYTES];
  muon_nccl_comm *world = nullptr;
  if (muon_nccl_unique_id(id) != 0 ||
      muon_nccl_comm_init(&world, id, 1, 0, 0, 60) != 0) {
    std::printf("FAIL init: %s\n", muon_nccl_error());
    return 1;
  }
  muon_nccl_comm *sub = nullptr;
  bool split = muon_nccl_comm_split(world, 3, 0, &sub, 60) == 0;
  report(split && muon_nccl_comm_size(sub) == 1 && muon_nccl_comm_rank(sub) == 0,
         "split", split ? "" : muon_nccl_error());
  if (!split)
    sub = world;

  // Data: 0..n-1 offset by 0.5 (exact in fp32).
  auto iota = [](size_t n, float base) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
      v[i] = base + static_cast<float>(i);
    return v;
  };
  int64_t five = 5, zero = 0, two = 2;
  std::vector<float> in = iota(5, 0.5f);
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_ALL_GATHER_V;
    c.in_count = 5;
    c.counts = &five;
    c.displs = &zero;
    check(sub, "all_gather_v", c, in, std::vector<float>(5, -1), in);
  }
  {
    // The block at an offset: elements before it are left alone.
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_GATHER_V;
    c.in_count = 5;
    c.counts = &five;
    c.displs = &two;
    std::vector<float> want = {-1, -1, 0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
    check(sub, "gather_v at offset 2", c, in, std::vector<float>(7, -1), want);
  }
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_SCATTER_V;
    c.out_count = 5;
    c.counts = &five;
    c.displs = &two;
    std::vector<float> src = iota(7, 10.5f);
    check(sub, "scatter_v from offset 2", c, src, std::vector<float>(5, -1),
          iota(5, 12.5f));
  }
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_REDUCE_SCATTER_V;
    c.counts = &five;
    c.displs = &zero;
    c.reduce = MUON_NCCL_SUM;
    check(sub, "reduce_scatter_v sum", c, in, std::vector<float>(5, -1), in);
  }
  for (int reduce : {MUON_NCCL_SUM, MUON_NCCL_MAX, MUON_NCCL_MIN}) {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_ALL_REDUCE;
    c.in_count = 5;
    c.out_count = 5;
    c.reduce = reduce;
    check(world, "all_reduce op " + std::to_string(reduce), c, in,
          std::vector<float>(5, -1), in);
  }
  {
    // A broadcast sends the root's `out`: in place.
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_BROADCAST;
    c.out_count = 5;
    check(sub, "broadcast", c, {}, in, in);
  }
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_ALL_TO_ALL_V;
    c.counts = &five;
    c.displs = &zero;
    c.recv_counts = &five;
    c.recv_displs = &two;
    std::vector<float> want = {-1, -1, 0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
    check(sub, "all_to_all_v", c, in, std::vector<float>(7, -1), want);
  }
  {
    // A large exchange (64 MiB), through the staging pool twice.
    std::vector<float> big = iota(16 << 20, 0.0f);
    for (float &v : big)
      v = static_cast<float>(static_cast<int>(v) % 4099);
    int64_t n = static_cast<int64_t>(big.size());
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_ALL_GATHER_V;
    c.in_count = n;
    c.counts = &n;
    c.displs = &zero;
    check(world, "all_gather_v 64 MiB", c, big, std::vector<float>(n, -1), big);
  }

  // Argument errors come back as messages, not crashes.
  std::vector<float> buf(8);
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_ALL_GATHER_V;
    c.in = buf.data();
    c.out = buf.data();
    c.in_count = 4;
    c.counts = &five;
    c.displs = &zero;
    expectError(world, "count mismatch", c,
                "all_gather_v: this member sends 4 elements, its block has 5");
  }
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_BROADCAST;
    c.out = buf.data();
    c.out_count = 4;
    c.root = 1;
    expectError(world, "root outside the group", c,
                "root 1 outside a group of 1");
  }
  {
    muon_nccl_collective c{};
    c.kind = 17;
    expectError(world, "unknown kind", c, "unknown collective kind 17");
  }
  {
    muon_nccl_collective c{};
    c.kind = MUON_NCCL_GATHER_V;
    c.in = buf.data();
    c.in_count = 5;
    expectError(world, "no counts", c, "a v-collective without counts");
  }

  // A failure's message only (the last one is kept after a success).
  auto destroyed = [](muon_nccl_comm *c, const char *what) {
    bool ok = muon_nccl_comm_destroy(c) == 0;
    report(ok, what, ok ? "" : muon_nccl_error());
  };
  if (sub != world)
    destroyed(sub, "destroy split");
  destroyed(world, "destroy world");
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
