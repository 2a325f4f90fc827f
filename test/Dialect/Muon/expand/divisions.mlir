// Divisions of a round (plan::divideRound; prefetch_count > 0): a round's
// Newton-Schulz runs in divisions by when its results are ready, and each
// division's scatters are issued as soon as its Newton-Schulz is done, so
// early results travel while later ones are still being orthogonalised.
// FSDP on [dp = 4], one round: p0 (2048x2048, about 2.6e11 FLOPs) on rank
// 0, p1 and p2 (64x64, about 7.9e6 each) on ranks 1 and 2. The gap between
// the releases is above an eighth of the latest and above ten inter-node
// latencies at the model's rate, so the round has two divisions: {p1, p2},
// then {p0}. Every rank issues p1's and p2's scatter batch before p0's
// Newton-Schulz: rank 0 receives its shards of them while it orthogonalises
// p0. Two small owners with nothing between their releases stay one
// division (one batch). Without prefetch the collectives block, and a
// division would only make the large owner wait: one scatter batch (P0).

// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: sed 's/prefetch_count = 1/prefetch_count = 0/' %s | muon-opt --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=P0
// RUN: muon-opt %s --muon-report=schedules=true -o /dev/null | FileCheck %s --check-prefix=REPORT

// R0-LABEL: func.func @divisions
// R0: %[[G:.*]]:3, %[[T:.*]] = dist.gather_batch {{.*}} roots [0, 1, 2] : {{.*}}, !dist.token
// R0: dist.wait %[[T]]
// R0-NOT: muon.newton_schulz
// R0: %[[S:.*]]:2, %[[U:.*]] = dist.scatter_batch {{.*}} roots [1, 2] : (tensor<64x64xf32>, tensor<64x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>), !dist.token
// R0-NEXT: muon.newton_schulz %[[G]]#0 {{.*}} : tensor<2048x2048xf32>
// R0: %{{.*}}, %[[V:.*]] = dist.scatter %{{.*}} on @m axes [dp] dim 0 root 0 : tensor<2048x2048xf32> -> tensor<512x2048xf32>, !dist.token
// R0: dist.wait %[[U]]
// R0: dist.wait %[[V]]
// R0: return

// R1-LABEL: func.func @divisions
// R1: dist.gather_batch {{.*}} roots [0, 1, 2]
// R1: muon.newton_schulz {{.*}} : tensor<64x64xf32>
// R1: dist.scatter_batch {{.*}} roots [1, 2]
// R1-NOT: muon.newton_schulz
// R1: dist.scatter %{{.*}} root 0
// R1: return

// P0-LABEL: func.func @divisions
// P0: muon.newton_schulz {{.*}} : tensor<2048x2048xf32>
// P0: dist.scatter_batch {{.*}} roots [0, 1, 2]
// P0-NOT: dist.scatter

// The estimate follows the same order: prefetch makes one call more per
// rank than the blocking rounds (the second division's scatter).
// REPORT: {{^ *}}rounds {{[0-9.]+ +[0-9.]+}} 2 16777216
// REPORT: {{^ *}}rounds+prefetch1 {{[0-9.]+ +[0-9.]+}} 3 16777216

dist.mesh @m [dp = 4]
!big = !dist.tensor<2048x2048xf32, @m, [shard<0>]>
!small = !dist.tensor<64x64xf32, @m, [shard<0>]>

func.func @divisions(%p0: !big, %p1: !small, %p2: !small, %g0: !big, %g1: !small, %g2: !small, %m0: !big, %m1: !small, %m2: !small)
    -> (!big, !small, !small, !big, !small, !small) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !big, !small, !small)
      grads(%g0, %g1, %g2 : !big, !small, !small)
      momenta(%m0, %m1, %m2 : !big, !small, !small)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 2>, prefetch_count = 1}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !big, !small, !small, !big, !small, !small
}
