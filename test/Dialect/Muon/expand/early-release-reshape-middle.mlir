// Early release next to a reshape, in the middle of a chain
// (docs/schedule.md, "Early release" and "Prefetch").

// On [rep = 2, dp = 1, tp = 2] with
// flat storage over dp, a result is scattered over tp, reshaped over dp,
// then broadcast over rep: two levels of calls (threshold 7.2 MB against
// rank 0's 9.6 MB, which travel in 27 us while rank 3's 640x640
// Newton-Schulz outlasts rank 0's by 112 us). The reshape level is no
// level: after waiting for the scatter, rank 0's broadcast is issued with
// the reshape, before rank 3 orthogonalises (estimated step 133.2 us,
// against 144.3 us in one group).
// test/Run/early-release.test runs this step on data.

// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: muon-opt %s --muon-expand-step | FileCheck %s

// REPORT: 1 round releases lighter owners' results first; at most 4 collective calls per rank

// CHECK: muon.newton_schulz {{.*}} : tensor<8x300000xf32>
// CHECK: dist.scatter {{.*}} axes [tp] dim 1 root 0
// CHECK: dist.wait
// CHECK: tensor.collapse_shape
// CHECK: dist.broadcast {{.*}} axes [rep] root 0 : tensor<1200000xf32>
// CHECK: muon.newton_schulz {{.*}} : tensor<640x640xf32>

dist.mesh @m [rep = 2, dp = 1, tp = 2]
dist.flat_group @g on @m[dp] numel [1200000, 204800]
!a = !dist.tensor<8x300000xf32, @m, [replicate, reduced, shard<1>], storage = flat<@g, 0>>
!b = !dist.tensor<640x640xf32, @m, [replicate, reduced, shard<1>], storage = flat<@g, 1>>
!ga = !dist.tensor<8x300000xf32, @m, [replicate, partial<sum>, shard<1>]>
!gb = !dist.tensor<640x640xf32, @m, [replicate, partial<sum>, shard<1>]>
func.func @step(%p0: !a, %p1: !b, %g0: !ga, %g1: !gb, %m0: !a, %m1: !b) -> (!a, !b, !a, !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !ga, !gb)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 3>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"wide">, #muon.param<"square">]}
  return %r#0, %r#1, %r#2, %r#3 : !a, !b, !a, !b
}
