// convert-dist-to-runtime publishes the roles muon-expand-step recorded as
// the ABI table __muon_roles_<entry> (format in muon_runtime.h):
// [version 2, #args, #results, then per argument and per result:
//  k, (role, step, param) * k], role 0 param, 1 grad, 2 momentum, 3 lr and
// 4 weight_decay (f64 arguments the step reads; param -1).
// Beside it, __muon_dims_<entry>: [#buffers, then each argument's and
// result's number of dims, 0 for an f64 scalar].
// A step result the entry does not return is dead code, not an error.
// RUN: muon-opt %s --muon-expand-step --convert-muon-to-linalg --convert-muon-to-runtime --convert-dist-to-runtime | FileCheck %s

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>

// Arguments m, p, g, an unused x; one result, the new parameter.
// (Tables are module globals: both come before the functions.)
// CHECK-DAG: memref.global "public" constant @__muon_roles_step : memref<20xi64> = dense<[2, 4, 1, 1, 2, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0]>
// CHECK-DAG: memref.global "public" constant @__muon_roles_dynamic : memref<31xi64> = dense<[2, 5, 2, 1, 0, 0, 0, 1, 4, 0, -1, 1, 1, 0, 0, 1, 2, 0, 0, 1, 3, 0, -1, 1, 0, 0, 0, 1, 2, 0, 0]>
// CHECK-DAG: memref.global "public" constant @__muon_dims_step : memref<6xi64> = dense<[5, 2, 2, 2, 2, 2]>
// CHECK-DAG: memref.global "public" constant @__muon_dims_dynamic : memref<8xi64> = dense<[7, 2, 0, 2, 2, 0, 2, 2]>
// CHECK-LABEL: func.func @step(
// CHECK-SAME: -> tensor<4x4xf32> attributes {llvm.emit_c_interface}
// CHECK-NOT: muon_arg_roles
// CHECK-NOT: dist.from_local
func.func @step(%m: !t, %p: !t, %g: !t, %x: !t) -> !t {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0>}
  return %r#0 : !t
}

// lr and weight_decay read at run time: f64 arguments with roles 3 and 4,
// param -1 (the table @__muon_roles_dynamic above).
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %{{.*}}: tensor<4x4xf32>, %{{.*}}: f64, %{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x4xf32>, %{{.*}}: f64)
func.func @dynamic(%p: !t, %wd: f64, %g: !t, %m: !t, %lr: f64) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      lr(%lr) weight_decay(%wd)
      {strategy = #muon.strategy<explicit>, owners = array<i64: 0>}
  return %r#0, %r#1 : !t, !t
}
