// Flat and weighted storage splits in the round's batches (schedule.md,
// "Batched gathers and scatters"): the weighted parameter (owner 0) and a
// flat one (owner 1) share the first round's gather batch and scatter
// batch, each item with its own `sizes` or `weights`; the second flat
// parameter (owner 0) is alone in round 2, a plain dist.gather with sizes.
// A flat gather brings the element range: it becomes the matrix right
// after a blocking call (prefetch 0), or after the wait of an
// asynchronous one (prefetch 1); a flat scatter takes the range.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s
// RUN: sed 's/prefetch_count = 0/prefetch_count = 1/' %s | muon-opt --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=ASYNC
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @step
// CHECK: %[[B:.*]]:2 = dist.gather_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [1, 0] sizes [array<i64: 0, 8>, array<i64>] weights [array<i64>, array<i64: 1, 3>] : (tensor<?xf32>, tensor<?x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
// CHECK: muon.newton_schulz %[[B]]#1 {{.*}} : tensor<8x4xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x4xf32> into tensor<8xf32>
// CHECK: dist.scatter_batch %[[C]], %{{.*}} on @m axes [dp] dims [0, 0] roots [1, 0] sizes [array<i64: 0, 8>, array<i64>] weights [array<i64>, array<i64: 1, 3>] : (tensor<8xf32>, tensor<8x4xf32>) -> (tensor<?xf32>, tensor<?x4xf32>)
// CHECK: %[[G:.*]] = dist.gather %{{.*}} on @m axes [dp] dim 0 root 0 sizes [16, 8] : tensor<?xf32> -> tensor<24xf32>
// CHECK-NEXT: %[[X:.*]] = tensor.expand_shape %[[G]] {{.*}} into tensor<4x6xf32>
// CHECK-NEXT: muon.newton_schulz %[[X]]
// CHECK: tensor.collapse_shape %{{.*}} : tensor<4x6xf32> into tensor<24xf32>
// CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 0 sizes [16, 8] : tensor<24xf32> -> tensor<?xf32>

// ASYNC: dist.gather_batch {{.*}} sizes [array<i64: 0, 8>, array<i64>] weights [array<i64>, array<i64: 1, 3>] {{.*}}, !dist.token
// ASYNC: %[[G:.*]], %[[T:.*]] = dist.gather %{{.*}} sizes [16, 8] : tensor<?xf32> -> tensor<24xf32>, !dist.token
// ASYNC: dist.wait %[[T]]
// ASYNC-NEXT: %[[X:.*]] = tensor.expand_shape %[[G]] {{.*}} into tensor<4x6xf32>
// ASYNC-NEXT: muon.newton_schulz %[[X]]

// Two rounds: one gather and one scatter each (the weighted and flat items
// share a call), so 4 calls, against 6 with one call per matrix.
// REPORT: schedule: rounds, 2 rounds, blocking collectives; at most 4 collective calls per rank (6 without batching)

dist.mesh @m [dp = 2]
dist.flat_group @g on @m[dp] numel [24, 8]
!f0 = !dist.tensor<4x6xf32, @m, [replicate], storage = flat<@g, 0>>
!f1 = !dist.tensor<2x4xf32, @m, [replicate], storage = flat<@g, 1>>
!w = !dist.tensor<8x4xf32, @m, [replicate], storage = dim<0 on dp weights [1, 3]>>
func.func @step(%p0: !f0, %p1: !f1, %p2: !w, %g0: !f0, %g1: !f1, %g2: !w, %m0: !f0, %m1: !f1, %m2: !w) -> (!f0, !f1, !w, !f0, !f1, !w) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !f0, !f1, !w) grads(%g0, %g1, %g2 : !f0, !f1, !w) momenta(%m0, %m1, %m2 : !f0, !f1, !w) {lr = 0.02 : f64, owners = array<i64: 0, 1, 0>, prefetch_count = 0 : i64}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !f0, !f1, !w, !f0, !f1, !w
}
