// muon-forward-argument-descriptors: the stack copy an unranked cast makes
// of a descriptor the function loaded from a pointer argument is replaced by
// that argument, where the argument is only ever loaded and the copy holds
// exactly what was loaded; every other case is left as it is.
// RUN: muon-opt %s --muon-forward-argument-descriptors --split-input-file | FileCheck %s

!desc = !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
llvm.func @use(i64, !llvm.ptr)
llvm.func @kernel(!llvm.ptr, i64)

// A descriptor rebuilt field by field (as the lowering of the entry does),
// and one stored as loaded: both slots become the argument; the field reads
// a kernel still needs stay.
// The rebuilt value, now unused, is erased.
// CHECK-LABEL: llvm.func @rebuilt(%arg0: !llvm.ptr, %arg1: !llvm.ptr)
// CHECK: %[[D0:.*]] = llvm.load %arg0
// CHECK-NOT: {{llvm.alloca|llvm.store|llvm.insertvalue .* : !llvm.struct<\(ptr}}
// CHECK: %[[P:.*]] = llvm.extractvalue %[[D0]][1]
// CHECK-NOT: {{llvm.alloca|llvm.store|llvm.insertvalue .* : !llvm.struct<\(ptr}}
// CHECK: llvm.insertvalue %arg0, %{{.*}}[1] : !llvm.struct<(i64, ptr)>
// CHECK-NOT: {{llvm.alloca|llvm.store|llvm.insertvalue .* : !llvm.struct<\(ptr}}
// CHECK: llvm.insertvalue %arg1, %{{.*}}[1] : !llvm.struct<(i64, ptr)>
// CHECK-NOT: {{llvm.alloca|llvm.store|llvm.insertvalue .* : !llvm.struct<\(ptr}}
// CHECK: llvm.call @kernel(%[[P]],
// CHECK-NEXT: llvm.return
llvm.func @rebuilt(%a: !llvm.ptr, %b: !llvm.ptr) {
  %d = llvm.load %a : !llvm.ptr -> !desc
  %f0 = llvm.extractvalue %d[0] : !desc
  %f1 = llvm.extractvalue %d[1] : !desc
  %f2 = llvm.extractvalue %d[2] : !desc
  %f30 = llvm.extractvalue %d[3, 0] : !desc
  %f31 = llvm.extractvalue %d[3, 1] : !desc
  %f4 = llvm.extractvalue %d[4] : !desc
  %p = llvm.mlir.poison : !desc
  %r0 = llvm.insertvalue %f0, %p[0] : !desc
  %r1 = llvm.insertvalue %f1, %r0[1] : !desc
  %r2 = llvm.insertvalue %f2, %r1[2] : !desc
  %r3 = llvm.insertvalue %f31, %r2[3, 1] : !desc
  %r4 = llvm.insertvalue %f30, %r3[3, 0] : !desc
  %r5 = llvm.insertvalue %f4, %r4[4] : !desc
  %one = llvm.mlir.constant(1 : index) : i64
  %two = llvm.mlir.constant(2 : index) : i64
  %slot = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %r5, %slot : !desc, !llvm.ptr
  %u = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
  %u0 = llvm.insertvalue %two, %u[0] : !llvm.struct<(i64, ptr)>
  %u1 = llvm.insertvalue %slot, %u0[1] : !llvm.struct<(i64, ptr)>
  %e = llvm.load %b : !llvm.ptr -> !desc
  %slot2 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %e, %slot2 : !desc, !llvm.ptr
  %v0 = llvm.insertvalue %two, %u[0] : !llvm.struct<(i64, ptr)>
  %v1 = llvm.insertvalue %slot2, %v0[1] : !llvm.struct<(i64, ptr)>
  %q = llvm.extractvalue %u1[1] : !llvm.struct<(i64, ptr)>
  %q2 = llvm.extractvalue %v1[1] : !llvm.struct<(i64, ptr)>
  llvm.call @use(%two, %q) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q2) : (i64, !llvm.ptr) -> ()
  llvm.call @kernel(%f1, %f2) : (!llvm.ptr, i64) -> ()
  llvm.return
}

// -----

!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @use(i64, !llvm.ptr)
llvm.func @write(!llvm.ptr)

