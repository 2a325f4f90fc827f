// muon-outline-elementwise generalises named linalg ops on buffers and
// outlines them like any elementwise generic (a fill and a multiply become
// kernels; two fills of different values share one); a copy is left for
// memrefCopy.
// RUN: muon-opt %s --muon-outline-elementwise | FileCheck %s

// CHECK-LABEL: func.func @named
// CHECK: call @[[FILL:__muon_kernel[_0-9]*]](%{{.*}}, %{{.*}}) : (f32, memref<*xf32>) -> ()
// CHECK: call @[[FILL]](
// CHECK: call @[[MUL:__muon_kernel[_0-9]*]](
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.mul
// CHECK: func.func private @[[FILL]](
// CHECK: linalg.generic
// CHECK: func.func private @[[MUL]](
// CHECK: arith.mulf
func.func @named(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<4x8xf32>)
  linalg.fill ins(%one : f32) outs(%b : memref<4x8xf32>)
  linalg.mul ins(%a, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.copy ins(%c : memref<4x8xf32>) outs(%a : memref<4x8xf32>)
  return
}
