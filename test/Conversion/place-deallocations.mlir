// muon-place-deallocations frees every heap buffer right after its last
// use: the last use of anything derived from it (views, the request a
// non-blocking call returns, the batch it was registered in, the results of
// the scf.if that yields it). Functions of another structure go to MLIR's
// ownership-based pipeline (with the whole module where one is in a nested
// module).

// RUN: muon-opt %s --split-input-file --muon-place-deallocations | FileCheck %s

func.func private @muon_rt_gather(i64, memref<*xf32>, memref<*xf32>, i64, i64, memref<?xi64>, i64) -> i64
func.func private @muon_rt_wait(i64)
func.func private @use(memref<4xf32>)

// A synchronous use: freed after it. A buffer handed to a non-blocking
// call lives until the wait on the request the call returned, however far.
// CHECK-LABEL: func.func @request
// CHECK:      %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:      %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK:      call @use(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK:      %[[R:.*]] = call @muon_rt_gather
// CHECK-NEXT: call @use(
// CHECK-NEXT: call @muon_rt_wait(%[[R]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @request(%comm: i64, %t: memref<?xi64>, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  call @use(%a) : (memref<4xf32>) -> ()
  %in = memref.cast %b : memref<4xf32> to memref<*xf32>
  %out = memref.cast %x : memref<4xf32> to memref<*xf32>
  %r = call @muon_rt_gather(%comm, %in, %out, %c0, %c0, %t, %c1) : (i64, memref<*xf32>, memref<*xf32>, i64, i64, memref<?xi64>, i64) -> i64
  call @use(%x) : (memref<4xf32>) -> ()
  call @muon_rt_wait(%r) : (i64) -> ()
  return
}

// -----

func.func private @muon_rt_batch_begin(i64, i64) -> i64
func.func private @muon_rt_batch_item(i64, memref<*xf32>, memref<*xf32>, i64, i64, memref<?xi64>)
func.func private @muon_rt_batch_end(i64, i64) -> i64
func.func private @muon_rt_wait(i64)

// A buffer registered in a batch lives until the wait on what the batch's
// end returned.
// CHECK-LABEL: func.func @batch
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK:      %[[E:.*]] = call @muon_rt_batch_end
// CHECK-NEXT: call @muon_rt_wait(%[[E]])
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @batch(%comm: i64, %t: memref<?xi64>, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : i64
  %a = memref.alloc() : memref<4xf32>
  %h = call @muon_rt_batch_begin(%comm, %c0) : (i64, i64) -> i64
  %in = memref.cast %a : memref<4xf32> to memref<*xf32>
  %out = memref.cast %x : memref<4xf32> to memref<*xf32>
  call @muon_rt_batch_item(%h, %in, %out, %c0, %c0, %t) : (i64, memref<*xf32>, memref<*xf32>, i64, i64, memref<?xi64>) -> ()
  %e = call @muon_rt_batch_end(%h, %c0) : (i64, i64) -> i64
  call @muon_rt_wait(%e) : (i64) -> ()
  return
}

// -----

func.func private @use(memref<4xf32>)
func.func private @use2(memref<2x2xf32>)

// A participation scf.if: both branches yield their own buffer, so the
// result owns it and is freed after its last use; a branch that yields a
// buffer from outside owns nothing, so the result is freed on the other
// branch's condition; a reshape's base buffer is what is freed. One
// placeholder yielded twice (what CSE makes of two tensor.empty) is split
// so that each result owns one.
// CHECK-LABEL: func.func @participation
// CHECK:      %[[OWN:.*]]:2 = scf.if %{{.*}} -> (memref<4xf32>, memref<4xf32>)
// CHECK:      } else {
// CHECK-NEXT:   %[[P1:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:   %[[P2:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:   scf.yield %[[P1]], %[[P2]]
// CHECK:      %[[HALF:.*]] = scf.if %[[C:.*]] -> (memref<4xf32>)
// CHECK:      %[[VIEW:.*]] = scf.if %[[C]] -> (memref<2x2xf32>)
// CHECK:      call @use(%[[OWN]]#0)
// CHECK-NEXT: %[[B0:[^ ,]+]], %{{.*}} = memref.extract_strided_metadata %[[OWN]]#0
// CHECK-NEXT: memref.dealloc %[[B0]]
// CHECK-NEXT: call @use(%[[OWN]]#1)
// CHECK-NEXT: %[[B1:[^ ,]+]], %{{.*}} = memref.extract_strided_metadata %[[OWN]]#1
// CHECK-NEXT: memref.dealloc %[[B1]]
// CHECK-NEXT: call @use(%[[HALF]])
// CHECK-NEXT: scf.if %[[C]] {
// CHECK-NEXT:   %[[B2:[^ ,]+]], %{{.*}} = memref.extract_strided_metadata %[[HALF]]
// CHECK-NEXT:   memref.dealloc %[[B2]]
// CHECK-NEXT: }
// CHECK-NEXT: call @use2(%[[VIEW]])
// CHECK-NEXT: scf.if %[[C]] {
// CHECK-NEXT:   %[[B3:[^ ,]+]], %{{.*}} = memref.extract_strided_metadata %[[VIEW]]
// CHECK-NEXT:   memref.dealloc %[[B3]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @participation(%c: i1, %x: memref<4xf32>, %y: memref<2x2xf32>) {
  %own:2 = scf.if %c -> (memref<4xf32>, memref<4xf32>) {
    %a = memref.alloc() : memref<4xf32>
    %b = memref.alloc() : memref<4xf32>
    scf.yield %a, %b : memref<4xf32>, memref<4xf32>
  } else {
    %p = memref.alloc() : memref<4xf32>
    scf.yield %p, %p : memref<4xf32>, memref<4xf32>
  }
  %half = scf.if %c -> (memref<4xf32>) {
    %a = memref.alloc() : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  %view = scf.if %c -> (memref<2x2xf32>) {
    %a = memref.alloc() : memref<4xf32>
    %e = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
    scf.yield %e : memref<2x2xf32>
  } else {
    scf.yield %y : memref<2x2xf32>
  }
  call @use(%own#0) : (memref<4xf32>) -> ()
  call @use(%own#1) : (memref<4xf32>) -> ()
  call @use(%half) : (memref<4xf32>) -> ()
  call @use2(%view) : (memref<2x2xf32>) -> ()
  return
}

// -----

func.func private @use(memref<4xf32>)

// An outside buffer yielded by one branch lives as long as the result that
// may be it.
// CHECK-LABEL: func.func @carried
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK:      %[[R:.*]] = scf.if
// CHECK:      call @use(%[[R]])
// CHECK-NEXT: scf.if %{{.*}} {
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[BR:[^ ,]+]], %{{.*}} = memref.extract_strided_metadata %[[R]]
// CHECK-NEXT:   memref.dealloc %[[BR]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @carried(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  %r = scf.if %c -> (memref<4xf32>) {
    scf.yield %a : memref<4xf32>
  } else {
    %b = memref.alloc() : memref<4xf32>
    scf.yield %b : memref<4xf32>
  }
  call @use(%r) : (memref<4xf32>) -> ()
  return
}

