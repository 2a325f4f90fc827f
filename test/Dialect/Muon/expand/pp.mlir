// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// One parameter at a time (async_gpu_parallelism = false): the checks follow
// each parameter's plan in order; rounds are checked in rounds.mlir.
// PP: a parameter of pipeline stage 1 (stage = pp[1]) is owned inside stage
// 1 (rank 3 = pp 1, dp 1); stage-0 ranks run nothing for it.

// RUN: muon-opt %s --muon-assign-owners --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s --check-prefix=OWNER
// RUN: muon-opt %s --muon-assign-owners --muon-expand-step --dist-specialize-rank=rank=2 | FileCheck %s --check-prefix=PEER
// RUN: muon-opt %s --muon-assign-owners --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=STAGE0
// RUN: muon-opt %s --muon-assign-owners | FileCheck %s --check-prefix=ASSIGN
// RUN: muon-opt %s --muon-assign-owners --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [pp = 2, dp = 2]
!t = !dist.tensor<8x8xf32, @m, [replicate, shard<0>]>

// Round robin over the stage's candidates {2, 3}: parameter 1 goes to 3.
// ASSIGN: owners = array<i64: 0, 3>
// OWNER-LABEL: func.func @pp
// OWNER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<8x8xf32>
// OWNER-NEXT: muon.newton_schulz
// OWNER-NEXT: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
// PEER-LABEL: func.func @pp
// PEER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1
// PEER-NOT: muon.newton_schulz
// PEER: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
// STAGE0-LABEL: func.func @pp
// STAGE0: dist.gather %{{.*}} on @m axes [dp] dim 0 root 0
// STAGE0-NEXT: muon.newton_schulz
// STAGE0-NEXT: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 0
// STAGE0-NOT: dist.gather
// STAGE0: return
func.func @pp(%a: !t, %b: !t, %ga: !t, %gb: !t, %ma: !t, %mb: !t) -> (!t, !t, !t, !t) {
  %r:4 = muon.step params(%a, %b : !t, !t) grads(%ga, %gb : !t, !t) momenta(%ma, %mb : !t, !t)
      {lr = 0.02 : f64, async_gpu_parallelism = false, prefetch_count = 0,
       param_info = [#muon.param<"stage0.w", stage = pp[0]>, #muon.param<"stage1.w", stage = pp[1]>]}
  return %r#0, %r#1, %r#2, %r#3 : !t, !t, !t, !t
}
