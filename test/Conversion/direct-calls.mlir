// muon-convert-step-to-llvm lowers a call whose callee's LLVM signature is
// known before the conversion (a declaration, a function with a body) to
// llvm.call directly: a memref operand is passed field by field, the fields
// taken as they are where a chain of insertvalues just built the
// descriptor, extracted otherwise. Calls that return a memref, and callees
// with bare-pointer arguments, go through the upstream lowering.
// RUN: muon-opt %s --split-input-file --muon-convert-step-to-llvm | FileCheck %s

// A view built as {rank, slot} (as muon-allocate-through-runtime builds
// it) and a constant table: nothing extracted again.
// CHECK-LABEL: llvm.func @built
// CHECK-SAME: (%[[SLOT:.*]]: !llvm.ptr)
// CHECK-DAG: %[[RANK:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[DEAD:.*]] = llvm.mlir.constant(3735928559 : index) : i64
// CHECK-DAG: %[[ALLOCATED:.*]] = llvm.inttoptr %[[DEAD]] : i64 to !llvm.ptr
// CHECK-DAG: %[[ALIGNED:.*]] = llvm.getelementptr %{{.*}}[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<3 x i64>
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK-DAG: %[[THREE:.*]] = llvm.mlir.constant(3 : index) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK-NOT: llvm.extractvalue
// CHECK: llvm.call @use(%[[RANK]], %[[SLOT]], %[[ALLOCATED]], %[[ALIGNED]], %[[ZERO]], %[[THREE]], %[[ONE]]) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
func.func private @use(memref<*xf32>, memref<?xi64>)
memref.global "private" constant @table : memref<3xi64> = dense<[1, 2, 3]>
func.func @built(%slot: !llvm.ptr) {
  %rank = llvm.mlir.constant(2 : i64) : i64
  %u = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
  %u0 = llvm.insertvalue %rank, %u[0] : !llvm.struct<(i64, ptr)>
  %u1 = llvm.insertvalue %slot, %u0[1] : !llvm.struct<(i64, ptr)>
  %view = builtin.unrealized_conversion_cast %u1 : !llvm.struct<(i64, ptr)> to memref<*xf32>
  %g = memref.get_global @table : memref<3xi64>
  %t = memref.cast %g : memref<3xi64> to memref<?xi64>
  call @use(%view, %t) : (memref<*xf32>, memref<?xi64>) -> ()
  return
}

// -----

// A descriptor that arrives whole (a block argument): its fields are
// extracted; a scalar passes as it is; the callee has a body, and its
// result comes back.
// CHECK-LABEL: llvm.func @whole
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[O:.*]]: i64, %[[S:.*]]: i64, %[[T:.*]]: i64, %[[N:.*]]: i64)
// CHECK: %[[D:.*]] = llvm.insertvalue %[[T]]
// CHECK: %[[F0:.*]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[F1:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[F2:.*]] = llvm.extractvalue %[[D]][2]
// CHECK: %[[F3:.*]] = llvm.extractvalue %[[D]][3, 0]
// CHECK: %[[F4:.*]] = llvm.extractvalue %[[D]][4, 0]
// CHECK: %[[R:.*]] = llvm.call @count(%[[F0]], %[[F1]], %[[F2]], %[[F3]], %[[F4]], %[[N]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> i64
// CHECK: llvm.return %[[R]] : i64
func.func private @count(%m: memref<?xf32>, %n: i64) -> i64 {
  return %n : i64
}
func.func @whole(%m: memref<?xf32>, %n: i64) -> i64 {
  %r = call @count(%m, %n) : (memref<?xf32>, i64) -> i64
  return %r : i64
}

// -----

// Returned memrefs and bare-pointer callees: the upstream lowering (an
// unranked result is copied off the callee's heap; a bare-pointer callee
// takes one pointer per memref).
// CHECK-LABEL: llvm.func @upstream
// CHECK: llvm.call @make()
// CHECK: llvm.intr.memcpy
// CHECK: llvm.call @free
// CHECK: llvm.call @bare(%{{.*}}) : (!llvm.ptr) -> ()
func.func private @make() -> memref<*xf32>
func.func private @bare(%m: memref<4xf32>) attributes {llvm.bareptr} {
  return
}
func.func @upstream(%m: memref<4xf32>) {
  %u = call @make() : () -> memref<*xf32>
  call @bare(%m) : (memref<4xf32>) -> ()
  return
}

// -----

// A call in a nested module names that module's function, whatever the
// outer module declares under the same name.
// CHECK-LABEL: llvm.func @outer
// CHECK: llvm.call @f(%{{.*}}) : (i64) -> ()
// CHECK-LABEL: llvm.func @in
// CHECK: llvm.call @f(%{{.*}}) : (i32) -> ()
func.func private @f(i64)
func.func @outer(%x: i64) {
  call @f(%x) : (i64) -> ()
  return
}
module @inner {
  func.func private @f(i32)
  func.func @in(%x: i32) {
    call @f(%x) : (i32) -> ()
    return
  }
}

// -----

// A whole member set after one of its elements (the sizes array here):
// the element is extracted from the built descriptor, not taken from the
// insertion the array overwrote.
// CHECK-LABEL: llvm.func @overwritten
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[OLD:.*]]: i64, %[[SIZES:.*]]: !llvm.array<1 x i64>, %[[STRIDE:.*]]: i64)
// CHECK: %[[D:.*]] = llvm.insertvalue %[[STRIDE]], %{{.*}}[4, 0]
// CHECK: %[[SIZE:.*]] = llvm.extractvalue %[[D]][3, 0]
// CHECK: llvm.call @take(%[[P]], %[[P]], %{{.*}}, %[[SIZE]], %[[STRIDE]])
!d = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
func.func private @take(memref<?xf32>)
func.func @overwritten(%p: !llvm.ptr, %old: i64, %sizes: !llvm.array<1 x i64>, %stride: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %u = llvm.mlir.poison : !d
  %d0 = llvm.insertvalue %p, %u[0] : !d
  %d1 = llvm.insertvalue %p, %d0[1] : !d
  %d2 = llvm.insertvalue %zero, %d1[2] : !d
  %d3 = llvm.insertvalue %old, %d2[3, 0] : !d
  %d4 = llvm.insertvalue %sizes, %d3[3] : !d
  %d5 = llvm.insertvalue %stride, %d4[4, 0] : !d
  %m = builtin.unrealized_conversion_cast %d5 : !d to memref<?xf32>
  call @take(%m) : (memref<?xf32>) -> ()
  return
}
