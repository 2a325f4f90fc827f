// RUN: muon-opt %s -split-input-file --muon-assign-owners | FileCheck %s
// RUN: muon-opt %s -split-input-file --muon-assign-owners=strategy=balanced | FileCheck %s --check-prefix=OVERRIDE

// Round robin: parameter i -> rank i mod 4.
dist.mesh @m [dp = 4]
!a = !dist.tensor<64x64xf32, @m, [shard<0>]>
!b = !dist.tensor<8x8xf32, @m, [shard<0>]>
// CHECK-LABEL: func.func @round_robin
// CHECK: owners = array<i64: 0, 1, 2, 3, 0>
// Balanced (LPT): the two big ones first, to ranks 0 and 1; the small ones
// fill ranks 2, 3, then 2 again.
// OVERRIDE-LABEL: func.func @round_robin
// OVERRIDE: owners = array<i64: 2, 0, 3, 1, 2>
func.func @round_robin(%p0: !b, %p1: !a, %p2: !b, %p3: !a, %p4: !b,
                       %g0: !b, %g1: !a, %g2: !b, %g3: !a, %g4: !b,
                       %m0: !b, %m1: !a, %m2: !b, %m3: !a, %m4: !b) {
  %r:10 = muon.step params(%p0, %p1, %p2, %p3, %p4 : !b, !a, !b, !a, !b)
      grads(%g0, %g1, %g2, %g3, %g4 : !b, !a, !b, !a, !b)
      momenta(%m0, %m1, %m2, %m3, %m4 : !b, !a, !b, !a, !b) {lr = 0.02 : f64}
  return
}

// -----

// Explicit, rank-keyed form (entry r lists the parameters rank r owns):
// rank 0 owns 1, rank 3 owns 0 and 2.
dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
// CHECK-LABEL: func.func @explicit
// CHECK: owners = array<i64: 3, 0, 3>
// CHECK-NOT: assignment
func.func @explicit(%p0: !t, %p1: !t, %p2: !t, %g0: !t, %g1: !t, %g2: !t,
                    %m0: !t, %m1: !t, %m2: !t) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !t, !t, !t) grads(%g0, %g1, %g2 : !t, !t, !t)
      momenta(%m0, %m1, %m2 : !t, !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       assignment = [array<i64: 1>, array<i64>, array<i64>, array<i64: 0, 2>]}
  return
}

// -----

// Balanced with expert stacks: the ep-sharded stack (2 matrices per ep
// group, cost 2C) is owned once per ep group: owner 0 loads ranks 0 and 2.
// Whole storage on dp = 1 pins the next one to {1, 3}: rank 1 (C). The
// plain matrices (C each) go to the least loaded: rank 3, then rank 1
// (tie with 3 broken by the lower rank).
dist.mesh @m [ep = 2, dp = 2]
!stack = !dist.tensor<4x32x32xf32, @m, [shard<0>, shard<1>]>
!whole = !dist.tensor<32x32xf32, @m, [replicate, replicate], storage = whole<on dp owner 1>>
!w = !dist.tensor<32x32xf32, @m, [replicate, shard<0>]>
// CHECK-LABEL: func.func @balanced_ep
// CHECK: owners = array<i64: 0, 1, 3, 1>
func.func @balanced_ep(%s: !stack, %h: !whole, %w0: !w, %w1: !w,
                       %gs: !stack, %gh: !whole, %gw0: !w, %gw1: !w,
                       %ms: !stack, %mh: !whole, %mw0: !w, %mw1: !w) {
  %r:8 = muon.step params(%s, %h, %w0, %w1 : !stack, !whole, !w, !w)
      grads(%gs, %gh, %gw0, %gw1 : !stack, !whole, !w, !w)
      momenta(%ms, %mh, %mw0, %mw1 : !stack, !whole, !w, !w)
      {lr = 0.02 : f64, strategy = #muon.strategy<balanced>}
  return
}
