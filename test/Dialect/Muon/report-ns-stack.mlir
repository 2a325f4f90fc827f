// muon-report and muon-timeline with ns-stack-bytes make the rounds as
// muon-expand-step does: the six 8x4 matrices (128 B each) of owners 0 and
// 1 in stacks of two (256 B) are 2 rounds instead of 3, with one batched
// gather and scatter per round (4 collective calls per rank instead of 6);
// the timeline shows rank 0's round 0: one gather of four items, p0 and p2
// orthogonalised, one scatter, then round 1.

// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=APART
// RUN: muon-opt %s --muon-report=ns-stack-bytes=256 -o /dev/null | FileCheck %s --check-prefix=STACKED
// RUN: muon-opt %s --muon-report="ns-stack-bytes=256 format=json" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: muon-opt %s --muon-timeline="output=- ns-stack-bytes=256" -o /dev/null | FileCheck %s --check-prefix=TRACE
// One parameter at a time never stacks, and the report does not say so.
// RUN: sed 's/prefetch_count = 0}/prefetch_count = 0, async_gpu_parallelism = false}/' %s | muon-opt --muon-report="ns-stack-bytes=256" -o /dev/null | FileCheck %s --check-prefix=SEQ
// RUN: sed 's/prefetch_count = 0}/prefetch_count = 0, async_gpu_parallelism = false}/' %s | muon-opt --muon-report="ns-stack-bytes=256 format=json" -o /dev/null | FileCheck %s --check-prefix=SEQJSON
// SEQ: schedule: one parameter at a time, 6 rounds, blocking collectives; at most
// SEQJSON: "ns_stack_bytes": 0
// RUN: not muon-opt %s --muon-report=ns-stack-bytes=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGR
// RUN: not muon-opt %s --muon-timeline="output=- ns-stack-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGT

// APART: schedule: rounds, 3 rounds, blocking collectives; at most 6 collective calls per rank
// STACKED: schedule: rounds, 2 rounds, blocking collectives, Newton-Schulz stacked up to 256 bytes; at most 4 collective calls per rank
// JSON: "ns_stack_bytes": 256
// JSON: "rounds": 2
// Rank 0's two orthogonalisations of round 0 come before round 1's gather.
// TRACE: "name": "gather_batch dp x4", "cat": "comm", "pid": 0
// TRACE: "name": "newton_schulz p0", "cat": "compute", "pid": 0
// TRACE: "name": "newton_schulz p2", "cat": "compute", "pid": 0
// TRACE: "name": "scatter_batch dp x4", "cat": "comm", "pid": 0
// TRACE: "name": "gather_batch dp x2", "cat": "comm", "pid": 0
// NEGR: error: muon-report: ns-stack-bytes must be 0 (no stacks) or a byte count, got -1
// NEGT: error: muon-timeline: ns-stack-bytes must be 0 (no stacks) or a byte count, got -1

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @stacks(%p0: !t, %p1: !t, %p2: !t, %p3: !t, %p4: !t, %p5: !t,
                  %g0: !t, %g1: !t, %g2: !t, %g3: !t, %g4: !t, %g5: !t,
                  %m0: !t, %m1: !t, %m2: !t, %m3: !t, %m4: !t, %m5: !t)
    -> (!t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t) {
  %r:12 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5 : !t, !t, !t, !t, !t, !t)
      grads(%g0, %g1, %g2, %g3, %g4, %g5 : !t, !t, !t, !t, !t, !t)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5 : !t, !t, !t, !t, !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1, 0, 1>, prefetch_count = 0}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11
      : !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t
}
