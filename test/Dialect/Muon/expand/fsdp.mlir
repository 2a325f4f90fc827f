// The layout's plan with blocking collectives (prefetch_count = 0); the
// asynchronous schedule is checked in prefetch.mlir.
// FSDP (per-tensor dim-0 shards over dp). Owner rank 2: the update is
// gathered to rank 2 only (rooted gather), orthogonalised there, scattered.
// Every rank issues the gather and the scatter; only rank 2 runs NS.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=2 | FileCheck %s --check-prefix=OWNER
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=OTHER
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>

// OWNER-LABEL: func.func @fsdp
// OWNER: %[[M:.*]], %[[U:.*]] = muon.momentum_update %{{.*}}, %{{.*}} beta {{.*}} nesterov : tensor<4x8xf32>
// OWNER: %[[FULL:.*]] = dist.gather %[[U]] on @m axes [dp] dim 0 root 2 : tensor<4x8xf32> -> tensor<16x8xf32>
// OWNER: %[[O:.*]] = muon.newton_schulz %[[FULL]] steps 5 coeffs [3.444500e+00, -4.775000e+00, 2.031500e+00] eps {{.*}} in f32 : tensor<16x8xf32>
// OWNER: %[[S:.*]] = dist.scatter %[[O]] on @m axes [dp] dim 0 root 2 : tensor<16x8xf32> -> tensor<4x8xf32>
// OWNER: muon.apply_update %{{.*}}, %[[S]] lr 2.000000e-02 weight_decay 1.000000e-01 scale 1.4142135623730951 : tensor<4x8xf32>

// OTHER-LABEL: func.func @fsdp
// OTHER: dist.gather %{{.*}} on @m axes [dp] dim 0 root 2
// OTHER-NOT: muon.newton_schulz
// OTHER: %[[E:.*]] = tensor.empty() : tensor<16x8xf32>
// OTHER: dist.scatter %[[E]] on @m axes [dp] dim 0 root 2
func.func @fsdp(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, weight_decay = 0.1 : f64,
       strategy = #muon.strategy<explicit>, prefetch_count = 0, owners = array<i64: 2>}
  return %r#0, %r#1 : !t, !t
}
