// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// Storage (memory-only) sharding: per-tensor dim (FSDP2),
// weighted, 2-D block, flat group (FSDP1, element ranges) and whole tensor
// on one rank (the Muon case: no collective at all). Owner: rank 1.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 4]
dist.mesh @g [r = 2, c = 2]
dist.flat_group @group on @m[dp] numel [64, 16]
!dim = !dist.tensor<16x8xf32, @m, [replicate], storage = dim<0 on dp>>
!wtd = !dist.tensor<16x8xf32, @m, [replicate], storage = dim<0 on dp weights [1, 2, 3, 2]>>
!blk = !dist.tensor<8x8xf32, @g, [replicate, replicate], storage = block<0 on r, 1 on c>>
!fl0 = !dist.tensor<8x8xf32, @m, [replicate], storage = flat<@group, 0>>
!fl1 = !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@group, 1>>
!whl = !dist.tensor<8x8xf32, @m, [replicate], storage = whole<on dp owner 1>>

// CHECK-LABEL: func.func @dim
// CHECK: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: muon.newton_schulz
// CHECK-NEXT: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<16x8xf32> -> tensor<4x8xf32>
func.func @dim(%p: !dim, %g: !dim, %m: !dim) -> (!dim, !dim) {
  %r:2 = muon.step params(%p : !dim) grads(%g : !dim) momenta(%m : !dim)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 1>}
  return %r#0, %r#1 : !dim, !dim
}

// Weighted: pieces 2, 4, 6, 4 rows; the weights travel with the collective.
// CHECK-LABEL: func.func @weighted
// CHECK: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 weights [1, 2, 3, 2] : tensor<?x8xf32> -> tensor<16x8xf32>
// CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 weights [1, 2, 3, 2] : tensor<16x8xf32> -> tensor<?x8xf32>
func.func @weighted(%p: !wtd, %g: !wtd, %m: !wtd) -> (!wtd, !wtd) {
  %r:2 = muon.step params(%p : !wtd) grads(%g : !wtd) momenta(%m : !wtd)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 1>}
  return %r#0, %r#1 : !wtd, !wtd
}

// Block: c (inner) then r (outer); owner rank 1 = (r 0, c 1).
// CHECK-LABEL: func.func @block
// CHECK: dist.gather %{{.*}} on @g axes [c] dim 1 root 1 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK: dist.gather %{{.*}} on @g axes [r] dim 0 root 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK: muon.newton_schulz
// CHECK: dist.scatter %{{.*}} on @g axes [r] dim 0 root 0
// CHECK: dist.scatter %{{.*}} on @g axes [c] dim 1 root 1
func.func @block(%p: !blk, %g: !blk, %m: !blk) -> (!blk, !blk) {
  %r:2 = muon.step params(%p : !blk) grads(%g : !blk) momenta(%m : !blk)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 1>}
  return %r#0, %r#1 : !blk, !blk
}

// Flat group of 64 + 16 elements over 4 ranks (20 each): member 0 is
// elements [0, 64): 20, 20, 20, 4 of it per rank; member 1 is [64, 80):
// all on rank 3. Each is gathered by element ranges and reshaped.
// CHECK-LABEL: func.func @flat
// CHECK: %[[F:.*]] = dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 sizes [20, 20, 20, 4] : tensor<?xf32> -> tensor<64xf32>
// CHECK-NEXT: tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
// CHECK: muon.newton_schulz %{{.*}} : tensor<8x8xf32>
// CHECK: tensor.collapse_shape
// CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 sizes [20, 20, 20, 4] : tensor<64xf32> -> tensor<?xf32>
// CHECK: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 sizes [0, 0, 0, 16] : tensor<?xf32> -> tensor<16xf32>
// CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 sizes [0, 0, 0, 16]
func.func @flat(%a: !fl0, %b: !fl1, %ga: !fl0, %gb: !fl1, %ma: !fl0, %mb: !fl1)
    -> (!fl0, !fl1, !fl0, !fl1) {
  %r:4 = muon.step params(%a, %b : !fl0, !fl1) grads(%ga, %gb : !fl0, !fl1)
      momenta(%ma, %mb : !fl0, !fl1)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 1, 1>}
  return %r#0, %r#1, %r#2, %r#3 : !fl0, !fl1, !fl0, !fl1
}

// Whole storage on dp = 1: the owner already holds everything, so there is
// no collective; other ranks hold nothing and do nothing.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: dist.gather
// CHECK: muon.newton_schulz %{{.*}} : tensor<8x8xf32>
// CHECK-NOT: dist.scatter
// CHECK: return
// R0-LABEL: func.func @whole
// R0-NOT: muon.
// R0: return
func.func @whole(%p: !whl, %g: !whl, %m: !whl) -> (!whl, !whl) {
  %r:2 = muon.step params(%p : !whl) grads(%g : !whl) momenta(%m : !whl)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 1>}
  return %r#0, %r#1 : !whl, !whl
}
