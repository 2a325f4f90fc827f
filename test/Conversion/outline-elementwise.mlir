// muon-outline-elementwise: each kind of elementwise linalg.generic on
// buffers becomes one shared kernel over dynamically shaped buffers; the
// captured scalars are arguments, shapes and scalar values may differ.
// Buffers are passed as unranked memrefs (a pointer to the descriptor the
// caller holds) and cast back to the ranked type inside the kernel.
// RUN: muon-opt %s --muon-outline-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @two_kinds
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[C:.*]]: memref<2x3xf32>, %[[D:.*]]: memref<2x3xf32>, %[[S:.*]]: memref<4x8xf32, strided<[16, 1], offset: 2>>, %[[X:.*]]: f32)
// CHECK: %[[A1:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[B1:.*]] = memref.cast %[[B]] : memref<4x8xf32> to memref<*xf32>
// CHECK: call @[[SCALE:__muon_kernel]](%[[A1]], %[[B1]], %{{.*}}) : (memref<*xf32>, memref<*xf32>, f32) -> ()
// Another shape and another constant: the same kernel.
// CHECK: call @[[SCALE]](%{{.*}}, %{{.*}}, %[[X]])
// Another body: another kernel.
// CHECK: call @[[ADD:__muon_kernel_0]](
// A strided operand: a kernel that reads it as strided.
// CHECK: %[[S1:.*]] = memref.cast %[[S]] : memref<4x8xf32, strided<[16, 1], offset: 2>> to memref<*xf32>
// CHECK: call @[[STRIDED:__muon_kernel_1]](%[[S1]],
// CHECK: func.func private @[[SCALE]](%[[KA:[a-z0-9]+]]: memref<*xf32>, %[[KB:[a-z0-9]+]]: memref<*xf32>, %[[F:.*]]: f32) attributes {muon.kernel}
// CHECK-NEXT: %[[RA:.*]] = memref.cast %[[KA]] : memref<*xf32> to memref<?x?xf32>
// CHECK-NEXT: %[[RB:.*]] = memref.cast %[[KB]] : memref<*xf32> to memref<?x?xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[RA]] : memref<?x?xf32>) outs(%[[RB]] : memref<?x?xf32>)
// CHECK: arith.mulf %{{.*}}, %[[F]] : f32
// CHECK: func.func private @[[ADD]](
// CHECK: arith.addf
// CHECK: func.func private @[[STRIDED]](%[[KS:[a-z0-9]+]]: memref<*xf32>,
// CHECK-NEXT: memref.cast %[[KS]] : memref<*xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
func.func @two_kinds(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                     %c: memref<2x3xf32>, %d: memref<2x3xf32>,
                     %s: memref<4x8xf32, strided<[16, 1], offset: 2>>, %x: f32) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<2x3xf32>) outs(%d : memref<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %x : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<2x3xf32>) outs(%d : memref<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %in, %out : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<4x8xf32, strided<[16, 1], offset: 2>>) outs(%b : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  return
}


