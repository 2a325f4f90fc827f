// The size rule of early release (docs/schedule.md, "Early release"):
// a round splits only when the results of its lightest group's owner with
// the most take longer through the faster link (360 GB/s), and the other
// group's Newton-Schulz outlasts the lighter one's by longer, than its
// levels of calls after Newton-Schulz (here 2: scatter over dp, broadcast
// over rep) take in latency on the slower link (between nodes, 10 us).
// The first cases: HSDP on [rep = 2, dp = 2], rank 0 orthogonalises the
// first parameter, rank 2 a 640x640 matrix (its Newton-Schulz outlasts
// rank 0's by about 100 us on the H100 model), so the results' size
// decides.

// RUN: muon-opt %s --split-input-file --muon-report -o /dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: muon-opt %s --split-input-file --muon-expand-step --dist-verify-spmd -o /dev/null
// The expansion makes the report's choice (it asks the same estimate):
// RUN: muon-opt %s --split-input-file --muon-expand-step | FileCheck %s --check-prefix=EXPAND
// RUN: muon-opt %s --split-input-file --muon-expand-step=intra-node-latency-us=20 | FileCheck %s --check-prefix=EXPAND-INTRA

// One group: both results in one broadcast batch after both Newton-Schulz.
// Split: the early result's broadcast before the other Newton-Schulz.
// EXPAND-LABEL: func.func @at
// EXPAND: dist.broadcast_batch {{.*}} roots [0, 1]
// EXPAND-LABEL: func.func @above
// EXPAND: muon.newton_schulz {{.*}} : tensor<8x225008xf32>
// EXPAND: dist.broadcast {{.*}} root 0
// EXPAND: muon.newton_schulz {{.*}} : tensor<640x640xf32>
// EXPAND-LABEL: func.func @flat_above
// EXPAND: muon.newton_schulz {{.*}} : tensor<8x112504xf32>
// EXPAND: dist.broadcast {{.*}} root 0
// EXPAND: muon.newton_schulz {{.*}} : tensor<320x320xf32>
// EXPAND-LABEL: func.func @outlasts_more
// EXPAND-NOT: dist.broadcast {{.*}} root 0
// EXPAND: dist.broadcast_batch {{.*}} roots [0, 1]
// EXPAND-INTRA-LABEL: func.func @above
// EXPAND-INTRA: muon.newton_schulz {{.*}} : tensor<8x225008xf32>
// EXPAND-INTRA: dist.broadcast {{.*}} root 0
// EXPAND-INTRA-LABEL: func.func @flat_above
// EXPAND-INTRA-NOT: dist.broadcast {{.*}} root 0
// EXPAND-INTRA: dist.broadcast_batch {{.*}} roots [0, 1]

// The latency the rule takes is the slower link's: 20 us between nodes
// doubles the threshold (14.4 MB) and no round is a candidate. 20 us in a
// node leaves the rule as it is, but the estimate of a candidate feels it
// where its calls stay in a node: the one-level flat case (2 ranks) would
// add a 20 us call to gain 10 us, and stays one group.
// RUN: muon-opt %s --split-input-file --muon-report=intra-node-latency-us=20 -o /dev/null | FileCheck %s --check-prefix=INTRA
// RUN: muon-opt %s --split-input-file --muon-report=inter-node-latency-us=20 -o /dev/null | FileCheck %s --check-prefix=SLOW
// On a bandwidth tie the link between nodes is the slower one: its latency
// counts for the rule.
// RUN: muon-opt %s --split-input-file --muon-report="inter-node-gbps=360 inter-node-latency-us=20" -o /dev/null | FileCheck %s --check-prefix=SLOW
// RUN: muon-opt %s --split-input-file --muon-report="inter-node-gbps=360 intra-node-latency-us=20" -o /dev/null | FileCheck %s --check-prefix=INTRA

