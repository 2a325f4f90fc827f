// RUN: muon-opt %s --pass-pipeline="builtin.module(func.func(muon-share-unranked-casts))" | FileCheck %s

// A buffer passed to two calls, once inside a branch: one cast, right
// after the allocation, used by both calls.
// CHECK-LABEL: func.func @two_calls
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: %[[U:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK: scf.if
// CHECK-NEXT: call @use(%[[U]])
// CHECK: call @use(%[[U]])
// CHECK-NOT: memref.cast
func.func private @use(memref<*xf32>)
func.func @two_calls(%c: i1) {
  %a = memref.alloc() : memref<4x8xf32>
  scf.if %c {
    %u = memref.cast %a : memref<4x8xf32> to memref<*xf32>
    func.call @use(%u) : (memref<*xf32>) -> ()
  }
  %v = memref.cast %a : memref<4x8xf32> to memref<*xf32>
  func.call @use(%v) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4x8xf32>
  return
}

// A block argument's cast goes to the start of its block; casts of
// different values, and ranked casts, stay apart.
// CHECK-LABEL: func.func @arguments
// CHECK-NEXT: %[[UX:.*]] = memref.cast %arg0 : memref<2xf32> to memref<*xf32>
// CHECK-NEXT: %[[UY:.*]] = memref.cast %arg1 : memref<2xf32> to memref<*xf32>
// CHECK-NEXT: %[[R:.*]] = memref.cast %arg0 : memref<2xf32> to memref<?xf32>
// CHECK-NEXT: call @use(%[[UY]])
// CHECK-NEXT: call @use(%[[UX]])
// CHECK-NEXT: call @use(%[[UX]])
// CHECK-NEXT: call @ranked(%[[R]])
func.func private @ranked(memref<?xf32>)
func.func @arguments(%x: memref<2xf32>, %y: memref<2xf32>) {
  %r = memref.cast %x : memref<2xf32> to memref<?xf32>
  %uy = memref.cast %y : memref<2xf32> to memref<*xf32>
  func.call @use(%uy) : (memref<*xf32>) -> ()
  %ux = memref.cast %x : memref<2xf32> to memref<*xf32>
  func.call @use(%ux) : (memref<*xf32>) -> ()
  %ux2 = memref.cast %x : memref<2xf32> to memref<*xf32>
  func.call @use(%ux2) : (memref<*xf32>) -> ()
  func.call @ranked(%r) : (memref<?xf32>) -> ()
  return
}
