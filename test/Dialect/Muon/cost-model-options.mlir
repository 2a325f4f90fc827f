// The cost-model options of muon-report, muon-timeline and
// muon-expand-step (docs/schedule.md, "The cost model and the
// estimates"): the figures the report prints and estimates with, and the
// errors for figures out of range (at the module, naming pass and option).
// DDP over 16 ranks, two nodes of 8 by default: one 256x256 f32 matrix.

// RUN: muon-opt %s --muon-report=schedules=true -o /dev/null | FileCheck %s --check-prefix=H100
// RUN: muon-opt %s --muon-report="schedules=true ranks-per-node=16 intra-node-gbps=100 intra-node-latency-us=5 inter-node-gbps=12.5 inter-node-latency-us=20 ns-tflops=10" -o /dev/null | FileCheck %s --check-prefix=MINE
// H100: estimated step {{.*}} us on the H100 model
// H100: schedule estimates (8 ranks per node, 360 GB/s and 3 us in a node, 50 GB/s and 10 us between nodes, NS at 67 TFLOP/s):
// MINE: estimated step {{.*}} us on the cost model of the options
// MINE: schedule estimates (16 ranks per node, 100 GB/s and 5 us in a node, 12.5 GB/s and 20 us between nodes, NS at 10 TFLOP/s):

// Every rank in one node now: the broadcast of the 262144-byte result
// runs on the 100 GB/s link. Newton-Schulz: 5 x (4 + 2) x 256^3 FLOPs at
// 10 TFLOP/s = 50.3 us.
// RUN: muon-opt %s --muon-report="schedules=true ranks-per-node=16 intra-node-gbps=100 ns-tflops=10" -o /dev/null | FileCheck %s --check-prefix=NODE
// NODE: rounds 61.2 1.217
// NODE: lower bound 50.3 1.000

// RUN: not muon-opt %s --muon-report=ranks-per-node=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=RPN
// RUN: not muon-opt %s --muon-expand-step=intra-node-gbps=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTRA
// RUN: not muon-opt %s --muon-timeline="output=- inter-node-gbps=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTER
// RUN: not muon-opt %s --muon-report=intra-node-latency-us=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAT
// RUN: not muon-opt %s --muon-expand-step=inter-node-latency-us=inf -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not muon-opt %s --muon-report=ns-tflops=nan -o /dev/null 2>&1 | FileCheck %s --check-prefix=RATE
// Figures that would overflow an estimate to infinity are out of range.
// RUN: not muon-opt %s --muon-timeline="output=- intra-node-latency-us=1.7e308" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not muon-opt %s --muon-report=inter-node-gbps=1e-12 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TINY
// HUGE: error: muon-timeline: intra-node-latency-us = 1.7e+308 must be a latency from 0 to 1e+09 us
// TINY: error: muon-report: inter-node-gbps = 1e-12 must be a bandwidth from 1e-09 to 1e+09 GB/s
// RPN: cost-model-options.mlir:0:0: error: muon-report: ranks-per-node = 0 must be at least 1
// INTRA: error: muon-expand-step: intra-node-gbps = 0 must be a bandwidth from 1e-09 to 1e+09 GB/s
// INTER: error: muon-timeline: inter-node-gbps = -1 must be a bandwidth from 1e-09 to 1e+09 GB/s
// LAT: error: muon-report: intra-node-latency-us = -1 must be a latency from 0 to 1e+09 us
// INF: error: muon-expand-step: inter-node-latency-us = inf must be a latency from 0 to 1e+09 us
// RATE: error: muon-report: ns-tflops = nan must be 0 (by ns_dtype) or a rate from 1e-09 to 1e+09 TFLOP/s
// A value just past a bound is printed with the digits that tell it from
// the bound; -0 is 0 in the estimates' header.
// RUN: not muon-opt %s --muon-report=intra-node-gbps=1.000001e9 -o /dev/null 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: muon-opt %s --muon-report="schedules=true intra-node-latency-us=-0" -o /dev/null | FileCheck %s --check-prefix=ZERO
// PAST: error: muon-report: intra-node-gbps = 1.000001e+09 must be a bandwidth from 1e-09 to 1e+09 GB/s
// ZERO: schedule estimates (8 ranks per node, 360 GB/s and 0 us in a node,
// An empty figure (a script's unset variable) or text that is not a
// number is refused by the option's parser, not read as 0.
// RUN: not muon-opt %s --muon-report=intra-node-latency-us= -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not muon-opt %s --pass-pipeline="builtin.module(muon-timeline{output=- ns-tflops=12x})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TEXT
// EMPTY: for the --intra-node-latency-us option: needs a number; the value is empty
// TEXT: for the --ns-tflops option: '12x' is not a number

dist.mesh @m [dp = 16]
!a = !dist.tensor<256x256xf32, @m, [replicate]>
func.func @step(%p: !a, %g: !a, %m: !a) {
  %r:2 = muon.step params(%p : !a) grads(%g : !a) momenta(%m : !a)
      {lr = 0.02 : f64, owners = array<i64: 0>}
  return
}
