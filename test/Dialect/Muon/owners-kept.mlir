// Owners a step carries fix its assignment whatever its strategy: the
// strategy only says how muon-assign-owners fills them in when absent. The
// pass option strategy= recomputes them.
// RUN: muon-opt %s --muon-assign-owners | FileCheck %s
// RUN: muon-opt %s --muon-assign-owners=strategy=round_robin | FileCheck %s --check-prefix=OVERRIDE

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
// CHECK-LABEL: func.func @given
// CHECK: owners = array<i64: 3, 2>
// CHECK-SAME: strategy = #muon.strategy<balanced>
// OVERRIDE-LABEL: func.func @given
// OVERRIDE: owners = array<i64: 0, 1>
func.func @given(%p0: !t, %p1: !t, %g0: !t, %g1: !t, %m0: !t, %m1: !t) -> (!t, !t) {
  %r:4 = muon.step params(%p0, %p1 : !t, !t) grads(%g0, %g1 : !t, !t) momenta(%m0, %m1 : !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<balanced>, owners = array<i64: 3, 2>}
  return %r#0, %r#1 : !t, !t
}
