// Prefetch (prefetch_count = k, with rounds): round i + k's gathers are
// issued asynchronously (a batch with a !dist.token) before round i's
// Newton-Schulz; round i's scatters are waited on after round i + 1's
// Newton-Schulz, then its updates are applied; chains go a level further
// before each Newton-Schulz. Rank 0's code, specialised.
// Owners alternate 0, 1: three rounds of two FSDP parameters.

// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s

// k = 1: round 1's gathers go out before round 0's Newton-Schulz, round 2's
// before round 1's; round 0's scatters complete after round 1's NS.
// CHECK-LABEL: func.func @prefetch1
// CHECK: %[[G0:.*]]:2, %[[T0:.*]] = dist.gather_batch {{.*}} roots [0, 1] : {{.*}}, !dist.token
// CHECK: %[[G1:.*]]:2, %[[T1:.*]] = dist.gather_batch {{.*}}, !dist.token
// CHECK: dist.wait %[[T0]]
// CHECK-NEXT: muon.newton_schulz %[[G0]]#0
// CHECK: %[[S0:.*]]:2, %[[U0:.*]] = dist.scatter_batch {{.*}}, !dist.token
// CHECK: %[[G2:.*]]:2, %[[T2:.*]] = dist.gather_batch {{.*}}, !dist.token
// CHECK: dist.wait %[[T1]]
// CHECK-NEXT: muon.newton_schulz %[[G1]]#0
// CHECK: %[[S1:.*]]:2, %[[U1:.*]] = dist.scatter_batch
// CHECK: dist.wait %[[U0]]
// CHECK-NEXT: muon.apply_update %{{.*}}, %[[S0]]#0
// CHECK: muon.apply_update %{{.*}}, %[[S0]]#1
// CHECK: dist.wait %[[T2]]
// CHECK-NEXT: muon.newton_schulz %[[G2]]#0
// CHECK: %[[S2:.*]]:2, %[[U2:.*]] = dist.scatter_batch
// CHECK: dist.wait %[[U1]]
// CHECK: dist.wait %[[U2]]
// CHECK: return

// k = 2: all three rounds' gathers are in flight before the first NS.
// CHECK-LABEL: func.func @prefetch2
// CHECK: %[[H0:.*]]:2, %[[V0:.*]] = dist.gather_batch
// CHECK: %[[H1:.*]]:2, %[[V1:.*]] = dist.gather_batch
// CHECK: %[[H2:.*]]:2, %[[V2:.*]] = dist.gather_batch
// CHECK: dist.wait %[[V0]]
// CHECK-NEXT: muon.newton_schulz %[[H0]]#0
// CHECK: dist.wait %[[V1]]
// CHECK-NEXT: muon.newton_schulz %[[H1]]#0
// CHECK: dist.wait %[[V2]]
// CHECK-NEXT: muon.newton_schulz %[[H2]]#0
// CHECK: return

// TP x FSDP chains (tp, then dp) with k = 2 over two rounds: both rounds'
// tp gathers are issued first; each round's dp gather waits for its tp
// gather. On rank 0 (tp = 0) the dp batch of the tp = 1 owners is skipped:
// its token is a dist.completed_token.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A0:.*]]:4, %[[W0:.*]] = dist.gather_batch {{.*}} on @g axes [tp]
// CHECK: %[[A1:.*]]:4, %[[W1:.*]] = dist.gather_batch {{.*}} on @g axes [tp]
// CHECK: dist.wait %[[W1]]
// CHECK-NEXT: dist.gather_batch %[[A1]]#0, %[[A1]]#2 on @g axes [dp]
// CHECK: dist.wait %[[W0]]
// CHECK-NEXT: dist.gather_batch %[[A0]]#0, %[[A0]]#2 on @g axes [dp]
// CHECK: dist.completed_token
// CHECK: muon.newton_schulz
// CHECK: return