// DEFAULT: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls
// DEFAULT: schedule: rounds, 1 round, prefetch 1, 1 round releases lighter owners' results first; at most 4 collective calls
// DEFAULT: schedule: rounds, 1 round, prefetch 1, 1 round releases lighter owners' results first; at most 4 collective calls
// DEFAULT: schedule: rounds, 1 round, prefetch 1; at most 1 collective calls
// DEFAULT: schedule: rounds, 1 round, prefetch 1, 1 round releases lighter owners' results first; at most 2 collective calls
// DEFAULT: schedule: rounds, 1 round, prefetch 1; at most 0 collective calls
// DEFAULT-COUNT-2: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls
// INTRA: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls
// INTRA-COUNT-2: schedule: rounds, 1 round, prefetch 1, 1 round releases lighter owners' results first; at most 4 collective calls
// INTRA-COUNT-2: schedule: rounds, 1 round, prefetch 1; at most 1 collective calls
// INTRA: schedule: rounds, 1 round, prefetch 1; at most 0 collective calls
// INTRA-COUNT-2: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls
// SLOW-COUNT-3: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls
// SLOW-COUNT-2: schedule: rounds, 1 round, prefetch 1; at most 1 collective calls
// SLOW: schedule: rounds, 1 round, prefetch 1; at most 0 collective calls
// SLOW-COUNT-2: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls

