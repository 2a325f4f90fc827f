// Reduced weights stored in pieces: the gradient is the cotangent (partial,
// each rank's whole contribution, not stored in pieces over the partial
// axes) and the step reduce-scatters it straight into the parameter's
// storage piece, outer split first, then all-reduces what is left on the
// smaller data. Weighted storage passes its weights, flat storage reduces
// the flattened gradient into the member's element range.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

// CHECK-LABEL: func.func @step
// FSDP, weighted: rank 0 keeps 4 of the 16 rows.
// CHECK: %[[F:.*]] = dist.reduce_scatter %{{.*}} on @m axes [dp] reduce sum dim 0 weights [1, 3] : tensor<16x8xf32> -> tensor<?x8xf32>
// CHECK: muon.momentum_update %{{.*}}, %[[F]]
// Flat member 1 lies wholly in rank 1's half of the 120-element buffer.
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK: %[[L:.*]] = dist.reduce_scatter %[[C]] on @m axes [dp] reduce sum dim 0 sizes [0, 24] : tensor<24xf32> -> tensor<?xf32>
// CHECK: muon.momentum_update %{{.*}}, %[[L]]
// Block reduced over both axes: the outer split (dim 1 on dp) first.
// CHECK: %[[B1:.*]] = dist.reduce_scatter %{{.*}} on @m axes [dp] reduce avg dim 1 : tensor<12x10xf32> -> tensor<12x5xf32>
// CHECK: %[[B2:.*]] = dist.reduce_scatter %[[B1]] on @m axes [tp] reduce sum dim 0 : tensor<12x5xf32> -> tensor<6x5xf32>
// CHECK: muon.momentum_update %{{.*}}, %[[B2]]
// HSDP: reduce-scatter over the storage axis, then all-reduce the piece.
// CHECK: %[[H1:.*]] = dist.reduce_scatter %{{.*}} on @m axes [tp] reduce sum dim 0 : tensor<16x12xf32> -> tensor<8x12xf32>
// CHECK: %[[H2:.*]] = dist.all_reduce %[[H1]] on @m axes [dp] reduce avg : tensor<8x12xf32> -> tensor<8x12xf32>
// CHECK: muon.momentum_update %{{.*}}, %[[H2]]

dist.mesh @m [dp = 2, tp = 2]
dist.flat_group @g on @m[dp] numel [96, 24]
!fsdp = !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = dim<0 on dp weights [1, 3]>>
!fsdp_g = !dist.tensor<16x8xf32, @m, [partial<sum>, replicate]>
!flat = !dist.tensor<6x4xf32, @m, [reduced, replicate], storage = flat<@g, 1>>
!flat_g = !dist.tensor<6x4xf32, @m, [partial<sum>, replicate]>
!block = !dist.tensor<12x10xf32, @m, [reduced, reduced], storage = block<1 on dp, 0 on tp>>
!block_g = !dist.tensor<12x10xf32, @m, [partial<avg>, partial<sum>]>
!hsdp = !dist.tensor<16x12xf32, @m, [reduced, reduced], storage = dim<0 on tp>>
!hsdp_g = !dist.tensor<16x12xf32, @m, [partial<avg>, partial<sum>]>
func.func @step(%p0: !fsdp, %g0: !fsdp_g, %m0: !fsdp, %p1: !flat, %g1: !flat_g, %m1: !flat,
                %p2: !block, %g2: !block_g, %m2: !block, %p3: !hsdp, %g3: !hsdp_g, %m3: !hsdp)
    -> (!fsdp, !flat, !block, !hsdp, !fsdp, !flat, !block, !hsdp) {
  %r:8 = muon.step params(%p0, %p1, %p2, %p3 : !fsdp, !flat, !block, !hsdp)
      grads(%g0, %g1, %g2, %g3 : !fsdp_g, !flat_g, !block_g, !hsdp_g)
      momenta(%m0, %m1, %m2, %m3 : !fsdp, !flat, !block, !hsdp)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0, 1, 2, 3>}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : !fsdp, !flat, !block, !hsdp, !fsdp, !flat, !block, !hsdp
}