// TP x FSDP chains with k = 1 over two rounds (plan::roundProgram): round
// 1's second gather level (dp, after its tp gather) is issued before round
// 0's Newton-Schulz, which it overlaps; round 0's second scatter level
// (tp, after its dp scatter) before round 1's Newton-Schulz, and round 0's
// updates are applied after it.
// CHECK-LABEL: func.func @chain1
// CHECK: %[[C0:.*]]:4, %[[X0:.*]] = dist.gather_batch {{.*}} on @g axes [tp]
// CHECK: %[[C1:.*]]:4, %[[X1:.*]] = dist.gather_batch {{.*}} on @g axes [tp]
// CHECK: dist.wait %[[X0]]
// CHECK-NEXT: %[[D0:.*]]:2, %{{.*}} = dist.gather_batch %[[C0]]#0, %[[C0]]#2 on @g axes [dp]
// CHECK: dist.wait %[[X1]]
// CHECK-NEXT: %[[D1:.*]]:2, %{{.*}} = dist.gather_batch %[[C1]]#0, %[[C1]]#2 on @g axes [dp]
// CHECK-NOT: muon.newton_schulz %[[D0]]#0
// CHECK: %[[N0:.*]] = muon.newton_schulz %[[D0]]#0
// CHECK: %[[E0:.*]]:2, %[[Y0:.*]] = dist.scatter_batch %[[N0]], {{.*}} on @g axes [dp]
// CHECK: dist.wait %[[Y0]]
// CHECK-NEXT: %[[F0:.*]]:4, %[[Z0:.*]] = dist.scatter_batch %[[E0]]#0, {{.*}} on @g axes [tp]
// CHECK: muon.newton_schulz %[[D1]]#0
// CHECK: dist.wait %[[Z0]]
// CHECK-NEXT: muon.apply_update %{{.*}}, %[[F0]]#0
// CHECK: return

dist.mesh @m [dp = 2]
dist.mesh @g [dp = 2, tp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
!u = !dist.tensor<8x4xf32, @g, [shard<0>, shard<0>]>

func.func @prefetch1(%p0: !t, %p1: !t, %p2: !t, %p3: !t, %p4: !t, %p5: !t, %g0: !t, %g1: !t, %g2: !t, %g3: !t, %g4: !t, %g5: !t, %m0: !t, %m1: !t, %m2: !t, %m3: !t, %m4: !t, %m5: !t)
    -> (!t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t) {
  %r:12 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5 : !t, !t, !t, !t, !t, !t)
      grads(%g0, %g1, %g2, %g3, %g4, %g5 : !t, !t, !t, !t, !t, !t)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5 : !t, !t, !t, !t, !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1, 0, 1>, prefetch_count = 1}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11 : !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t
}

func.func @prefetch2(%p0: !t, %p1: !t, %p2: !t, %p3: !t, %p4: !t, %p5: !t, %g0: !t, %g1: !t, %g2: !t, %g3: !t, %g4: !t, %g5: !t, %m0: !t, %m1: !t, %m2: !t, %m3: !t, %m4: !t, %m5: !t)
    -> (!t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t) {
  %r:12 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5 : !t, !t, !t, !t, !t, !t)
      grads(%g0, %g1, %g2, %g3, %g4, %g5 : !t, !t, !t, !t, !t, !t)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5 : !t, !t, !t, !t, !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1, 0, 1>, prefetch_count = 2}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11 : !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t
}

func.func @chain(%p0: !u, %p1: !u, %p2: !u, %p3: !u, %p4: !u, %p5: !u, %p6: !u, %p7: !u, %g0: !u, %g1: !u, %g2: !u, %g3: !u, %g4: !u, %g5: !u, %g6: !u, %g7: !u, %m0: !u, %m1: !u, %m2: !u, %m3: !u, %m4: !u, %m5: !u, %m6: !u, %m7: !u)
    -> (!u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u) {
  %r:16 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5, %p6, %p7 : !u, !u, !u, !u, !u, !u, !u, !u)
      grads(%g0, %g1, %g2, %g3, %g4, %g5, %g6, %g7 : !u, !u, !u, !u, !u, !u, !u, !u)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5, %m6, %m7 : !u, !u, !u, !u, !u, !u, !u, !u)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 2, 3, 0, 1, 2, 3>, prefetch_count = 2}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11, %r#12, %r#13, %r#14, %r#15 : !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u
}

func.func @chain1(%p0: !u, %p1: !u, %p2: !u, %p3: !u, %p4: !u, %p5: !u, %p6: !u, %p7: !u, %g0: !u, %g1: !u, %g2: !u, %g3: !u, %g4: !u, %g5: !u, %g6: !u, %g7: !u, %m0: !u, %m1: !u, %m2: !u, %m3: !u, %m4: !u, %m5: !u, %m6: !u, %m7: !u)
    -> (!u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u) {
  %r:16 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5, %p6, %p7 : !u, !u, !u, !u, !u, !u, !u, !u)
      grads(%g0, %g1, %g2, %g3, %g4, %g5, %g6, %g7 : !u, !u, !u, !u, !u, !u, !u, !u)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5, %m6, %m7 : !u, !u, !u, !u, !u, !u, !u, !u)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 2, 3, 0, 1, 2, 3>, prefetch_count = 1}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11, %r#12, %r#13, %r#14, %r#15 : !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u, !u
}
