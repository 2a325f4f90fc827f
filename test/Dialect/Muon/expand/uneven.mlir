// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// Uneven shapes follow the chunk rule: 10 rows over 4 ranks are 3, 3, 3, 1;
// 7x5 over tp = 2 columns is 3 + 2. Local sizes that differ between ranks
// are dynamic; the full tensor on the owner is static.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-expand-step --dist-print-layouts -o /dev/null | FileCheck %s --check-prefix=LAYOUT

dist.mesh @m [dp = 4]
dist.mesh @t [dp = 2, tp = 2]
!rows = !dist.tensor<10x6xf32, @m, [shard<0>]>
!both = !dist.tensor<7x5xf32, @t, [shard<0>, shard<1>]>

// LAYOUT: !dist.tensor<10x6xf32, @m, [shard<0>]>
// LAYOUT: rank 3 (dp=3): local 1x6 at offset [9, 0]

// CHECK-LABEL: func.func @rows
// CHECK: dist.to_local %{{.*}} -> tensor<?x6xf32>
// CHECK: dist.gather %{{.*}} on @m axes [dp] dim 0 root 3 : tensor<?x6xf32> -> tensor<10x6xf32>
// CHECK-NEXT: muon.newton_schulz %{{.*}} : tensor<10x6xf32>
// CHECK-NEXT: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 3 : tensor<10x6xf32> -> tensor<?x6xf32>
// CHECK: muon.apply_update {{.*}} scale 1.2909944487358056 : tensor<?x6xf32>
func.func @rows(%p: !rows, %g: !rows, %m: !rows) -> (!rows, !rows) {
  %r:2 = muon.step params(%p : !rows) grads(%g : !rows) momenta(%m : !rows)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 3>}
  return %r#0, %r#1 : !rows, !rows
}

// Owner rank 3 = (dp 1, tp 1): tp (dim 1) first, then dp (dim 0).
// CHECK-LABEL: func.func @both
// CHECK: dist.gather %{{.*}} on @t axes [tp] dim 1 root 1 : tensor<?x?xf32> -> tensor<?x5xf32>
// CHECK-NEXT: dist.gather %{{.*}} on @t axes [dp] dim 0 root 1 : tensor<?x5xf32> -> tensor<7x5xf32>
// CHECK-NEXT: muon.newton_schulz %{{.*}} : tensor<7x5xf32>
// CHECK-NEXT: dist.scatter %{{.*}} on @t axes [dp] dim 0 root 1 : tensor<7x5xf32> -> tensor<?x5xf32>
// CHECK-NEXT: dist.scatter %{{.*}} on @t axes [tp] dim 1 root 1 : tensor<?x5xf32> -> tensor<?x?xf32>
func.func @both(%p: !both, %g: !both, %m: !both) -> (!both, !both) {
  %r:2 = muon.step params(%p : !both) grads(%g : !both) momenta(%m : !both)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 3>}
  return %r#0, %r#1 : !both, !both
}
