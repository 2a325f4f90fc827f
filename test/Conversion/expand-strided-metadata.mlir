// muon-expand-strided-metadata: upstream's expansion of views into
// explicit metadata, applied to the ops it rewrites (and what it creates)
// only: the results are upstream's, and unrelated ops are not folded.
// RUN: muon-opt %s --muon-expand-strided-metadata --split-input-file | FileCheck %s
// RUN: muon-opt %s --expand-strided-metadata --split-input-file | FileCheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: func.func @view(
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [8], sizes: [2, 4], strides: [4, 1]
// UPSTREAM-LABEL: func.func @view(
// UPSTREAM: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// UPSTREAM: memref.reinterpret_cast %[[BASE]] to offset: [8], sizes: [2, 4], strides: [4, 1]
func.func @view(%m: memref<8x4xf32>)
    -> memref<2x4xf32, strided<[4, 1], offset: 8>> {
  %v = memref.subview %m[2, 0] [2, 4] [1, 1]
      : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  return %v : memref<2x4xf32, strided<[4, 1], offset: 8>>
}

// -----

// The base buffer of an allocation (how a deallocation names what it
// frees) is the allocation itself.
// CHECK-LABEL: func.func @free(
// CHECK-NOT: memref.extract_strided_metadata
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [], strides: []
// CHECK: memref.dealloc %[[B]] : memref<f32>
func.func @free() {
  %a = memref.alloc() : memref<4x4xf32>
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %a
      : memref<4x4xf32> -> memref<f32>, index, index, index, index, index
  memref.dealloc %base : memref<f32>
  return
}

// -----

// No op to expand: the function is left as it is, foldable ops included
// (upstream's driver folds them).
// CHECK-LABEL: func.func @nothing(
// CHECK: arith.addi
// UPSTREAM-LABEL: func.func @nothing(
// UPSTREAM-NOT: arith.addi
func.func @nothing() -> index {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = arith.addi %c1, %c2 : index
  return %s : index
}
