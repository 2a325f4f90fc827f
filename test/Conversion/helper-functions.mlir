// Functions beside the step that compute on whole tensors with arith / math
// ops (here f32 and f16) are compiled too: muon-to-llvm turns elementwise
// ops on tensors into linalg first, which bufferizes (without that,
// bufferization stopped at them with "op was not bufferized").
// RUN: muon-opt %s --muon-to-llvm | FileCheck %s
// CHECK-DAG: llvm.func @_mlir_ciface_step(
// CHECK-DAG: llvm.func @_mlir_ciface_twice(
// CHECK-DAG: llvm.func @_mlir_ciface_half_square(
// CHECK-DAG: llvm.fadd %{{.*}}, %{{.*}} : f32
// CHECK-DAG: llvm.fmul %{{.*}}, %{{.*}} : f16

dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}
func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.addf %x, %x : tensor<4xf32>
  return %c : tensor<4xf32>
}
func.func @half_square(%x: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %c = arith.mulf %x, %x : tensor<3x5xf16>
  return %c : tensor<3x5xf16>
}
