// Early release (docs/schedule.md): in a round where some owners'
// Newton-Schulz is at most half the longest, those owners' results leave
// first, while the others still orthogonalise. HSDP on [rep = 2, dp = 2]:
// ranks 0 and 1 (replica 0) orthogonalise two wide 8x131072 matrices each
// (4 MiB apiece), ranks 2 and 3 (replica 1) one 640x640 matrix each (23x
// the FLOPs of the two wide ones: on the H100 model their Newton-Schulz
// outlasts replica 0's by 112 us). Replica 0's scatters involve no rank of
// replica 1, and rank 0's results (8 MiB) take longer through a 360 GB/s
// link (23 us, well within those 112 us) than the two extra levels of
// calls take in latency (2 x 10 us): the round runs in two release groups
// (estimated step 135.5 us, against 154.2 us in one).
// test/Run/early-release.test runs this step on data.

// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=2 | FileCheck %s --check-prefix=RANK2
// RUN: muon-opt %s --muon-expand-step | FileCheck %s --check-prefix=SPLIT
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: muon-opt %s --muon-report=format=json -o - | FileCheck %s --check-prefix=JSON

// With a latency of 100 us between nodes the extra calls cost more than
// the wide results take (2 x 100 us against 23 us), and without prefetch
// (blocking calls) a split would hold replica 1 up: one group, every
// result after every Newton-Schulz.
// RUN: muon-opt %s --muon-expand-step=inter-node-latency-us=100 | FileCheck %s --check-prefix=ONE
// RUN: muon-opt %s --muon-report=inter-node-latency-us=100 -o /dev/null | FileCheck %s --check-prefix=REPORT-ONE
// RUN: sed 's/prefetch_count = 1/prefetch_count = 0/' %s | muon-opt --muon-expand-step | FileCheck %s --check-prefix=ONE

// Rank 2 waits for its gather, issues the broadcast of replica 0's four
// results to it (asynchronous) and only then runs its Newton-Schulz; the
// wide results are applied once its own scatter is under way.
// RANK2: dist.gather_batch
// RANK2: dist.wait
// RANK2: %[[B:.*]]:4, %[[T:.*]] = dist.broadcast_batch {{.*}} on @m axes [rep] roots [0, 0, 0, 0] : (tensor<4x131072xf32>
// RANK2: muon.newton_schulz {{.*}} : tensor<640x640xf32>
// RANK2: dist.scatter_batch {{.*}} : (tensor<640x640xf32>, tensor<640x640xf32>)
// RANK2: dist.wait %[[T]]
// RANK2: muon.apply_update {{.*}}, %[[B]]#0
// RANK2: dist.broadcast_batch {{.*}} roots [1, 1] : (tensor<320x640xf32>

// SPLIT: dist.gather_batch {{.*}} : (tensor<4x131072xf32>
// SPLIT: dist.gather_batch {{.*}} : (tensor<320x640xf32>
// SPLIT: muon.newton_schulz {{.*}} : tensor<8x131072xf32>
// SPLIT: dist.scatter_batch {{.*}} : (tensor<8x131072xf32>
// SPLIT: dist.broadcast_batch {{.*}} : (tensor<4x131072xf32>
// SPLIT: muon.newton_schulz {{.*}} : tensor<640x640xf32>
// SPLIT: dist.scatter_batch {{.*}} : (tensor<640x640xf32>
// SPLIT: dist.broadcast_batch {{.*}} : (tensor<320x640xf32>

// ONE: muon.newton_schulz {{.*}} : tensor<8x131072xf32>
// ONE: muon.newton_schulz {{.*}} : tensor<640x640xf32>
// ONE: dist.scatter_batch {{.*}} : (tensor<8x131072xf32>, tensor<8x131072xf32>, tensor<8x131072xf32>, tensor<8x131072xf32>)
// ONE: dist.scatter_batch {{.*}} : (tensor<640x640xf32>
// ONE: dist.broadcast_batch {{.*}} roots [0, 0, 0, 0, 1, 1]

// REPORT: schedule: rounds, 1 round, prefetch 1, 1 round releases lighter owners' results first; at most 4 collective calls per rank
// REPORT-ONE: schedule: rounds, 1 round, prefetch 1; at most 3 collective calls per rank {{.*}} on the cost model of the options
// JSON: "early_release_rounds": 1

dist.mesh @m [rep = 2, dp = 2]
!w = !dist.tensor<8x131072xf32, @m, [replicate, shard<0>]>
!s = !dist.tensor<640x640xf32, @m, [replicate, shard<0>]>
func.func @step(%p0: !w, %p1: !w, %p2: !w, %p3: !w, %p4: !s, %p5: !s,
                %g0: !w, %g1: !w, %g2: !w, %g3: !w, %g4: !s, %g5: !s,
                %m0: !w, %m1: !w, %m2: !w, %m3: !w, %m4: !s, %m5: !s)
    -> (!w, !w, !w, !w, !s, !s, !w, !w, !w, !w, !s, !s) {
  %r:12 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5 : !w, !w, !w, !w, !s, !s)
      grads(%g0, %g1, %g2, %g3, %g4, %g5 : !w, !w, !w, !w, !s, !s)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5 : !w, !w, !w, !w, !s, !s)
      {lr = 0.02 : f64, owners = array<i64: 0, 0, 1, 1, 2, 3>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"w0">, #muon.param<"w1">, #muon.param<"w2">,
                     #muon.param<"w3">, #muon.param<"s0">, #muon.param<"s1">]}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11
      : !w, !w, !w, !w, !s, !s, !w, !w, !w, !w, !s, !s
}
