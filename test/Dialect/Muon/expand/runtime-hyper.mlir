// A step that reads lr and weight_decay as operands: every parameter's
// update takes the values (entry arguments), the roles record them as "lr"
// and "weight_decay" (no parameter), and the SPMD rule still holds.
// RUN: muon-opt %s --muon-assign-owners --muon-expand-step | FileCheck %s
// RUN: muon-opt %s --muon-assign-owners --muon-expand-step --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 2]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
!r = !dist.tensor<8x8xf32, @m, [replicate]>

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[LR:[a-z0-9]+]]: f64, %[[WD:[a-z0-9]+]]: f64
// CHECK-SAME: muon_arg_roles = [{{.*}}[{param = -1 : i64, role = "lr", step = 0 : i64}], [{param = -1 : i64, role = "weight_decay", step = 0 : i64}]]
// CHECK: muon.apply_update %{{.*}}, %{{.*}} lr %[[LR]] weight_decay %[[WD]] scale 1.4142135623730951 : tensor<8x8xf32>
// CHECK: muon.apply_update %{{.*}}, %{{.*}} lr %[[LR]] weight_decay %[[WD]] scale 1.000000e+00 : tensor<8x8xf32>
func.func @step(%p0: !t, %g0: !t, %m0: !t, %p1: !r, %g1: !r, %m1: !r, %lr: f64, %wd: f64) -> (!t, !r, !t, !r) {
  %r:4 = muon.step params(%p0, %p1 : !t, !r) grads(%g0, %g1 : !t, !r)
      momenta(%m0, %m1 : !t, !r) lr(%lr) weight_decay(%wd)
      {param_info = [#muon.param<"a">, #muon.param<"b">], prefetch_count = 0 : i64}
  return %r#0, %r#1, %r#2, %r#3 : !t, !r, !t, !r
}

// Only lr: weight_decay is the constant (default 0).
// CHECK-LABEL: func.func @only_lr(
// CHECK: muon.apply_update %{{.*}}, %{{.*}} lr %{{.*}} weight_decay 0.000000e+00 scale
func.func @only_lr(%p0: !t, %g0: !t, %m0: !t, %lr: f64) -> (!t, !t) {
  %r:2 = muon.step params(%p0 : !t) grads(%g0 : !t) momenta(%m0 : !t) lr(%lr)
      {prefetch_count = 0 : i64}
  return %r#0, %r#1 : !t, !t
}
