// ns-stack-bytes = B: an owner's whole matrices of one shape and element
// type share rounds, stacked while the stack holds at most B bytes (4 per
// element), and each stack runs as one muon.newton_schulz on a k x m x n
// batch. Owners: p0, p1, p2 (8x4, 128 bytes each) and p4 (16x8) on rank 0,
// p3 (8x4) on rank 1. Rank 0 takes p4 first (the largest), then the 8x4s.
//   B = 256:  rank 0's stacks [p4] [p0 p1] [p2], rank 1's [p3]:
//             rounds {p3, p4}, {p0, p1}, {p2}.
//   B = 1024: rank 0's stacks [p4] [p0 p1 p2]: rounds {p3, p4}, {p0, p1, p2}.
//   B = 0 (the default): one matrix per call (rounds.mlir).
// One at a time (async_gpu_parallelism = false) never stacks.

// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=256 --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=B256
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=256 --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=1024 --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=B1024
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=256 --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=1024 --dist-verify-spmd -o /dev/null
// RUN: not muon-opt %s --muon-expand-step=ns-stack-bytes=-1 2>&1 | FileCheck %s --check-prefix=NEG

// RUN: not muon-opt %s --muon-to-llvm=ns-stack-bytes=-5 2>&1 | FileCheck %s --check-prefix=NEG5
// NEG: error: muon-expand-step: ns-stack-bytes = -1 must be 0 (no stacking) or a byte count (muon-to-llvm also takes -1: by target)
// NEG-NOT: see current operation
// NEG5: error: muon-to-llvm: ns-stack-bytes = -5 must be -1 (by target), 0 (no stacking) or a byte count
// NEG5-NOT: muon-expand-step

dist.mesh @m [dp = 2]
!small = !dist.tensor<8x4xf32, @m, [shard<0>]>
!big = !dist.tensor<16x8xf32, @m, [shard<0>]>

// Round 0: p3 and p4, one matrix each.
// B256-LABEL: func.func @stacks
// B256: dist.gather_batch {{.*}} roots [1, 0] : (tensor<4x4xf32>, tensor<8x8xf32>) -> (tensor<8x4xf32>, tensor<16x8xf32>)
// B256: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// B256: dist.scatter_batch
// Round 1: p0 and p1 into one 2 x 8 x 4 batch, in index order, and out.
// B256: %[[G:.*]]:2 = dist.gather_batch {{.*}} roots [0, 0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
// One concat (not a chain of insert_slices, whose bufferization analysis
// grows with the chain's length squared).
// B256: %[[X0:.*]] = tensor.expand_shape %[[G]]#0 {{\[\[}}0, 1], [2]] output_shape [1, 8, 4] : tensor<8x4xf32> into tensor<1x8x4xf32>
// B256: %[[X1:.*]] = tensor.expand_shape %[[G]]#1 {{\[\[}}0, 1], [2]] output_shape [1, 8, 4] : tensor<8x4xf32> into tensor<1x8x4xf32>
// B256: %[[B:.*]] = tensor.concat dim(0) %[[X0]], %[[X1]] : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<2x8x4xf32>
// B256: %[[O:.*]] = muon.newton_schulz %[[B]] {{.*}} : tensor<2x8x4xf32>
// Each result is copied into a tensor of its own.
// B256: %[[O0:.*]] = tensor.extract_slice %[[O]][0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<8x4xf32>
// B256: %[[C0:.*]] = linalg.copy ins(%[[O0]] : tensor<8x4xf32>)
// B256: %[[O1:.*]] = tensor.extract_slice %[[O]][1, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<8x4xf32>
// B256: %[[C1:.*]] = linalg.copy ins(%[[O1]] : tensor<8x4xf32>)
// B256: dist.scatter_batch %[[C0]], %[[C1]] on @m axes [dp] dims [0, 0] roots [0, 0]
// Round 2: p2 alone.
// B256: dist.gather {{.*}} root 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// B256-NOT: tensor.concat
// B256: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// B256: dist.scatter
// B256: return

// Rank 1 orthogonalises p3 alone and takes part in every collective.
// R1-LABEL: func.func @stacks
// R1: dist.gather_batch
// R1: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// R1-NOT: muon.newton_schulz
// R1: dist.scatter_batch
// R1: dist.gather_batch {{.*}} roots [0, 0]
// R1-NOT: muon.newton_schulz
// R1: dist.scatter_batch {{.*}} roots [0, 0]
// R1: dist.gather {{.*}} root 0
// R1-NOT: muon.newton_schulz
// R1: return

// B1024-LABEL: func.func @stacks
// B1024: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// B1024: dist.gather_batch {{.*}} roots [0, 0, 0] : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
// B1024: tensor.concat dim(0) {{.*}} -> tensor<3x8x4xf32>
// B1024: muon.newton_schulz %{{.*}} : tensor<3x8x4xf32>
// B1024-NOT: muon.newton_schulz
// B1024: return
func.func @stacks(%p0: !small, %p1: !small, %p2: !small, %p3: !small, %p4: !big,
                  %g0: !small, %g1: !small, %g2: !small, %g3: !small, %g4: !big,
                  %m0: !small, %m1: !small, %m2: !small, %m3: !small, %m4: !big)
    -> (!small, !small, !small, !small, !big,
        !small, !small, !small, !small, !big) {
  %r:10 = muon.step params(%p0, %p1, %p2, %p3, %p4 : !small, !small, !small, !small, !big)
      grads(%g0, %g1, %g2, %g3, %g4 : !small, !small, !small, !small, !big)
      momenta(%m0, %m1, %m2, %m3, %m4 : !small, !small, !small, !small, !big)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 0, 0, 1, 0>, prefetch_count = 0}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9
      : !small, !small, !small, !small, !big,
        !small, !small, !small, !small, !big
}

// B256-LABEL: func.func @one_at_a_time
// B256-NOT: tensor.concat
// B256-COUNT-3: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// B256-NOT: muon.newton_schulz
// B256: return
func.func @one_at_a_time(%p0: !small, %p1: !small, %p2: !small,
                         %g0: !small, %g1: !small, %g2: !small,
                         %m0: !small, %m1: !small, %m2: !small)
    -> (!small, !small, !small, !small, !small, !small) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !small, !small, !small)
      grads(%g0, %g1, %g2 : !small, !small, !small)
      momenta(%m0, %m1, %m2 : !small, !small, !small)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 0, 0>, async_gpu_parallelism = false,
       prefetch_count = 0}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5
      : !small, !small, !small, !small, !small, !small
}