// Left alone: the argument is written through (stored to, or passed to a
// call); a field is missing from the rebuilt value; a field comes from
// another position or from another load; the slot is stored twice, holds
// two elements, is read directly, or holds another type; the load is
// volatile.
// CHECK-LABEL: llvm.func @kept(
// CHECK-COUNT-10: llvm.alloca
// CHECK-NOT: llvm.alloca
llvm.func @kept(%w: !llvm.ptr, %x: !llvm.ptr, %a: !llvm.ptr, %b: !llvm.ptr, %v: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : index) : i64
  %two = llvm.mlir.constant(2 : i64) : i64
  %u = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
  %p = llvm.mlir.poison : !desc
  // Stored through.
  %dw = llvm.load %w : !llvm.ptr -> !desc
  llvm.store %dw, %w : !desc, !llvm.ptr
  %s1 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %dw, %s1 : !desc, !llvm.ptr
  %u1 = llvm.insertvalue %s1, %u[1] : !llvm.struct<(i64, ptr)>
  // Passed to a call.
  %dx = llvm.load %x : !llvm.ptr -> !desc
  llvm.call @write(%x) : (!llvm.ptr) -> ()
  %s2 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %dx, %s2 : !desc, !llvm.ptr
  %u2 = llvm.insertvalue %s2, %u[1] : !llvm.struct<(i64, ptr)>
  // A missing field (sizes).
  %d = llvm.load %a : !llvm.ptr -> !desc
  %f0 = llvm.extractvalue %d[0] : !desc
  %f1 = llvm.extractvalue %d[1] : !desc
  %f2 = llvm.extractvalue %d[2] : !desc
  %f4 = llvm.extractvalue %d[4] : !desc
  %m0 = llvm.insertvalue %f0, %p[0] : !desc
  %m1 = llvm.insertvalue %f1, %m0[1] : !desc
  %m2 = llvm.insertvalue %f2, %m1[2] : !desc
  %m3 = llvm.insertvalue %f4, %m2[4] : !desc
  %s3 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %m3, %s3 : !desc, !llvm.ptr
  %u3 = llvm.insertvalue %s3, %u[1] : !llvm.struct<(i64, ptr)>
  // A field from another position (the aligned pointer as allocated one).
  %f3 = llvm.extractvalue %d[3] : !desc
  %x0 = llvm.insertvalue %f1, %p[0] : !desc
  %x1 = llvm.insertvalue %f1, %x0[1] : !desc
  %x2 = llvm.insertvalue %f2, %x1[2] : !desc
  %x3 = llvm.insertvalue %f3, %x2[3] : !desc
  %x4 = llvm.insertvalue %f4, %x3[4] : !desc
  %s4 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %x4, %s4 : !desc, !llvm.ptr
  %u4 = llvm.insertvalue %s4, %u[1] : !llvm.struct<(i64, ptr)>
  // A field from another load.
  %e = llvm.load %b : !llvm.ptr -> !desc
  %g0 = llvm.extractvalue %e[0] : !desc
  %y0 = llvm.insertvalue %g0, %p[0] : !desc
  %y1 = llvm.insertvalue %f1, %y0[1] : !desc
  %y2 = llvm.insertvalue %f2, %y1[2] : !desc
  %y3 = llvm.insertvalue %f3, %y2[3] : !desc
  %y4 = llvm.insertvalue %f4, %y3[4] : !desc
  %s5 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %y4, %s5 : !desc, !llvm.ptr
  %u5 = llvm.insertvalue %s5, %u[1] : !llvm.struct<(i64, ptr)>
  // Stored twice.
  %s6 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %d, %s6 : !desc, !llvm.ptr
  llvm.store %e, %s6 : !desc, !llvm.ptr
  %u6 = llvm.insertvalue %s6, %u[1] : !llvm.struct<(i64, ptr)>
  // Two elements.
  %s7 = llvm.alloca %two x !desc : (i64) -> !llvm.ptr
  llvm.store %d, %s7 : !desc, !llvm.ptr
  %u7 = llvm.insertvalue %s7, %u[1] : !llvm.struct<(i64, ptr)>
  // Read directly (loaded here).
  %s8 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %d, %s8 : !desc, !llvm.ptr
  %r8 = llvm.load %s8 : !llvm.ptr -> i64
  // Another type.
  %s9 = llvm.alloca %one x !llvm.array<7 x i64> : (i64) -> !llvm.ptr
  llvm.store %d, %s9 : !desc, !llvm.ptr
  %u9 = llvm.insertvalue %s9, %u[1] : !llvm.struct<(i64, ptr)>
  // A volatile load.
  %dv = llvm.load volatile %v : !llvm.ptr -> !desc
  %s10 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %dv, %s10 : !desc, !llvm.ptr
  %u10 = llvm.insertvalue %s10, %u[1] : !llvm.struct<(i64, ptr)>
  %q1 = llvm.extractvalue %u1[1] : !llvm.struct<(i64, ptr)>
  %q2 = llvm.extractvalue %u2[1] : !llvm.struct<(i64, ptr)>
  %q3 = llvm.extractvalue %u3[1] : !llvm.struct<(i64, ptr)>
  %q4 = llvm.extractvalue %u4[1] : !llvm.struct<(i64, ptr)>
  %q5 = llvm.extractvalue %u5[1] : !llvm.struct<(i64, ptr)>
  %q6 = llvm.extractvalue %u6[1] : !llvm.struct<(i64, ptr)>
  %q7 = llvm.extractvalue %u7[1] : !llvm.struct<(i64, ptr)>
  %q9 = llvm.extractvalue %u9[1] : !llvm.struct<(i64, ptr)>
  %q10 = llvm.extractvalue %u10[1] : !llvm.struct<(i64, ptr)>
  llvm.call @use(%two, %q1) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q2) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q3) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q4) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q5) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q6) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q7) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q9) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%two, %q10) : (i64, !llvm.ptr) -> ()
  llvm.return
}

