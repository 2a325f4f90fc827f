// The estimated timeline as Chrome trace JSON: one process per rank, a
// compute (tid 0) and a comm (tid 1) thread, every collective and
// Newton-Schulz of the simulation in microseconds (H100 model: a gather of
// 16x8 f32 over 2 ranks = 3 us latency + 256 B / 360 GB/s = 3.001 us).
// RUN: muon-opt %s --muon-timeline=output=- -o /dev/null | FileCheck %s
// RUN: muon-opt %s --muon-timeline="output=- schedule=naive" -o /dev/null | FileCheck %s --check-prefix=NAIVE
// Two gathers and two scatters on each of 2 ranks, one NS each: 10 events.
// RUN: muon-opt %s --muon-timeline=output=%t.json -o /dev/null
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); print(sum(e['ph'] == 'X' for e in d['traceEvents']))" %t.json | FileCheck %s --check-prefix=COUNT
// RUN: not muon-opt %s --muon-timeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not muon-opt %s --muon-timeline=output=%t.missing/t.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTFILE
// OUTFILE: error: muon-timeline: cannot open output file '{{.*}}.missing/t.json': No such file or directory
// RUN: not muon-opt %s --muon-timeline="output=- schedule=fast" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not muon-opt %s --muon-timeline="output=- prefetch=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PREF
// RUN: sed -e '/owners = array/d' -e 's/explicit/balanced/' %s | not muon-opt --muon-timeline=output=- -o /dev/null 2>&1 | FileCheck %s --check-prefix=OWNERS

// CHECK: "traceEvents": [
// CHECK-DAG: {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "rank 1"}}
// CHECK-DAG: {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "comm"}}
// The round's two gathers (and scatters) are one batched call: each rank
// sends its 128 B piece to the other owner and receives 128 B.
// CHECK: {"ph": "X", "name": "gather_batch dp x2", "cat": "comm", "pid": 0, "tid": 1, "ts": 0.000, "dur": 3.001}
// CHECK: {"ph": "X", "name": "gather_batch dp x2", "cat": "comm", "pid": 1, "tid": 1, "ts": 0.000, "dur": 3.001}
// CHECK: {"ph": "X", "name": "newton_schulz a", "cat": "compute", "pid": 0, "tid": 0, "ts": 3.001,
// CHECK: {"ph": "X", "name": "newton_schulz b", "cat": "compute", "pid": 1, "tid": 0, "ts": 3.001,
// CHECK: {"ph": "X", "name": "scatter_batch dp x2", "cat": "comm", "pid": 0, "tid": 1,
// NAIVE: "name": "all_gather dp a", "cat": "comm", "pid": 0
// NAIVE: "name": "newton_schulz a", "cat": "compute", "pid": 1
// NAIVE-NOT: scatter
// COUNT: 6
// NOFILE: error: muon-timeline: no output file (pass output=FILE, or output=- for stdout)
// SCHED: error: muon-timeline: unknown schedule 'fast'; expected step, naive, sequential or rounds
// PREF: error: muon-timeline: prefetch must be in [0, 64], got -1
// OWNERS: error: 'muon.step' op has no owners; run muon-assign-owners before muon-timeline

dist.mesh @m [dp = 2]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @step(%a: !t, %b: !t, %ga: !t, %gb: !t, %ma: !t, %mb: !t) {
  %r:4 = muon.step params(%a, %b : !t, !t) grads(%ga, %gb : !t, !t)
      momenta(%ma, %mb : !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1>,
       param_info = [#muon.param<"a">, #muon.param<"b">]}
  return
}
