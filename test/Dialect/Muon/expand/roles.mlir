// muon-expand-step records on the entry which argument and result is which
// step operand (muon_arg_roles / muon_result_roles): hosts such as muon-run
// read them instead of re-deriving them. An argument the step does not use
// gets none.
// RUN: muon-opt %s --muon-expand-step | FileCheck %s

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>

// CHECK-LABEL: func.func @step(
// CHECK-SAME: muon_arg_roles = [
// CHECK-SAME: [{name = "m", param = 0 : i64, role = "momentum", step = 0 : i64}],
// CHECK-SAME: [{name = "m", param = 0 : i64, role = "param", step = 0 : i64}],
// CHECK-SAME: [{name = "m", param = 0 : i64, role = "grad", step = 0 : i64}],
// CHECK-SAME: [],
// CHECK-SAME: [{name = "v", param = 1 : i64, role = "grad", step = 0 : i64}],
// CHECK-SAME: [{name = "v", param = 1 : i64, role = "param", step = 0 : i64}],
// CHECK-SAME: [{name = "v", param = 1 : i64, role = "momentum", step = 0 : i64}]]
// CHECK-SAME: muon_result_roles = [
// CHECK-SAME: [{name = "v", param = 1 : i64, role = "momentum", step = 0 : i64}],
// CHECK-SAME: [{name = "m", param = 0 : i64, role = "param", step = 0 : i64}],
// CHECK-SAME: [{name = "v", param = 1 : i64, role = "param", step = 0 : i64}]]
func.func @step(%m0: !t, %p0: !t, %g0: !t, %x: !t, %g1: !t, %p1: !t, %m1: !t) -> (!t, !t, !t) {
  %r:4 = muon.step params(%p0, %p1 : !t, !t) grads(%g0, %g1 : !t, !t) momenta(%m0, %m1 : !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0, 1>,
       param_info = [#muon.param<"m">, #muon.param<"v">]}
  return %r#3, %r#0, %r#1 : !t, !t, !t
}
