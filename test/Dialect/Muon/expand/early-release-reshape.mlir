// Early release next to a reshape (docs/schedule.md, "Early release"):
// HSDP with flat storage over [rep = 2, dp = 1]. After Newton-Schulz a
// result is scattered over the one-rank dp, which is a reshape only (no
// call), then broadcast to the other replica. The reshape is no level of
// calls: rank 0's 8x112504 result (3,600,128 bytes, 10.0004 us through
// 360 GB/s) outweighs the one level left (10 us between nodes), and rank
// 1's 320x320 Newton-Schulz takes part in no call of rank 0's first level,
// so rank 0's broadcast leaves before rank 1 orthogonalises.
// test/Dialect/Muon/expand/early-release-reshape-middle.mlir has the reshape
// in the middle of a chain. test/Run/early-release.test runs both on data.

// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: muon-opt %s --muon-expand-step | FileCheck %s --check-prefix=SPLIT
// With 11 us between nodes the one level costs more than the result takes:
// one group, both results in one broadcast batch after both Newton-Schulz.
// RUN: muon-opt %s --muon-expand-step=inter-node-latency-us=11 | FileCheck %s --check-prefix=ONE

// REPORT: 1 round releases lighter owners' results first; at most 2 collective calls per rank

// SPLIT: muon.newton_schulz {{.*}} : tensor<8x112504xf32>
// SPLIT: tensor.collapse_shape
// SPLIT-NOT: dist.scatter
// SPLIT: dist.broadcast {{.*}} axes [rep] root 0 : tensor<900032xf32> -> tensor<900032xf32>, !dist.token
// SPLIT: muon.newton_schulz {{.*}} : tensor<320x320xf32>
// SPLIT: dist.broadcast {{.*}} axes [rep] root 1 : tensor<102400xf32> -> tensor<102400xf32>, !dist.token

// ONE: muon.newton_schulz {{.*}} : tensor<8x112504xf32>
// ONE: muon.newton_schulz {{.*}} : tensor<320x320xf32>
// ONE: dist.broadcast_batch {{.*}} axes [rep] roots [0, 1]


dist.mesh @m [rep = 2, dp = 1]
dist.flat_group @g on @m[dp] numel [900032, 102400]
!a = !dist.tensor<8x112504xf32, @m, [replicate, reduced], storage = flat<@g, 0>>
!b = !dist.tensor<320x320xf32, @m, [replicate, reduced], storage = flat<@g, 1>>
!ga = !dist.tensor<8x112504xf32, @m, [replicate, partial<sum>]>
!gb = !dist.tensor<320x320xf32, @m, [replicate, partial<sum>]>
func.func @step(%p0: !a, %p1: !b, %g0: !ga, %g1: !gb, %m0: !a, %m1: !b) -> (!a, !b, !a, !b) {
  %r:4 = muon.step params(%p0, %p1 : !a, !b) grads(%g0, %g1 : !ga, !gb)
      momenta(%m0, %m1 : !a, !b)
      {lr = 0.02 : f64, owners = array<i64: 0, 1>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"wide">, #muon.param<"square">]}
  return %r#0, %r#1, %r#2, %r#3 : !a, !b, !a, !b
}

