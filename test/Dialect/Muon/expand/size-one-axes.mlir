// Axes of size 1 have no steps (muon-dialect.md): dim storage over a
// one-rank dp and a partial gradient over it need no collective; only the
// tp broadcast from the owner is left. Flat storage keeps the steps that
// move between its element range and the matrix, as reshapes only: the
// gradient's reduce-scatter, the gather and the scatter over the one rank
// are no collectives. Owner: rank 1 (dp = 0, tp = 1).

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Both steps: one call per rank, the broadcast (the flat one made four
// before its one-rank steps were reshapes only).
// REPORT-COUNT-2: at most 1 collective calls per rank (1 without batching)

// CHECK-LABEL: func.func @dim_storage
// CHECK-NOT: dist.reduce_scatter
// CHECK-NOT: dist.all_reduce
// CHECK-NOT: dist.gather
// CHECK: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// CHECK-NOT: dist.scatter
// CHECK: dist.broadcast %{{.*}} on @m axes [tp] root 1 : tensor<16x8xf32>
// CHECK: return

// CHECK-LABEL: func.func @flat_storage
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} : tensor<16x8xf32> into tensor<128xf32>
// CHECK-NOT: dist.reduce_scatter
// CHECK: muon.momentum_update %{{.*}}, %[[FLAT]]
// CHECK-NOT: dist.gather
// CHECK: tensor.expand_shape
// CHECK: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// CHECK: tensor.collapse_shape
// CHECK-NOT: dist.scatter
// CHECK: dist.broadcast %{{.*}} on @m axes [tp] root 1 : tensor<128xf32>
// CHECK: return

dist.mesh @m [dp = 1, tp = 2]
dist.flat_group @g on @m[dp] numel [128]
!dim = !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = dim<0 on dp>>
!flat = !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = flat<@g, 0>>
!grad = !dist.tensor<16x8xf32, @m, [partial<sum>, replicate]>
func.func @dim_storage(%p: !dim, %g: !grad, %m: !dim) -> (!dim, !dim) {
  %r:2 = muon.step params(%p : !dim) grads(%g : !grad) momenta(%m : !dim)
     {lr = 0.02 : f64, owners = array<i64: 1>}
  return %r#0, %r#1 : !dim, !dim
}
func.func @flat_storage(%p: !flat, %g: !grad, %m: !flat) -> (!flat, !flat) {
  %r:2 = muon.step params(%p : !flat) grads(%g : !grad) momenta(%m : !flat)
     {lr = 0.02 : f64, owners = array<i64: 1>}
  return %r#0, %r#1 : !flat, !flat
}
