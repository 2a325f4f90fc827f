// DDP: every rank holds the whole parameter. The gradient arrives partial
// (unreduced, the cotangent of `reduced`): the step all-reduces it, then
// only the owner (rank 3) orthogonalises and broadcasts from rank 3.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=3 | FileCheck %s --check-prefix=OWNER
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=OTHER
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 4]
!p = !dist.tensor<8x8xf32, @m, [reduced]>
!g = !dist.tensor<8x8xf32, @m, [partial<avg>]>

// OWNER-LABEL: func.func @ddp
// OWNER: %[[G:.*]] = dist.all_reduce %{{.*}} on @m axes [dp] reduce avg : tensor<8x8xf32> -> tensor<8x8xf32>
// OWNER: muon.momentum_update %{{.*}}, %[[G]]
// OWNER-NOT: dist.gather
// OWNER: muon.newton_schulz
// OWNER: dist.broadcast %{{.*}} on @m axes [dp] root 3
// OTHER-LABEL: func.func @ddp
// OTHER: dist.all_reduce
// OTHER-NOT: muon.newton_schulz
// OTHER: dist.broadcast %{{.*}} on @m axes [dp] root 3
func.func @ddp(%p: !p, %g: !g, %m: !p) -> (!p, !p) {
  %r:2 = muon.step params(%p : !p) grads(%g : !g) momenta(%m : !p)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 3>}
  return %r#0, %r#1 : !p, !p
}
