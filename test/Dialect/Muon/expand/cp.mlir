// CP: parameters are replicated over the context-parallel axis. The
// broadcast over `cp` comes from the owner's cp coordinate, not always from
// coordinate 0 (a bug to guard against). Owner rank 3 = (dp 1, cp 1).

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s --check-prefix=OWNER
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 2, cp = 2]
!t = !dist.tensor<16x16xf32, @m, [shard<0>, replicate]>

// OWNER-LABEL: func.func @cp
// OWNER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1
// OWNER: muon.newton_schulz
// OWNER: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1
// OWNER: dist.broadcast %{{.*}} on @m axes [cp] root 1 : tensor<8x16xf32> -> tensor<8x16xf32>
// R0-LABEL: func.func @cp
// R0-NOT: dist.gather
// R0-NOT: muon.newton_schulz
// R0: dist.broadcast %{{.*}} on @m axes [cp] root 1
func.func @cp(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !t, !t
}
