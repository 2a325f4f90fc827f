// The balanced strategy on a Llama-7B-like list (32 layers x q/k/v/o/gate/
// up/down, FSDP over 8 ranks) is within 5% of perfect balance.
// RUN: %python %S/Inputs/llama_step.py 32 | muon-opt --muon-assign-owners --muon-report -o /dev/null | FileCheck %s --check-prefix=LLAMA
// LLAMA: muon.step at {{.*}}: 224 parameters on mesh @m (8 ranks), strategy balanced, ns_steps 5
// LLAMA: layers.0.attn.q 4096x4096
// LLAMA: balance: max/mean NS load = {{1\.0[0-4][0-9]*}}

// Round robin on the same list: 224 params over 8 ranks, 28 each.
// RUN: %python %S/Inputs/llama_step.py 32 | sed 's/balanced/round_robin/' | muon-opt --muon-assign-owners --muon-report -o /dev/null | FileCheck %s --check-prefix=RR
// RR: 7 {{.*}} 28

// Exact figures on a small step: a 16x8 FSDP weight over 4 ranks, owner 0:
// NS = 5 * (4*8*8*16 + 2*8^3) = 25600 flops; 3 ranks send 4x8 f32 = 128 B.
// The estimate (H100 model, fp32 NS at 67 TFLOP/s): gather and scatter each
// 3 us latency + 384 B / 360 GB/s on rank 0, NS 0.0004 us: 6.0 us; rank 0
// holds the 16x8 f32 matrix (512 B); every rank takes part in 2 collectives.
// RUN: muon-opt %s --muon-assign-owners --muon-report=schedules=true -o /dev/null | FileCheck %s
// CHECK: param name shape owner ns_flops gather_B scatter_B reduce_B allreduce_B chain (inner first)
// CHECK-NEXT: 0 w 16x8 0 25600 384 384 0 0 dp(d0)
// CHECK: rank coords params ns_flops sent_B recv_B est_us exposed_us colls peak_B
// CHECK-NEXT: 0 dp=0 1 25600 384 384 6.0 6.0 2 512
// CHECK-NEXT: 1 dp=1 0 0 128 128 6.0 6.0 2 0
// One parameter: nothing to batch, 2 calls either way.
// CHECK: schedule: rounds, 1 round, prefetch 1; at most 2 collective calls per rank (2 without batching); estimated step 6.0 us
// Naive all-gathers instead (3 us, no scatter) and orthogonalises everywhere.
// CHECK: schedule step_us x_bound colls/rank peak_B/rank
// CHECK-NEXT: naive 3.0 0.500 1 512
// CHECK-NEXT: sequential 6.0 1.000 2 512
// CHECK-NEXT: rounds 6.0 1.000 2 512
// CHECK-NEXT: rounds-unbatched 6.0 1.000 2 512
// CHECK-NEXT: rounds+prefetch1 6.0 1.000 2 512
// CHECK-NEXT: rounds+prefetch2 6.0 1.000 2 512
// CHECK-NEXT: lower bound 6.0 1.000
// The owner's path, gather + NS + scatter, is the same 6.0 us here.
// CHECK-NEXT: owner path bound 6.0 1.000

// The same figures as JSON (format=json): one object per step.
// RUN: muon-opt %s --muon-assign-owners --muon-report="format=json schedules=true" -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON:      "axes": [
// JSON-NEXT:   "dp"
// JSON:      "balance": 4,
// JSON:      "lower_bound_us": 6.0{{[0-9]*}},
// JSON:      "num_ranks": 4,
// JSON-NEXT: "owner_path_bound_us": 6.0{{[0-9]*}},
// JSON:      "chain": "dp(d0)",
// JSON-NEXT: "gather_bytes": 384,
// JSON-NEXT: "index": 0,
// JSON-NEXT: "name": "w",
// JSON-NEXT: "ns_blocks": 0,
// JSON-NEXT: "ns_flops": 25600,
// JSON-NEXT: "owner": 0,
// JSON-NEXT: "owner_ranks": 1,
// JSON-NEXT: "reduce_bytes": 0,
// JSON-NEXT: "scatter_bytes": 384,
// JSON:      "collectives": 2,
// JSON-NEXT: "coords": {
// JSON-NEXT:   "dp": 0
// JSON:      "peak_bytes": 512,
// JSON-NEXT: "rank": 0,
// JSON-NEXT: "recv_bytes": 384,
// JSON-NEXT: "sent_bytes": 384
// JSON:      "schedule": {
// JSON-NEXT:   "collectives_per_rank": 2,
// JSON-NEXT:   "collectives_per_rank_unbatched": 2,
// JSON-NEXT:   "early_release_rounds": 0,
// JSON-NEXT:   "est_step_us": 6.0{{[0-9]*}},
// JSON-NEXT:   "kind": "rounds",
// JSON-NEXT:   "ns_stack_bytes": 0,
// JSON-NEXT:   "prefetch": 1,
// JSON-NEXT:   "rounds": 1
// JSON:      "schedule_estimates": [
// JSON:        "schedule": "naive",
// JSON:        "schedule": "rounds+prefetch2",

// RUN: not muon-opt %s --muon-assign-owners --muon-report="format=yaml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: muon-report: unknown format 'yaml'; expected 'text' or 'json'
// RUN: not muon-opt %s --muon-assign-owners --muon-report="output=%t.missing/r.txt" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTFILE
// OUTFILE: error: muon-report: cannot open output file '{{.*}}.missing/r.txt': No such file or directory

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @small(%p: !t, %g: !t, %m: !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, param_info = [#muon.param<"w">]}
  return
}
