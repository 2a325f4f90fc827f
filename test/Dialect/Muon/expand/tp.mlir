// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// One parameter at a time (async_gpu_parallelism = false): the checks follow
// each parameter's plan in order; rounds are checked in rounds.mlir.
// TP with a per-parameter TP dim (parameter 0 on dim 0, parameter 1 on dim 1):
// weights are (out_features, in_features) as in PyTorch's nn.Linear, so a
// column-parallel weight is sharded on dim 0, a row-parallel one on dim 1;
// each is gathered along its own dim. Owners: rank 0 and rank 1.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [tp = 2]
!col = !dist.tensor<32x16xf32, @m, [shard<0>]>
!row = !dist.tensor<16x32xf32, @m, [shard<1>]>

// R0-LABEL: func.func @tp
// R0: dist.gather %{{.*}} on @m axes [tp] dim 0 root 0 : tensor<16x16xf32> -> tensor<32x16xf32>
// R0-NEXT: muon.newton_schulz %{{.*}} : tensor<32x16xf32>
// R0-NEXT: dist.scatter %{{.*}} on @m axes [tp] dim 0 root 0 : tensor<32x16xf32> -> tensor<16x16xf32>
// R0: dist.gather %{{.*}} on @m axes [tp] dim 1 root 1 : tensor<16x16xf32> -> tensor<16x32xf32>
// R0-NOT: muon.newton_schulz
// R0: dist.scatter %{{.*}} on @m axes [tp] dim 1 root 1 : tensor<16x32xf32> -> tensor<16x16xf32>

// R1-LABEL: func.func @tp
// R1: dist.gather %{{.*}} on @m axes [tp] dim 0 root 0
// R1-NOT: muon.newton_schulz
// R1: dist.scatter %{{.*}} on @m axes [tp] dim 0 root 0
// R1: dist.gather %{{.*}} on @m axes [tp] dim 1 root 1
// R1-NEXT: muon.newton_schulz %{{.*}} : tensor<16x32xf32>
// R1-NEXT: dist.scatter %{{.*}} on @m axes [tp] dim 1 root 1
func.func @tp(%w0: !col, %w1: !row, %g0: !col, %g1: !row, %m0: !col, %m1: !row)
    -> (!col, !row, !col, !row) {
  %r:4 = muon.step params(%w0, %w1 : !col, !row) grads(%g0, %g1 : !col, !row)
      momenta(%m0, %m1 : !col, !row)
      {lr = 0.02 : f64, async_gpu_parallelism = false, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 0, 1>}
  return %r#0, %r#1, %r#2, %r#3 : !col, !row, !col, !row
}
