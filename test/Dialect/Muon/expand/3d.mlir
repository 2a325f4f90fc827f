// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// One parameter at a time (async_gpu_parallelism = false): the checks follow
// each parameter's plan in order; rounds are checked in rounds.mlir.
// 3-D parallelism: dp (replicas) x fsdp x tp, two parameters with owners 5
// and 2. Every one of the 8 ranks is specialised; on each communicator all
// members issue the same collectives in the same order (checked here per
// rank with one shared prefix per communicator role, and for all ranks at
// once by dist-verify-spmd, which prints the sequences).
// Rank r = 4*dp + 2*fsdp + tp.

// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd=print-sequences -o /dev/null | FileCheck %s --check-prefix=SEQ
// RUN: for r in 0 1 2 3 4 5 6 7; do muon-opt %s --muon-expand-step --dist-specialize-rank=rank=$r | FileCheck %s --check-prefix=ALL; done
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=5 | FileCheck %s --check-prefix=R5
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=7 | FileCheck %s --check-prefix=R7
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0

dist.mesh @m [dp = 2, fsdp = 2, tp = 2]
!t = !dist.tensor<16x16xf32, @m, [replicate, shard<0>, shard<1>]>

// Parameter 0, owner 5 = (dp 1, fsdp 0, tp 1); parameter 1, owner 2 =
// (dp 0, fsdp 1, tp 0). Per communicator (instance):
// SEQ-DAG: communicator @m [dp] ranks {0, 4}: 2 collectives
// SEQ-DAG: communicator @m [dp] ranks {3, 7}: 2 collectives
// SEQ-DAG: communicator @m [fsdp] ranks {5, 7}: 2 collectives
// SEQ-DAG: communicator @m [fsdp] ranks {0, 2}: 2 collectives
// SEQ-DAG: communicator @m [tp] ranks {4, 5}: 2 collectives
// SEQ-DAG: communicator @m [tp] ranks {2, 3}: 2 collectives
// SEQ-NOT: communicator @m [fsdp] ranks {1, 3}

// Every rank: both broadcasts over dp, from the owners' dp coordinates, in
// parameter order; no rank issues anything else over dp.
// ALL-LABEL: func.func @three_d
// ALL-NOT: axes [dp]
// ALL: dist.broadcast %{{.*}} on @m axes [dp] root 1 : tensor<8x8xf32> -> tensor<8x8xf32>
// ALL-NOT: axes [dp]
// ALL: dist.broadcast %{{.*}} on @m axes [dp] root 0 : tensor<8x8xf32> -> tensor<8x8xf32>
// ALL-NOT: axes [dp]
// ALL: return

// R5-LABEL: func.func @three_d
// R5: dist.gather %{{.*}} on @m axes [tp] dim 1 root 1 : tensor<8x8xf32> -> tensor<8x16xf32>
// R5-NEXT: dist.gather %{{.*}} on @m axes [fsdp] dim 0 root 0 : tensor<8x16xf32> -> tensor<16x16xf32>
// R5-NEXT: muon.newton_schulz %{{.*}} : tensor<16x16xf32>
// R5-NEXT: dist.scatter %{{.*}} on @m axes [fsdp] dim 0 root 0 : tensor<16x16xf32> -> tensor<8x16xf32>
// R5-NEXT: dist.scatter %{{.*}} on @m axes [tp] dim 1 root 1 : tensor<8x16xf32> -> tensor<8x8xf32>
// R5-NEXT: dist.broadcast %{{.*}} on @m axes [dp] root 1
// R5-NOT: muon.newton_schulz
// R5: dist.broadcast %{{.*}} on @m axes [dp] root 0

// Rank 7 = (dp 1, fsdp 1, tp 1): in the owner's replica; it is the tp root
// (tp 1) of its tp group {6, 7}, then sends its half to 5 over fsdp.
// R7-LABEL: func.func @three_d
// R7: dist.gather %{{.*}} on @m axes [tp] dim 1 root 1
// R7-NEXT: dist.gather %{{.*}} on @m axes [fsdp] dim 0 root 0
// R7-NOT: muon.newton_schulz
// R7: dist.scatter %{{.*}} on @m axes [fsdp] dim 0 root 0
// R7-NEXT: dist.scatter %{{.*}} on @m axes [tp] dim 1 root 1
// R7-NEXT: dist.broadcast %{{.*}} on @m axes [dp] root 1

// Rank 0 = (dp 0, fsdp 0, tp 0): not in parameter 0's replica (only its
// broadcast), in parameter 1's: tp gather to tp 0, fsdp gather to fsdp 1.
// R0-LABEL: func.func @three_d
// R0-NOT: dist.gather
// R0: dist.broadcast %{{.*}} on @m axes [dp] root 1
// R0: muon.momentum_update
// R0-NEXT: dist.gather %{{.*}} on @m axes [tp] dim 1 root 0
// R0-NEXT: dist.gather %{{.*}} on @m axes [fsdp] dim 0 root 1
// R0-NOT: muon.newton_schulz
// R0: dist.scatter %{{.*}} on @m axes [fsdp] dim 0 root 1
// R0-NEXT: dist.scatter %{{.*}} on @m axes [tp] dim 1 root 0
// R0-NEXT: dist.broadcast %{{.*}} on @m axes [dp] root 0
func.func @three_d(%a: !t, %b: !t, %ga: !t, %gb: !t, %ma: !t, %mb: !t) -> (!t, !t, !t, !t) {
  %r:4 = muon.step params(%a, %b : !t, !t) grads(%ga, %gb : !t, !t) momenta(%ma, %mb : !t, !t)
      {lr = 0.02 : f64, async_gpu_parallelism = false, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 5, 2>}
  return %r#0, %r#1, %r#2, %r#3 : !t, !t, !t, !t
}
