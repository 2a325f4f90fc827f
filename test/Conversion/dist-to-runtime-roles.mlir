// convert-dist-to-runtime publishes the roles muon-expand-step recorded as
// the ABI table __muon_roles_<entry> (format in muon_runtime.h):
// [version 1, #args, #results, then per argument and per result:
//  k, (role, step, param) * k], role 0 param, 1 grad, 2 momentum.
// A step result the entry does not return is dead code, not an error.
// RUN: muon-opt %s --muon-expand-step --convert-muon-to-linalg --convert-muon-to-runtime --convert-dist-to-runtime | FileCheck %s

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>

// Arguments m, p, g, an unused x; one result, the new parameter.
// CHECK: memref.global "public" constant @__muon_roles_step : memref<20xi64> = dense<[1, 4, 1, 1, 2, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0]>
// CHECK-LABEL: func.func @step(
// CHECK-SAME: -> tensor<4x4xf32> attributes {llvm.emit_c_interface}
// CHECK-NOT: muon_arg_roles
// CHECK-NOT: dist.from_local
func.func @step(%m: !t, %p: !t, %g: !t, %x: !t) -> !t {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0>}
  return %r#0 : !t
}