// Exactly at the threshold: rank 0's 8x225000 result is 7,200,000 bytes,
// 20 us through 360 GB/s, as long as two calls' latency between nodes
// (2 x 10 us): no split.
dist.mesh @m [rep = 2, dp = 2]
func.func @at(%p0: !dist.tensor<8x225000xf32, @m, [replicate, shard<0>]>, %p1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>, %g0: !dist.tensor<8x225000xf32, @m, [replicate, shard<0>]>, %g1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>, %m0: !dist.tensor<8x225000xf32, @m, [replicate, shard<0>]>, %m1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>) {
  %r:4 = muon.step params(%p0, %p1 : !dist.tensor<8x225000xf32, @m, [replicate, shard<0>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      grads(%g0, %g1 : !dist.tensor<8x225000xf32, @m, [replicate, shard<0>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      momenta(%m0, %m1 : !dist.tensor<8x225000xf32, @m, [replicate, shard<0>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      {lr = 0.02 : f64, owners = array<i64: 0, 2>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"at0">, #muon.param<"at1">]}
  return
}

// -----

// 256 bytes above it: split.
dist.mesh @m [rep = 2, dp = 2]
func.func @above(%p0: !dist.tensor<8x225008xf32, @m, [replicate, shard<0>]>, %p1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>, %g0: !dist.tensor<8x225008xf32, @m, [replicate, shard<0>]>, %g1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>, %m0: !dist.tensor<8x225008xf32, @m, [replicate, shard<0>]>, %m1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>) {
  %r:4 = muon.step params(%p0, %p1 : !dist.tensor<8x225008xf32, @m, [replicate, shard<0>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      grads(%g0, %g1 : !dist.tensor<8x225008xf32, @m, [replicate, shard<0>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      momenta(%m0, %m1 : !dist.tensor<8x225008xf32, @m, [replicate, shard<0>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      {lr = 0.02 : f64, owners = array<i64: 0, 2>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"above0">, #muon.param<"above1">]}
  return
}

// -----

// An expert stack counts its batch: 4 matrices of 8x65536 are 8 MiB (one
// alone would be 2 MiB, below the threshold): split.
dist.mesh @m [rep = 2, dp = 2]
func.func @stack(%p0: !dist.tensor<4x8x65536xf32, @m, [replicate, shard<1>]>, %p1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>, %g0: !dist.tensor<4x8x65536xf32, @m, [replicate, shard<1>]>, %g1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>, %m0: !dist.tensor<4x8x65536xf32, @m, [replicate, shard<1>]>, %m1: !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>) {
  %r:4 = muon.step params(%p0, %p1 : !dist.tensor<4x8x65536xf32, @m, [replicate, shard<1>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      grads(%g0, %g1 : !dist.tensor<4x8x65536xf32, @m, [replicate, shard<1>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      momenta(%m0, %m1 : !dist.tensor<4x8x65536xf32, @m, [replicate, shard<1>]>, !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>)
      {lr = 0.02 : f64, owners = array<i64: 0, 2>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"stack0">, #muon.param<"stack1">]}
  return
}

// -----

// A reshape only is no level: flat storage over a one-rank dp scatters by
// reshaping, so the one level of calls after Newton-Schulz is the broadcast
// over rep and the threshold is one latency (3.6 MB; 7.2 MB on SLOW).
// test/Dialect/Muon/expand/early-release-reshape.mlir shows the IR. Rank 0's 8x112500
// result is exactly 3,600,000 bytes: no split.
dist.mesh @m [rep = 2, dp = 1]
dist.flat_group @g on @m[dp] numel [900000, 102400]
!a = !dist.tensor<8x112500xf32, @m, [replicate, reduced], storage = flat<@g, 0>>
!b = !dist.tensor<320x320xf32, @m, [replicate, reduced], storage = flat<@g, 1>>
!ga = !dist.tensor<8x112500xf32, @m, [replicate, partial<sum>]>
!gb = !dist.tensor<320x320xf32, @m, [replicate, partial<sum>]>
func.func @flat_at(%p0: !a, %p1: !b, %g0: !ga, %g1: !gb, %m0: !a, %m1: !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !ga, !gb)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 1>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"flat_at0">, #muon.param<"flat_at1">]}
  return
}

// -----

// 4 elements (16 bytes) above it: split (it did not while the reshape
// counted as a level of calls).
dist.mesh @m [rep = 2, dp = 1]
dist.flat_group @g on @m[dp] numel [900032, 102400]
!a = !dist.tensor<8x112504xf32, @m, [replicate, reduced], storage = flat<@g, 0>>
!b = !dist.tensor<320x320xf32, @m, [replicate, reduced], storage = flat<@g, 1>>
!ga = !dist.tensor<8x112504xf32, @m, [replicate, partial<sum>]>
!gb = !dist.tensor<320x320xf32, @m, [replicate, partial<sum>]>
func.func @flat_above(%p0: !a, %p1: !b, %g0: !ga, %g1: !gb, %m0: !a, %m1: !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !ga, !gb)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 1>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"flat_above0">, #muon.param<"flat_above1">]}
  return
}

// -----

// No call after Newton-Schulz at all (pipeline stages over a one-rank
// flat dp: every step is a reshape): nothing to release early, one group.
dist.mesh @m [pp = 2, dp = 1]
dist.flat_group @g on @m[dp] numel [4096, 102400]
!a = !dist.tensor<8x512xf32, @m, [replicate, reduced], storage = flat<@g, 0>>
!b = !dist.tensor<320x320xf32, @m, [replicate, reduced], storage = flat<@g, 1>>
!ga = !dist.tensor<8x512xf32, @m, [replicate, partial<sum>]>
!gb = !dist.tensor<320x320xf32, @m, [replicate, partial<sum>]>
func.func @no_calls(%p0: !a, %p1: !b, %g0: !ga, %g1: !gb, %m0: !a, %m1: !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !ga, !gb)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 1>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"s0", stage = pp[0]>, #muon.param<"s1", stage = pp[1]>]}
  return
}

// -----

// The other group's Newton-Schulz decides: rank 0's 8x300000 result is
// 9.6 MB (27 us, above the 20 us of two calls), but rank 2's 320x320
// Newton-Schulz outlasts rank 0's by only 9 us (983 against 384 MFLOP at
// 67 TFLOP/s): the results could travel early for no longer than that, so
// the round is no candidate.
dist.mesh @m [rep = 2, dp = 2]
!a = !dist.tensor<8x300000xf32, @m, [replicate, shard<0>]>
!b = !dist.tensor<320x320xf32, @m, [replicate, shard<0>]>
func.func @outlasts_less(%p0: !a, %p1: !b, %g0: !a, %g1: !b, %m0: !a, %m1: !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !a, !b)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 2>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"less0">, #muon.param<"less1">]}
  return
}

// -----

// With a 400x400 matrix (1920 MFLOP) rank 2 outlasts rank 0 by 23 us,
// above the 20 us of two calls: a candidate. But the estimated step with
// the split (62.5 us: replica 0's results reach replica 1 while its own
// scatter and broadcast use the same links) is no shorter than in one
// group (54.7 us): one group.
dist.mesh @m [rep = 2, dp = 2]
!a = !dist.tensor<8x300000xf32, @m, [replicate, shard<0>]>
!b = !dist.tensor<400x400xf32, @m, [replicate, shard<0>]>
func.func @outlasts_more(%p0: !a, %p1: !b, %g0: !a, %g1: !b, %m0: !a, %m1: !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !a, !b)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 2>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"more0">, #muon.param<"more1">]}
  return
}