// -----

// A buffer nobody uses is freed where it was made; a buffer inside a loop
// body, within the body.
// CHECK-LABEL: func.func @unused_and_loop
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK:      scf.for
// CHECK-NEXT:   %[[B:.*]] = memref.alloc()
// CHECK-NEXT:   memref.store %{{.*}}, %[[B]]
// CHECK-NEXT:   memref.dealloc %[[B]]
func.func @unused_and_loop(%n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %b = memref.alloc() : memref<4xf32>
    memref.store %v, %b[%c0] : memref<4xf32>
  }
  return
}

// -----

func.func private @use(memref<4xf32>)
func.func private @other()

// A buffer that leaves its function: that function goes to the
// ownership-based pipeline, which keeps the returned buffer alive; the
// other function keeps its placement, right after the buffer's last use
// (before, the whole module went, and it was freed at the end of its block).
// CHECK-LABEL: func.func @escapes
// CHECK-NOT:  memref.dealloc
// CHECK:      return
// CHECK-LABEL: func.func @fits
// CHECK:      call @use
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: call @other
// CHECK-NEXT: return
func.func @escapes() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}
func.func @fits() {
  %a = memref.alloc() : memref<4xf32>
  call @use(%a) : (memref<4xf32>) -> ()
  call @other() : () -> ()
  return
}

// -----

func.func private @use(memref<4xf32>)

// Beside a function the pipeline takes, one that returns a buffer goes
// there too, even where this pass could place its frees: the pipeline's
// callers own what a call returns, so @view must return a buffer of its
// own (a clone), not its argument, which @caller frees as well.
// CHECK-LABEL: func.func @view(
// CHECK-SAME:    %[[A:.*]]: memref<4xf32>)
// CHECK-NEXT:  %[[C:.*]] = bufferization.clone %[[A]]
// CHECK-NEXT:  return %[[C]]
// CHECK-LABEL: func.func @caller
// CHECK:       call @view
// CHECK:       scf.for
// CHECK:       call @dealloc_helper
// CHECK-LABEL: func.func @taken
// CHECK:       call @use
// CHECK-NEXT:  call @use
// CHECK-NEXT:  memref.dealloc
// CHECK-NEXT:  return
func.func @view(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}
func.func @caller(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  %v = call @view(%a) : (memref<4xf32>) -> memref<4xf32>
  call @use(%v) : (memref<4xf32>) -> ()
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %a) -> memref<4xf32> {
    %b = memref.alloc() : memref<4xf32>
    memref.copy %t, %b : memref<4xf32> to memref<4xf32>
    scf.yield %b : memref<4xf32>
  }
  call @use(%r) : (memref<4xf32>) -> ()
  return
}
func.func @taken() {
  %a = memref.alloc() : memref<4xf32>
  call @use(%a) : (memref<4xf32>) -> ()
  call @use(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Functions of a nested module: the whole module goes to the pipeline
// (which frees @outer's buffer at the end of its block).
// CHECK-LABEL: func.func @outer
// CHECK:       call @use
// CHECK-NEXT:  call @other
// CHECK-NEXT:  memref.dealloc
// CHECK-NEXT:  return
func.func private @use(memref<4xf32>)
func.func private @other()
func.func @outer() {
  %a = memref.alloc() : memref<4xf32>
  call @use(%a) : (memref<4xf32>) -> ()
  call @other() : () -> ()
  return
}
module @inner {
  func.func @f() {
    return
  }
}
