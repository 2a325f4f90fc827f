// RUN: muon-opt %s --pass-pipeline="builtin.module(func.func(muon-share-buffer-views))" --split-input-file | FileCheck %s

// A buffer passed to two calls, once on a branch: one cast, right after
// the allocation, used by both calls.
// CHECK-LABEL: func.func @two_calls
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: %[[U:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK-NEXT: cf.cond_br
// CHECK: call @use(%[[U]])
// CHECK: call @use(%[[U]])
// CHECK-NOT: memref.cast
func.func private @use(memref<*xf32>)
func.func @two_calls(%c: i1) {
  %a = memref.alloc() : memref<4x8xf32>
  cf.cond_br %c, ^then, ^join
^then:
  %u = memref.cast %a : memref<4x8xf32> to memref<*xf32>
  func.call @use(%u) : (memref<*xf32>) -> ()
  cf.br ^join
^join:
  %v = memref.cast %a : memref<4x8xf32> to memref<*xf32>
  func.call @use(%v) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4x8xf32>
  return
}

// -----

// A block argument's cast goes to the start of its block; casts of
// different values stay apart; a cast to a ranked type that only makes
// sizes dynamic is shared like an unranked one; a cast to a more static
// type stays where it is (it may rely on what a branch checked).
// CHECK-LABEL: func.func @arguments
// CHECK-NEXT: %[[UX:.*]] = memref.cast %arg0 : memref<2xf32> to memref<*xf32>
// CHECK-NEXT: %[[UY:.*]] = memref.cast %arg1 : memref<2xf32> to memref<*xf32>
// CHECK-NEXT: %[[R:.*]] = memref.cast %arg0 : memref<2xf32> to memref<?xf32>
// CHECK-NEXT: call @use(%[[UY]])
// CHECK-NEXT: call @use(%[[UX]])
// CHECK-NEXT: call @use(%[[UX]])
// CHECK-NEXT: call @ranked(%[[R]])
// CHECK-NEXT: call @ranked(%[[R]])
// CHECK-NEXT: %[[S:.*]] = memref.cast %arg2 : memref<?xf32> to memref<2xf32>
// CHECK-NEXT: call @static(%[[S]])
func.func private @use(memref<*xf32>)
func.func private @ranked(memref<?xf32>)
func.func private @static(memref<2xf32>)
func.func @arguments(%x: memref<2xf32>, %y: memref<2xf32>, %z: memref<?xf32>) {
  %r = memref.cast %x : memref<2xf32> to memref<?xf32>
  %uy = memref.cast %y : memref<2xf32> to memref<*xf32>
  func.call @use(%uy) : (memref<*xf32>) -> ()
  %ux = memref.cast %x : memref<2xf32> to memref<*xf32>
  func.call @use(%ux) : (memref<*xf32>) -> ()
  %ux2 = memref.cast %x : memref<2xf32> to memref<*xf32>
  func.call @use(%ux2) : (memref<*xf32>) -> ()
  func.call @ranked(%r) : (memref<?xf32>) -> ()
  %r2 = memref.cast %x : memref<2xf32> to memref<?xf32>
  func.call @ranked(%r2) : (memref<?xf32>) -> ()
  %s = memref.cast %z : memref<?xf32> to memref<2xf32>
  func.call @static(%s) : (memref<2xf32>) -> ()
  return
}

// -----

// A value defined in a loop (a block on a CFG cycle): its cast stays after
// the loop, where it runs once, not in the loop header.
// CHECK-LABEL: func.func @loop
// CHECK: ^bb1(%{{.*}}: index, %[[B:.*]]: memref<4xf32>):
// CHECK-NOT: memref.cast
// CHECK: ^bb3:
// CHECK-NEXT: memref.cast %[[B]] : memref<4xf32> to memref<*xf32>
func.func private @use(memref<*xf32>)
func.func @loop(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.br ^bb1(%c0, %x : index, memref<4xf32>)
^bb1(%i: index, %b: memref<4xf32>):
  %more = arith.cmpi slt, %i, %n : index
  cf.cond_br %more, ^bb2, ^bb3
^bb2:
  %next = arith.addi %i, %c1 : index
  cf.br ^bb1(%next, %b : index, memref<4xf32>)
^bb3:
  %u = memref.cast %b : memref<4xf32> to memref<*xf32>
  func.call @use(%u) : (memref<*xf32>) -> ()
  return
}

// -----

// A constant table read at each use: one read at the top of the function,
// and its casts to an unranked type become one. A read inside a nested
// region stays there (the region may be isolated or outlined).
// CHECK-LABEL: func.func @tables
// CHECK-DAG: %[[T:.*]] = memref.get_global @table : memref<3xi64>
// CHECK-DAG: %[[U:.*]] = memref.get_global @other : memref<3xi64>
// CHECK-DAG: %[[D:.*]] = memref.cast %[[T]] : memref<3xi64> to memref<*xi64>
// CHECK-DAG: %[[E:.*]] = memref.cast %[[U]] : memref<3xi64> to memref<*xi64>
// CHECK: cf.cond_br
// CHECK: call @extents(%[[D]])
// CHECK: call @extents(%[[D]])
// CHECK-NEXT: call @extents(%[[E]])
// CHECK: scf.execute_region
// CHECK-NEXT: memref.get_global @table
memref.global "private" constant @table : memref<3xi64> = dense<[1, 2, 3]>
memref.global "private" constant @other : memref<3xi64> = dense<[4, 5, 6]>
func.func private @extents(memref<*xi64>)
func.func @tables(%c: i1) {
  cf.cond_br %c, ^then, ^join
^then:
  %t = memref.get_global @table : memref<3xi64>
  %d = memref.cast %t : memref<3xi64> to memref<*xi64>
  func.call @extents(%d) : (memref<*xi64>) -> ()
  cf.br ^join
^join:
  %t2 = memref.get_global @table : memref<3xi64>
  %d2 = memref.cast %t2 : memref<3xi64> to memref<*xi64>
  func.call @extents(%d2) : (memref<*xi64>) -> ()
  %u = memref.get_global @other : memref<3xi64>
  %e = memref.cast %u : memref<3xi64> to memref<*xi64>
  func.call @extents(%e) : (memref<*xi64>) -> ()
  scf.execute_region {
    %t3 = memref.get_global @table : memref<3xi64>
    %d3 = memref.cast %t3 : memref<3xi64> to memref<*xi64>
    func.call @extents(%d3) : (memref<*xi64>) -> ()
    scf.yield
  }
  return
}
