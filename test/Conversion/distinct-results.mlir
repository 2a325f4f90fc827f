// A buffer returned at several positions gets a copy per repeat (MLIR 22's
// hoisting of result allocations into out-buffers crashed on it), and the
// whole pipeline lowers a step that returns one result twice.
// RUN: muon-opt %s --split-input-file --muon-distinct-results | FileCheck %s
// RUN: muon-opt %s --split-input-file --muon-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @twice
// CHECK:      %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[C]]
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
// LLVM-NOT: llvm.func @twice(
// LLVM-LABEL: llvm.func @_mlir_ciface_twice(
func.func @twice() -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
// LLVM-NOT: llvm.func @step(
// LLVM-LABEL: llvm.func @_mlir_ciface_step(
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#0, %r#1 : !t, !t, !t
}
