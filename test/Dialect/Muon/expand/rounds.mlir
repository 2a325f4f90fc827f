// Rounds (async_gpu_parallelism = true, the default): round k holds the
// k-th parameter of every owner, each owner's largest first. A round's
// gathers are issued together, then every owner orthogonalises at once,
// then the round's scatters. Owners: p0, p2 on rank 0; p1, p3 on rank 1;
// p2 and p3 are the larger, so round 0 = {p2, p3}, round 1 = {p0, p1}.
// The two gathers (scatters) of a round share the communicator and every
// rank takes part in both: one dist.gather_batch (dist.scatter_batch) with
// roots [0, 1]. With batch-collectives=false they stay rooted calls (U0).
// With async_gpu_parallelism = false: one parameter at a time, in order.
// Both with prefetch_count = 0 (blocking collectives; prefetch.mlir shows
// the asynchronous schedule).

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: muon-opt %s --muon-expand-step=batch-collectives=false --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=U0
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step=batch-collectives=false --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 2]
!small = !dist.tensor<8x4xf32, @m, [shard<0>]>
!big = !dist.tensor<16x8xf32, @m, [shard<0>]>

// R0-LABEL: func.func @rounds
// R0: dist.gather_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
// R0-NOT: dist.
// R0: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// R0-NOT: muon.newton_schulz
// R0: dist.scatter_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
// R0-NOT: dist.{{(gather|scatter)}}
// R0: dist.gather_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
// R0-NOT: dist.
// R0: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// R0-NOT: muon.newton_schulz
// R0: dist.scatter_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
// R0: return

// R1-LABEL: func.func @rounds
// R1: dist.gather_batch {{.*}} roots [0, 1] : (tensor<8x8xf32>, tensor<8x8xf32>)
// R1-NOT: dist.
// R1: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// R1: dist.scatter_batch {{.*}} roots [0, 1] : (tensor<16x8xf32>, tensor<16x8xf32>)
// R1: dist.gather_batch {{.*}} roots [0, 1] : (tensor<4x4xf32>, tensor<4x4xf32>)
// R1-NOT: dist.
// R1: muon.newton_schulz %{{.*}} : tensor<8x4xf32>

// U0-LABEL: func.func @rounds
// U0: dist.gather %{{.*}} on @m axes [dp] dim 0 root 0 : tensor<8x8xf32> -> tensor<16x8xf32>
// U0-NOT: muon.newton_schulz
// U0: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// U0-NOT: dist.
// U0: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// U0-NOT: muon.newton_schulz
// U0: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 0 : tensor<16x8xf32> -> tensor<8x8xf32>
// U0: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<16x8xf32> -> tensor<8x8xf32>
// U0: dist.gather %{{.*}} on @m axes [dp] dim 0 root 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// U0-NOT: muon.newton_schulz
// U0: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x4xf32> -> tensor<8x4xf32>
// U0-NOT: dist.
// U0: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// U0-NOT: muon.newton_schulz
// U0: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// U0: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<8x4xf32> -> tensor<4x4xf32>
// U0: return
func.func @rounds(%p0: !small, %p1: !small, %p2: !big, %p3: !big,
                  %g0: !small, %g1: !small, %g2: !big, %g3: !big,
                  %m0: !small, %m1: !small, %m2: !big, %m3: !big)
    -> (!small, !small, !big, !big, !small, !small, !big, !big) {
  %r:8 = muon.step params(%p0, %p1, %p2, %p3 : !small, !small, !big, !big)
      grads(%g0, %g1, %g2, %g3 : !small, !small, !big, !big)
      momenta(%m0, %m1, %m2, %m3 : !small, !small, !big, !big)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1>, prefetch_count = 0}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : !small, !small, !big, !big, !small, !small, !big, !big
}

// R0-LABEL: func.func @sequential
// R0: dist.gather %{{.*}} root 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// R0-NEXT: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// R0: dist.scatter %{{.*}} root 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// R0: dist.gather %{{.*}} root 1 : tensor<4x4xf32> -> tensor<8x4xf32>
// R0: dist.scatter %{{.*}} root 1 : tensor<8x4xf32> -> tensor<4x4xf32>
// R0: dist.gather %{{.*}} root 0 : tensor<8x8xf32> -> tensor<16x8xf32>
// R0-NEXT: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// R0: dist.scatter %{{.*}} root 0 : tensor<16x8xf32> -> tensor<8x8xf32>
// R0: dist.gather %{{.*}} root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// R0: dist.scatter %{{.*}} root 1 : tensor<16x8xf32> -> tensor<8x8xf32>
func.func @sequential(%p0: !small, %p1: !small, %p2: !big, %p3: !big,
                      %g0: !small, %g1: !small, %g2: !big, %g3: !big,
                      %m0: !small, %m1: !small, %m2: !big, %m3: !big)
    -> (!small, !small, !big, !big, !small, !small, !big, !big) {
  %r:8 = muon.step params(%p0, %p1, %p2, %p3 : !small, !small, !big, !big)
      grads(%g0, %g1, %g2, %g3 : !small, !small, !big, !big)
      momenta(%m0, %m1, %m2, %m3 : !small, !small, !big, !big)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1>, async_gpu_parallelism = false,
       prefetch_count = 0}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : !small, !small, !big, !big, !small, !small, !big, !big
}
