// FSDP + TP on one mesh, nested both ways. The gather undoes the inner split
// first: TP inside FSDP (gather TP, then FSDP) is the DTensor default (dp
// outer); a declared order {0 = [tp, dp]} makes tp outer and reverses it;
// FSDP storage on top of TP shards is inner, so dp goes first there.
// Owner: rank 3 (dp = 1, tp = 1).

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s --check-prefix=OWNER
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 2, tp = 2]
!dtensor = !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>]>
!tpouter = !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, dp]}>
!storage = !dist.tensor<16x8xf32, @m, [replicate, shard<0>], storage = dim<0 on dp>>
!twod = !dist.tensor<16x8xf32, @m, [shard<0>, shard<1>]>

// OWNER-LABEL: func.func @dtensor_default
// OWNER: dist.gather %{{.*}} on @m axes [tp] dim 0 root 1 : tensor<4x8xf32> -> tensor<8x8xf32>
// OWNER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// OWNER: muon.newton_schulz %{{.*}} : tensor<16x8xf32>
// OWNER: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<16x8xf32> -> tensor<8x8xf32>
// OWNER: dist.scatter %{{.*}} on @m axes [tp] dim 0 root 1 : tensor<8x8xf32> -> tensor<4x8xf32>
// R0-LABEL: func.func @dtensor_default
// R0: dist.gather %{{.*}} on @m axes [tp] dim 0 root 1
// R0-NOT: dist.gather
// R0-NOT: muon.newton_schulz
// R0-NOT: dist.scatter {{.*}} axes [dp]
// R0: dist.scatter %{{.*}} on @m axes [tp] dim 0 root 1
// R0: return
func.func @dtensor_default(%p: !dtensor, %g: !dtensor, %m: !dtensor) -> (!dtensor, !dtensor) {
  %r:2 = muon.step params(%p : !dtensor) grads(%g : !dtensor) momenta(%m : !dtensor)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !dtensor, !dtensor
}

// OWNER-LABEL: func.func @tp_outer
// OWNER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<8x8xf32>
// OWNER: dist.gather %{{.*}} on @m axes [tp] dim 0 root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// OWNER: muon.newton_schulz
// OWNER: dist.scatter %{{.*}} on @m axes [tp] dim 0 root 1
// OWNER: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
func.func @tp_outer(%p: !tpouter, %g: !tpouter, %m: !tpouter) -> (!tpouter, !tpouter) {
  %r:2 = muon.step params(%p : !tpouter) grads(%g : !tpouter) momenta(%m : !tpouter)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !tpouter, !tpouter
}

// OWNER-LABEL: func.func @fsdp_storage_on_tp
// OWNER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<8x8xf32>
// OWNER: dist.gather %{{.*}} on @m axes [tp] dim 0 root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// OWNER: muon.newton_schulz
// OWNER: dist.scatter %{{.*}} on @m axes [tp] dim 0 root 1
// OWNER: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
// R0-LABEL: func.func @fsdp_storage_on_tp
// R0: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1
// R0-NOT: muon.newton_schulz
// R0: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
func.func @fsdp_storage_on_tp(%p: !storage, %g: !storage, %m: !storage) -> (!storage, !storage) {
  %r:2 = muon.step params(%p : !storage) grads(%g : !storage) momenta(%m : !storage)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !storage, !storage
}

// Different dims: mesh order is outer-first, so tp (dim 1) is undone first.
// OWNER-LABEL: func.func @two_dims
// OWNER: dist.gather %{{.*}} on @m axes [tp] dim 1 root 1 : tensor<8x4xf32> -> tensor<8x8xf32>
// OWNER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// OWNER: muon.newton_schulz
// OWNER: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
// OWNER: dist.scatter %{{.*}} on @m axes [tp] dim 1 root 1
func.func @two_dims(%p: !twod, %g: !twod, %m: !twod) -> (!twod, !twod) {
  %r:2 = muon.step params(%p : !twod) grads(%g : !twod) momenta(%m : !twod)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !twod, !twod
}
