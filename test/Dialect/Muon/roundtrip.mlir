// RUN: muon-opt %s | muon-opt --mlir-print-local-scope | FileCheck %s
// RUN: muon-opt %s --mlir-print-op-generic | muon-opt --mlir-print-local-scope | FileCheck %s

dist.mesh @m [ep = 2, dp = 2]
!t = !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>

// CHECK-LABEL: func.func @step
// CHECK: %{{.*}}:2, %{{.*}}:2 = muon.step params(%{{.*}}, %{{.*}} : !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>, !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>)
// CHECK-SAME: async_gpu_parallelism = false
// CHECK-SAME: lr_adjust = #muon.lr_adjust<match_rms_adamw>
// CHECK-SAME: momentum_form = #muon.momentum_form<sum>
// CHECK-SAME: ns_dtype = bf16
// CHECK-SAME: param_info = [#muon.param<"a", split = 1 [4, 4]>, #muon.param<"b", expert = ep[1], split = 0 [8, 8]>]
// CHECK-SAME: strategy = #muon.strategy<balanced>
func.func @step(%a: !t, %b: !t, %ga: !t, %gb: !t, %ma: !t, %mb: !t) -> (!t, !t, !t, !t) {
  %r:4 = muon.step params(%a, %b : !t, !t) grads(%ga, %gb : !t, !t) momenta(%ma, %mb : !t, !t)
      {lr = 0.02 : f64, momentum = 0.9 : f64, nesterov = false, ns_steps = 2,
       ns_coeffs = array<f64: 3.0, -4.0, 2.0, 2.5, -3.5, 1.5>, eps = 1.0e-6 : f64,
       weight_decay = 0.01 : f64, lr_adjust = #muon.lr_adjust<match_rms_adamw>,
       momentum_form = #muon.momentum_form<sum>, ns_dtype = bf16,
       strategy = #muon.strategy<balanced>, prefetch_count = 2,
       async_gpu_parallelism = false,
       param_info = [#muon.param<"a", split = 1 [4, 4]>, #muon.param<"b", expert = ep[1], split = 0 [8, 8]>]}
  return %r#0, %r#1, %r#2, %r#3 : !t, !t, !t, !t
}

// CHECK-LABEL: func.func @pieces
// CHECK: muon.momentum_update %{{.*}}, %{{.*}} beta 9.000000e-01 sum nesterov : tensor<?x8xf32>
// CHECK: muon.newton_schulz %{{.*}} steps 2 coeffs [3.000000e+00, -4.000000e+00, 2.000000e+00] eps {{.*}} in bf16 : tensor<2x16x8xf32>
// CHECK: muon.apply_update %{{.*}}, %{{.*}} lr 2.000000e-02 weight_decay 0.000000e+00 scale 1.000000e+00 : tensor<?x8xf32>
// CHECK: muon.apply_update %{{.*}}, %{{.*}} lr %[[LR:.*]] weight_decay 1.000000e-01 scale 1.000000e+00 : tensor<?x8xf32>
// CHECK: muon.apply_update %{{.*}}, %{{.*}} lr 2.000000e-02 weight_decay %[[LR]] scale 1.000000e+00 : tensor<?x8xf32>
func.func @pieces(%m: tensor<?x8xf32>, %g: tensor<?x8xf32>, %x: tensor<2x16x8xf32>, %lr: f64) {
  %m2, %u = muon.momentum_update %m, %g beta 0.9 sum nesterov : tensor<?x8xf32>
  %o = muon.newton_schulz %x steps 2 coeffs [3.0, -4.0, 2.0] eps 1.0e-7 in bf16 : tensor<2x16x8xf32>
  %p = muon.apply_update %m2, %u lr 0.02 weight_decay 0.0 scale 1.0 : tensor<?x8xf32>
  %p2 = muon.apply_update %m2, %u lr %lr weight_decay 0.1 scale 1.0 : tensor<?x8xf32>
  %p3 = muon.apply_update %m2, %u lr 0.02 weight_decay %lr scale 1.0 : tensor<?x8xf32>
  return
}

// lr and weight_decay read at run time.
// CHECK-LABEL: func.func @runtime_hyper
// CHECK: muon.step params(%{{.*}}) grads(%{{.*}}) momenta(%{{.*}}) lr(%arg3) weight_decay(%arg4) {param_info
func.func @runtime_hyper(%p: !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>, %g: !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>, %m: !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>, %lr: f64, %wd: f64) {
  %r:2 = muon.step params(%p : !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>) grads(%g : !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>) momenta(%m : !dist.tensor<16x8xf32, @m, [replicate, shard<0>]>) lr(%lr) weight_decay(%wd) {param_info = [#muon.param<"w">]}
  return
}

// A global-view step (plain tensors, before convert-shard-to-dist).
// CHECK-LABEL: func.func @global_view
// CHECK: %{{.*}}, %{{.*}} = muon.step params(%arg0 : tensor<16x8xf32>) grads(%arg1 : tensor<16x8xf32>) momenta(%arg2 : tensor<16x8xf32>) {lr = 2.000000e-02 : f64}
func.func @global_view(%p: tensor<16x8xf32>, %g: tensor<16x8xf32>, %m: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %r:2 = muon.step params(%p : tensor<16x8xf32>) grads(%g : tensor<16x8xf32>) momenta(%m : tensor<16x8xf32>) {lr = 0.02 : f64}
  return %r#0, %r#1 : tensor<16x8xf32>, tensor<16x8xf32>
}
