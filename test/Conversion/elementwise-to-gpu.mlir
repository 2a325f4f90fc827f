// muon-elementwise-to-gpu (target=cuda): every function runs as a step
// (muon_rt_cuda_step_begin first, step_end before each return); each
// elementwise op on buffers, copies and named ops included, is a launch on
// the stream step_begin returns of a kernel in gpu.module @muon_kernels;
// ops that print the same share a kernel. Contiguous operands indexed by
// the identity are walked linearly; others through their maps.

// RUN: muon-opt %s --split-input-file --muon-elementwise-to-gpu | FileCheck %s

// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @momentum(
// CHECK: %[[S:.*]] = call @muon_rt_cuda_step_begin() : () -> !llvm.ptr
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK: %[[B:.*]] = arith.ceildivui %[[N]], %c256 : index
// CHECK: %[[B1:.*]] = arith.maxui %[[B]], %c1{{.*}} : index
// CHECK: %[[B2:.*]] = arith.minui %[[B1]], %c65536 : index
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<4x8xf32> to memref<?x?xf32>
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @muon_kernels::@elementwise blocks in (%[[B2]], %{{.*}}, %{{.*}}) threads in (%c256, %{{.*}}, %{{.*}}) args(%[[A]] : memref<?x?xf32>, %{{.*}} : memref<?x?xf32>, %arg2 : f32)
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @muon_kernels::@elementwise blocks
// CHECK-SAME: args(%{{.*}} : memref<?x?xf32>, %{{.*}} : memref<?x?xf32>, %arg3 : f32)
// CHECK: call @muon_rt_cuda_step_end() : () -> ()
// CHECK-NEXT: return
// The copy and the fill: kernels of their own.
// CHECK-LABEL: func.func @copy_and_fill(
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @muon_kernels::@elementwise_0
// CHECK-SAME: memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @muon_kernels::@elementwise_1
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK: gpu.module @muon_kernels
// A contiguous op: linear, one load per operand, one store.
// CHECK: gpu.func @elementwise(%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>, %[[F:.*]]: f32) kernel
// CHECK-DAG: %[[BID:.*]] = gpu.block_id  x
// CHECK-DAG: %[[BDIM:.*]] = gpu.block_dim  x
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id  x
// CHECK-DAG: %[[GDIM:.*]] = gpu.grid_dim  x
// CHECK: %[[CX:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<?x?xf32> into memref<?xf32>
// CHECK: %[[CY:.*]] = memref.collapse_shape %[[Y]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[CX]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[V]], %[[F]] : f32
// CHECK-NEXT: memref.store %[[M]], %[[CY]][%[[I]]] : memref<?xf32>
// A strided copy: loop indices from the linear one.
// CHECK: gpu.func @elementwise_0(%[[SRC:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[DST:.*]]: memref<?x?xf32>) kernel
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[COL:.*]] = arith.remui %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[ROW:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[E:.*]] = memref.load %[[SRC]][%[[ROW]], %[[COL]]]
// CHECK-NEXT: memref.store %[[E]], %[[DST]][%[[ROW]], %[[COL]]]
// The fill: its scalar is an argument, not a load.
// CHECK: gpu.func @elementwise_1(%[[FV:.*]]: f32, %[[FO:.*]]: memref<?x?xf32>) kernel
// CHECK: memref.store %[[FV]], %[[FO]]

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @momentum(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %s: f32, %t: f32, %c: memref<2x3xf32>, %d: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %s : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<2x3xf32>) outs(%d : memref<2x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %t : f32
    linalg.yield %m : f32
  }
  return
}

func.func @copy_and_fill(%src: memref<4x16xf32>, %dst: memref<4x8xf32>, %v: f32) {
  %view = memref.subview %src[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %view, %dst : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32>
  linalg.fill ins(%v : f32) outs(%dst : memref<4x8xf32>)
  return
}

// -----

// A module without elementwise ops still runs as a step, and gets no
// gpu.module.
// CHECK-LABEL: func.func @no_kernels(
// CHECK-NEXT: call @muon_rt_cuda_step_begin()
// CHECK-NEXT: call @muon_rt_cuda_step_end()
// CHECK-NEXT: return
// CHECK-NOT: gpu.module
func.func @no_kernels() {
  return
}