// -----

// A slot handed to calls as it is (the call lowering passes an unranked
// memref as its rank and this pointer) becomes the argument too, in every
// call that takes it.
!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @use(i64, !llvm.ptr)
// CHECK-LABEL: llvm.func @passed(%arg0: !llvm.ptr)
// CHECK-NOT: llvm.alloca
// CHECK-NOT: llvm.store
// CHECK: llvm.call @use(%{{.*}}, %arg0)
// CHECK-NEXT: llvm.call @use(%{{.*}}, %arg0)
// CHECK-NEXT: llvm.return
llvm.func @passed(%a: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : index) : i64
  %d = llvm.load %a : !llvm.ptr -> !desc
  %s = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %d, %s : !desc, !llvm.ptr
  llvm.call @use(%one, %s) : (i64, !llvm.ptr) -> ()
  llvm.call @use(%one, %s) : (i64, !llvm.ptr) -> ()
  llvm.return
}

// -----

// The unranked descriptor position must be its pointer field: a slot put
// anywhere else (here a struct of two pointers) stays.
!desc = !llvm.struct<(ptr, ptr, i64)>
llvm.func @use(!llvm.ptr)
// CHECK-LABEL: llvm.func @other_struct(
// CHECK: llvm.alloca
llvm.func @other_struct(%a: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : index) : i64
  %d = llvm.load %a : !llvm.ptr -> !desc
  %s = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %d, %s : !desc, !llvm.ptr
  %u = llvm.mlir.poison : !llvm.struct<(ptr, ptr)>
  %u1 = llvm.insertvalue %s, %u[1] : !llvm.struct<(ptr, ptr)>
  %q = llvm.extractvalue %u1[1] : !llvm.struct<(ptr, ptr)>
  llvm.call @use(%q) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Left alone: the unranked descriptor's pointer is written through, the
// descriptor is stored to memory, the argument is in another address space
// or carries an attribute.
!desc = !llvm.struct<(ptr, ptr, i64)>
llvm.func @use(i64, !llvm.ptr)
// CHECK-LABEL: llvm.func @escapes(
// CHECK-COUNT-4: llvm.alloca
// CHECK-NOT: llvm.alloca
llvm.func @escapes(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr<1>,
                   %d: !llvm.ptr {llvm.nocapture}, %out: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : index) : i64
  %n = llvm.mlir.constant(7 : i64) : i64
  %u = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
  // Written through.
  %da = llvm.load %a : !llvm.ptr -> !desc
  %s1 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %da, %s1 : !desc, !llvm.ptr
  %u1 = llvm.insertvalue %s1, %u[1] : !llvm.struct<(i64, ptr)>
  %q1 = llvm.extractvalue %u1[1] : !llvm.struct<(i64, ptr)>
  llvm.store %n, %q1 : i64, !llvm.ptr
  // Stored to memory.
  %db = llvm.load %b : !llvm.ptr -> !desc
  %s2 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %db, %s2 : !desc, !llvm.ptr
  %u2 = llvm.insertvalue %s2, %u[1] : !llvm.struct<(i64, ptr)>
  llvm.store %u2, %out : !llvm.struct<(i64, ptr)>, !llvm.ptr
  // Another address space.
  %dc = llvm.load %c : !llvm.ptr<1> -> !desc
  %s3 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %dc, %s3 : !desc, !llvm.ptr
  %u3 = llvm.insertvalue %s3, %u[1] : !llvm.struct<(i64, ptr)>
  %q3 = llvm.extractvalue %u3[1] : !llvm.struct<(i64, ptr)>
  llvm.call @use(%n, %q3) : (i64, !llvm.ptr) -> ()
  // An attribute.
  %dd = llvm.load %d : !llvm.ptr -> !desc
  %s4 = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %dd, %s4 : !desc, !llvm.ptr
  %u4 = llvm.insertvalue %s4, %u[1] : !llvm.struct<(i64, ptr)>
  %q4 = llvm.extractvalue %u4[1] : !llvm.struct<(i64, ptr)>
  llvm.call @use(%n, %q4) : (i64, !llvm.ptr) -> ()
  llvm.return
}
