// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// One parameter at a time (async_gpu_parallelism = false): the checks follow
// each parameter's plan in order; rounds are checked in rounds.mlir.
// EP. (1) A stack of 4 experts sharded over `ep` (dim 0, a batch dim) and
// FSDP over `dp`: each ep group orthogonalises its own 2 experts (batched
// NS on 2x8x8) on its owner (dp = 1); nothing crosses `ep`.
// (2) A 2-D expert weight annotated expert = ep[1]: it lives only where
// ep = 1, is owned there (rank 3) and never leaves that group.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s --check-prefix=R3
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [ep = 2, dp = 2]
!stack = !dist.tensor<4x8x8xf32, @m, [shard<0>, shard<1>]>
!w = !dist.tensor<8x8xf32, @m, [replicate, shard<0>]>

// Rank 1 = (ep 0, dp 1): owner of ep group 0's experts.
// R1-LABEL: func.func @ep
// R1: dist.gather %{{.*}} on @m axes [dp] dim 1 root 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
// R1-NEXT: muon.newton_schulz %{{.*}} : tensor<2x8x8xf32>
// R1-NEXT: dist.scatter %{{.*}} on @m axes [dp] dim 1 root 1 : tensor<2x8x8xf32> -> tensor<2x4x8xf32>
// R1-NOT: dist.gather
// R1-NOT: muon.newton_schulz
// R1: return

// Rank 3 = (ep 1, dp 1): owner of ep group 1's experts and of the expert-1
// weight.
// R3-LABEL: func.func @ep
// R3: dist.gather %{{.*}} on @m axes [dp] dim 1 root 1
// R3-NEXT: muon.newton_schulz %{{.*}} : tensor<2x8x8xf32>
// R3: dist.scatter %{{.*}} on @m axes [dp] dim 1 root 1
// R3: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<8x8xf32>
// R3-NEXT: muon.newton_schulz %{{.*}} : tensor<8x8xf32>
// R3-NEXT: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1

// Rank 0 = (ep 0, dp 0): joins its group's gather for the stack, and takes
// no part in the expert-1 weight at all.
// R0-LABEL: func.func @ep
// R0: dist.gather %{{.*}} on @m axes [dp] dim 1 root 1
// R0-NOT: muon.newton_schulz
// R0: dist.scatter %{{.*}} on @m axes [dp] dim 1 root 1
// R0-NOT: dist.gather
// R0-NOT: dist.scatter
// R0: return
func.func @ep(%s: !stack, %w: !w, %gs: !stack, %gw: !w, %ms: !stack, %mw: !w)
    -> (!stack, !w, !stack, !w) {
  %r:4 = muon.step params(%s, %w : !stack, !w) grads(%gs, %gw : !stack, !w)
      momenta(%ms, %mw : !stack, !w)
      {lr = 0.02 : f64, async_gpu_parallelism = false,
       param_info = [#muon.param<"experts.w1">, #muon.param<"expert1.gate", expert = ep[1]>],
       strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 1, 3>}
  return %r#0, %r#1, %r#2, %r#3 : !stack, !w, !stack, !w
}
