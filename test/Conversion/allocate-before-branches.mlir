// muon-allocate-before-branches: a buffer both sides of an scf.if allocate
// and yield is allocated once before it, and the result goes away; other
// results stay.
// RUN: muon-opt %s --muon-allocate-before-branches | FileCheck %s

func.func private @fill(memref<4x8xf32>)
func.func private @token() -> i64
func.func private @use(memref<4x8xf32>, i64)

// The participation shape: the owner computes into a new buffer, the
// others yield a placeholder of the same type; the token result stays.
// CHECK-LABEL: func.func @participation
// CHECK:      %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-NEXT: %[[T:.*]] = scf.if %arg0 -> (i64) {
// CHECK-NEXT:   func.call @fill(%[[BUF]])
// CHECK-NEXT:   %[[A:.*]] = func.call @token()
// CHECK-NEXT:   scf.yield %[[A]] : i64
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[C:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   scf.yield %[[C]] : i64
// CHECK-NEXT: }
// CHECK-NEXT: call @use(%[[BUF]], %[[T]])
// CHECK-NEXT: memref.dealloc %[[BUF]]
func.func @participation(%c: i1) {
  %r:2 = scf.if %c -> (memref<4x8xf32>, i64) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    func.call @fill(%a) : (memref<4x8xf32>) -> ()
    %t = func.call @token() : () -> i64
    scf.yield %a, %t : memref<4x8xf32>, i64
  } else {
    %b = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %z = arith.constant 0 : i64
    scf.yield %b, %z : memref<4x8xf32>, i64
  }
  func.call @use(%r#0, %r#1) : (memref<4x8xf32>, i64) -> ()
  memref.dealloc %r#0 : memref<4x8xf32>
  return
}

// A deallocation that freed the base buffer read from the result (how
// muon-place-deallocations frees a buffer that is not an allocation) frees
// the allocation itself; a read of other metadata stays.
// CHECK-LABEL: func.func @freed_through_base
// CHECK:      %[[BUF:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:      %[[KEPT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:      call @use(%[[BUF]], %{{.*}})
// CHECK-NEXT: memref.dealloc %[[BUF]] : memref<4x8xf32>
// CHECK-NEXT: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[KEPT]]
// CHECK-NEXT: memref.dealloc %[[BASE]] : memref<f32>
// CHECK-NEXT: call @offset(%[[OFF]])
// CHECK-NOT: memref.extract_strided_metadata
func.func private @offset(index)
func.func @freed_through_base(%c: i1) {
  %r:2 = scf.if %c -> (memref<4x8xf32>, memref<4x8xf32>) {
    %a = memref.alloc() : memref<4x8xf32>
    %a2 = memref.alloc() : memref<4x8xf32>
    scf.yield %a, %a2 : memref<4x8xf32>, memref<4x8xf32>
  } else {
    %b = memref.alloc() : memref<4x8xf32>
    %b2 = memref.alloc() : memref<4x8xf32>
    scf.yield %b, %b2 : memref<4x8xf32>, memref<4x8xf32>
  }
  %z = arith.constant 0 : i64
  func.call @use(%r#0, %z) : (memref<4x8xf32>, i64) -> ()
  %base, %off, %sizes:2, %strides:2 = memref.extract_strided_metadata %r#0
      : memref<4x8xf32> -> memref<f32>, index, index, index, index, index
  memref.dealloc %base : memref<f32>
  %base2, %off2, %sizes2:2, %strides2:2 = memref.extract_strided_metadata %r#1
      : memref<4x8xf32> -> memref<f32>, index, index, index, index, index
  memref.dealloc %base2 : memref<f32>
  func.call @offset(%off2) : (index) -> ()
  return
}

// Kept: one side yields an argument; the two allocations differ in
// alignment.
// CHECK-LABEL: func.func @kept
// CHECK: %{{.*}}:2 = scf.if %arg0 -> (memref<4x8xf32>, memref<4x8xf32>)
// CHECK-COUNT-3: memref.alloc
func.func @kept(%c: i1, %m: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
  %r:2 = scf.if %c -> (memref<4x8xf32>, memref<4x8xf32>) {
    %a = memref.alloc() : memref<4x8xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    scf.yield %a, %b : memref<4x8xf32>, memref<4x8xf32>
  } else {
    %b = memref.alloc() {alignment = 16 : i64} : memref<4x8xf32>
    scf.yield %m, %b : memref<4x8xf32>, memref<4x8xf32>
  }
  return %r#0, %r#1 : memref<4x8xf32>, memref<4x8xf32>
}

// Nested: the inner if's buffer moves before it, into the outer then
// side, and from there before the outer if.
// CHECK-LABEL: func.func @nested
// CHECK:      %[[BUF:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: scf.if %arg0 {
// CHECK-NEXT:   scf.if %arg1 {
// CHECK-NEXT:     func.call @fill(%[[BUF]])
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: return %[[BUF]]
// CHECK-NOT: else
func.func @nested(%c: i1, %d: i1) -> memref<4x8xf32> {
  %r = scf.if %c -> (memref<4x8xf32>) {
    %i = scf.if %d -> (memref<4x8xf32>) {
      %a = memref.alloc() : memref<4x8xf32>
      func.call @fill(%a) : (memref<4x8xf32>) -> ()
      scf.yield %a : memref<4x8xf32>
    } else {
      %b = memref.alloc() : memref<4x8xf32>
      scf.yield %b : memref<4x8xf32>
    }
    scf.yield %i : memref<4x8xf32>
  } else {
    %b = memref.alloc() : memref<4x8xf32>
    scf.yield %b : memref<4x8xf32>
  }
  return %r : memref<4x8xf32>
}
