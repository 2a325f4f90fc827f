// HSDP: replicated over `rep`, sharded over `shard`. Owner rank 3
// (rep = 1, shard = 1): only the replica rep = 1 gathers; after the scatter
// every shard position broadcasts from rep = 1 (not from rank 0).

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s --check-prefix=OWNER
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [rep = 2, shard = 2]
!t = !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>

// OWNER-LABEL: func.func @hsdp
// OWNER: dist.gather %{{.*}} on @m axes [shard] dim 0 root 1 : tensor<8x8xf32> -> tensor<16x8xf32>
// OWNER: muon.newton_schulz
// OWNER: dist.scatter %{{.*}} on @m axes [shard] dim 0 root 1
// OWNER: dist.broadcast %{{.*}} on @m axes [rep] root 1 : tensor<8x8xf32> -> tensor<8x8xf32>

// Rank 0 is in replica 0: no gather, no NS, no scatter; it receives its
// shard by the broadcast.
// R0-LABEL: func.func @hsdp
// R0-NOT: dist.gather
// R0-NOT: muon.newton_schulz
// R0-NOT: dist.scatter
// R0: dist.broadcast %{{.*}} on @m axes [rep] root 1
func.func @hsdp(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !t, !t
}
