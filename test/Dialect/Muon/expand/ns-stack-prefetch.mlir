// Stacks with prefetch and the memory bound. Owners alternate 0, 1 over six
// 8x4 f32 matrices (128 B each); ns-stack-bytes=256 makes each owner's
// stacks [2, 1]: round 0 holds p0..p3 (two per owner), round 1 p4, p5.
// With prefetch_count = 1, round 1's gathers are in flight during round
// 0's stacked Newton-Schulz. max-prefetch-bytes is checked over the stacked
// rounds: one round ahead would hold 384 B on rank 0, so 300 B leaves
// prefetch 0 (256 B: round 0's stack).

// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=256 --dist-specialize-rank=rank=0 | FileCheck %s
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=256 --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step="ns-stack-bytes=256 batch-collectives=false" --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step="ns-stack-bytes=256 max-prefetch-bytes=300" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: muon-opt %s --muon-expand-step="ns-stack-bytes=256 max-prefetch-bytes=300" --dist-specialize-rank=rank=0 2>/dev/null | FileCheck %s --check-prefix=BLOCKING

// CHECK: %{{.*}}:4, %[[T0:.*]] = dist.gather_batch {{.*}} roots [0, 1, 0, 1]
// CHECK: %{{.*}}:2, %[[T1:.*]] = dist.gather_batch {{.*}} roots [0, 1]
// CHECK: dist.wait %[[T0]]
// CHECK: muon.newton_schulz %{{.*}} : tensor<2x8x4xf32>
// CHECK: dist.scatter_batch {{.*}} roots [0, 1, 0, 1]
// CHECK: dist.wait %[[T1]]
// CHECK: muon.newton_schulz %{{.*}} : tensor<8x4xf32>

// BOUND: remark: prefetch_count 1 lowered to 0 by max-prefetch-bytes = 300: 1 round(s) ahead would hold 384 bytes of gathered matrices on rank 0 at once, 0 hold(s) at most 256

// BLOCKING-NOT: !dist.token
// BLOCKING: dist.gather_batch {{.*}} roots [0, 1, 0, 1]
// BLOCKING: muon.newton_schulz %{{.*}} : tensor<2x8x4xf32>
// BLOCKING: dist.scatter_batch
// BLOCKING: dist.gather_batch {{.*}} roots [0, 1]

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @bounded(%p0: !t, %p1: !t, %p2: !t, %p3: !t, %p4: !t, %p5: !t,
                   %g0: !t, %g1: !t, %g2: !t, %g3: !t, %g4: !t, %g5: !t,
                   %m0: !t, %m1: !t, %m2: !t, %m3: !t, %m4: !t, %m5: !t)
    -> (!t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t) {
  %r:12 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5 : !t, !t, !t, !t, !t, !t)
      grads(%g0, %g1, %g2, %g3, %g4, %g5 : !t, !t, !t, !t, !t, !t)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5 : !t, !t, !t, !t, !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1, 0, 1>, prefetch_count = 1}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11
      : !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t
}
