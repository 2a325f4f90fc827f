// RUN: muon-opt %s --pass-pipeline="builtin.module(func.func(muon-share-buffer-views))" | FileCheck %s

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
// different values, or to different types, stay apart.
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

// A constant table read at each use: one read at the top of the function,
// and its casts to one type become one.
// CHECK-LABEL: func.func @tables
// CHECK-DAG: %[[T:.*]] = memref.get_global @table : memref<3xi64>
// CHECK-DAG: %[[U:.*]] = memref.get_global @other : memref<3xi64>
// CHECK-DAG: %[[D:.*]] = memref.cast %[[T]] : memref<3xi64> to memref<?xi64>
// CHECK-DAG: %[[E:.*]] = memref.cast %[[U]] : memref<3xi64> to memref<?xi64>
// CHECK: scf.if
// CHECK-NEXT: func.call @extents(%[[D]])
// CHECK: call @extents(%[[D]])
// CHECK-NEXT: call @extents(%[[E]])
// CHECK-NOT: memref.get_global
memref.global "private" constant @table : memref<3xi64> = dense<[1, 2, 3]>
memref.global "private" constant @other : memref<3xi64> = dense<[4, 5, 6]>
func.func private @extents(memref<?xi64>)
func.func @tables(%c: i1) {
  scf.if %c {
    %t = memref.get_global @table : memref<3xi64>
    %d = memref.cast %t : memref<3xi64> to memref<?xi64>
    func.call @extents(%d) : (memref<?xi64>) -> ()
  }
  %t2 = memref.get_global @table : memref<3xi64>
  %d2 = memref.cast %t2 : memref<3xi64> to memref<?xi64>
  func.call @extents(%d2) : (memref<?xi64>) -> ()
  %u = memref.get_global @other : memref<3xi64>
  %e = memref.cast %u : memref<3xi64> to memref<?xi64>
  func.call @extents(%e) : (memref<?xi64>) -> ()
  return
}
