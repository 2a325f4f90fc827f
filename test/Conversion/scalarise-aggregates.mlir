// muon-scalarise-aggregates: memref descriptors cross blocks and reach
// stack slots as scalar fields; field reads fold through the insertvalues
// they read; fixed-size stack slots outside cycles move to the entry block.
// Kernels (muon.kernel) are left to LLVM's optimiser.
// RUN: muon-opt %s --muon-scalarise-aggregates --split-input-file | FileCheck %s

!d = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>

llvm.func @use(!llvm.ptr, i64)
llvm.func @use_whole(!d)

// A descriptor yielded by both sides of a branch: the join block takes its
// five fields, the predecessors pass the values they inserted, and nothing
// builds a struct any more.
// CHECK-LABEL: llvm.func @join
// CHECK-NOT: insertvalue
// CHECK: llvm.cond_br %{{.*}}, ^[[JOIN:bb[0-9]+]](%arg1, %arg1, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr, i64, i64, i64), ^[[JOIN]](%arg2, %arg2, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK: ^[[JOIN]](%[[P0:.*]]: !llvm.ptr, %[[P1:.*]]: !llvm.ptr, %{{.*}}: i64, %[[S:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT: llvm.call @use(%[[P1]], %[[S]])
// CHECK-NOT: extractvalue
llvm.func @join(%c: i1, %a: !llvm.ptr, %b: !llvm.ptr) {
  %z = llvm.mlir.constant(0 : i64) : i64
  %n = llvm.mlir.constant(8 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %u = llvm.mlir.poison : !d
  %d0 = llvm.insertvalue %a, %u[0] : !d
  %d1 = llvm.insertvalue %a, %d0[1] : !d
  %d2 = llvm.insertvalue %z, %d1[2] : !d
  %d3 = llvm.insertvalue %n, %d2[3, 0] : !d
  %d4 = llvm.insertvalue %one, %d3[4, 0] : !d
  %e0 = llvm.insertvalue %b, %u[0] : !d
  %e1 = llvm.insertvalue %b, %e0[1] : !d
  %e2 = llvm.insertvalue %z, %e1[2] : !d
  %e3 = llvm.insertvalue %n, %e2[3, 0] : !d
  %e4 = llvm.insertvalue %one, %e3[4, 0] : !d
  llvm.cond_br %c, ^join(%d4 : !d), ^join(%e4 : !d)
^join(%x: !d):
  %p = llvm.extractvalue %x[1] : !d
  %s = llvm.extractvalue %x[3, 0] : !d
  llvm.call @use(%p, %s) : (!llvm.ptr, i64) -> ()
  llvm.return
}

// A user of the whole descriptor gets it rebuilt at the top of the block
// from the new arguments; the predecessor passes extractvalues of the
// struct it had (no insertvalue to fold through here).
// CHECK-LABEL: llvm.func @whole
// CHECK: %[[F0:.*]] = llvm.extractvalue %arg0[0]
// CHECK: %[[F4:.*]] = llvm.extractvalue %arg0[4, 0]
// CHECK: llvm.br ^[[B:bb[0-9]+]](%[[F0]], %{{.*}}, %{{.*}}, %{{.*}}, %[[F4]] :
// CHECK: ^[[B]](%[[A0:.*]]: !llvm.ptr, %[[A1:.*]]: !llvm.ptr, %[[A2:.*]]: i64, %[[A3:.*]]: i64, %[[A4:.*]]: i64):
// CHECK: %[[W0:.*]] = llvm.insertvalue %[[A0]], %{{.*}}[0]
// CHECK: %[[W4:.*]] = llvm.insertvalue %[[A4]], %{{.*}}[4, 0]
// CHECK: llvm.call @use_whole(%[[W4]])
llvm.func @whole(%d: !d) {
  llvm.br ^b(%d : !d)
^b(%x: !d):
  llvm.call @use_whole(%x) : (!d) -> ()
  llvm.return
}

// -----

!d = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>

llvm.func @runtime(!llvm.ptr)
llvm.func @use(!llvm.ptr, i64)

// A descriptor stored whole into a stack slot (an unranked runtime
// argument): one store per field, the slot moved to the entry block.
// CHECK-LABEL: llvm.func @slot
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct
// CHECK: llvm.br ^[[B:bb[0-9]+]]
// CHECK: ^[[B]]:
// CHECK-NOT: llvm.alloca
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[SLOT]][0, 0]
// CHECK: llvm.store %arg0, %[[G0]] : !llvm.ptr, !llvm.ptr
// CHECK: llvm.getelementptr %[[SLOT]][0, 1]
// CHECK: llvm.getelementptr %[[SLOT]][0, 2]
// CHECK: %[[G3:.*]] = llvm.getelementptr %[[SLOT]][0, 3, 0]
// CHECK: llvm.store %arg1, %[[G3]] : i64, !llvm.ptr
// CHECK: llvm.getelementptr %[[SLOT]][0, 4, 0]
// CHECK-NOT: insertvalue
// CHECK: llvm.call @runtime(%[[SLOT]])
llvm.func @slot(%a: !llvm.ptr, %n: i64) {
  llvm.br ^b
^b:
  %z = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %u = llvm.mlir.poison : !d
  %d0 = llvm.insertvalue %a, %u[0] : !d
  %d1 = llvm.insertvalue %a, %d0[1] : !d
  %d2 = llvm.insertvalue %z, %d1[2] : !d
  %d3 = llvm.insertvalue %n, %d2[3, 0] : !d
  %d4 = llvm.insertvalue %one, %d3[4, 0] : !d
  %c1 = llvm.mlir.constant(1 : index) : i64
  %slot = llvm.alloca %c1 x !d : (i64) -> !llvm.ptr
  llvm.store %d4, %slot : !d, !llvm.ptr
  llvm.call @runtime(%slot) : (!llvm.ptr) -> ()
  llvm.return
}

// A descriptor loaded whole (a C interface reading its argument): one
// load per field read.
// CHECK-LABEL: llvm.func @load
// CHECK: %[[G1:.*]] = llvm.getelementptr %arg0[0, 1]
// CHECK: %[[P:.*]] = llvm.load %[[G1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G3:.*]] = llvm.getelementptr %arg0[0, 3, 0]
// CHECK: %[[S:.*]] = llvm.load %[[G3]] : !llvm.ptr -> i64
// CHECK-NOT: llvm.load
// CHECK: llvm.call @use(%[[P]], %[[S]])
llvm.func @load(%p: !llvm.ptr) {
  %d = llvm.load %p : !llvm.ptr -> !d
  %a = llvm.extractvalue %d[1] : !d
  %s = llvm.extractvalue %d[3, 0] : !d
  llvm.call @use(%a, %s) : (!llvm.ptr, i64) -> ()
  llvm.return
}

// Slots whose size constant has other users (a shared constant, as
// muon-allocate-through-runtime makes): a copy of the constant in the
// entry block sizes them there, and the original stays for its other use.
// CHECK-LABEL: llvm.func @shared_size
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.alloca %[[ONE]] x !llvm.struct
// CHECK-NEXT: llvm.alloca %[[ONE]] x !llvm.struct
// CHECK-NEXT: llvm.br ^[[B:bb[0-9]+]]
// CHECK: ^[[B]]:
// CHECK-NEXT: %[[ORIG:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NOT: llvm.alloca
// CHECK: llvm.call @use(%{{.*}}, %[[ORIG]])
llvm.func @shared_size(%a: !llvm.ptr) {
  llvm.br ^b
^b:
  %one = llvm.mlir.constant(1 : i64) : i64
  %s1 = llvm.alloca %one x !d : (i64) -> !llvm.ptr
  %s2 = llvm.alloca %one x !d : (i64) -> !llvm.ptr
  llvm.call @runtime(%s1) : (!llvm.ptr) -> ()
  llvm.call @runtime(%s2) : (!llvm.ptr) -> ()
  llvm.call @use(%a, %one) : (!llvm.ptr, i64) -> ()
  llvm.return
}

// Left alone: a slot in a loop (each iteration may need its own), a store
// aligned below 8, a volatile store, a struct with a float field.
// CHECK-LABEL: llvm.func @kept
// CHECK: ^[[LOOP:bb[0-9]+]]:
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.alloca
// CHECK: llvm.store %arg0, %{{.*}} {alignment = 4 : i64} : !llvm.struct
// CHECK: llvm.store volatile %arg0, %{{.*}} : !llvm.struct
// CHECK: llvm.store %arg2, %{{.*}} : !llvm.struct<(ptr, f32)>
llvm.func @kept(%d: !d, %c: i1, %f: !llvm.struct<(ptr, f32)>) {
  llvm.br ^loop
^loop:
  %c1 = llvm.mlir.constant(1 : index) : i64
  %slot = llvm.alloca %c1 x !d : (i64) -> !llvm.ptr
  llvm.store %d, %slot {alignment = 4 : i64} : !d, !llvm.ptr
  llvm.store volatile %d, %slot : !d, !llvm.ptr
  llvm.store %f, %slot : !llvm.struct<(ptr, f32)>, !llvm.ptr
  llvm.cond_br %c, ^loop, ^exit
^exit:
  llvm.return
}

// A kernel is LLVM's to optimise: untouched.
// CHECK-LABEL: llvm.func @kernel
// CHECK: ^{{.*}}(%{{.*}}: !llvm.struct
llvm.func @kernel(%d: !d) attributes {muon.kernel} {
  llvm.br ^b(%d : !d)
^b(%x: !d):
  llvm.return
}

// -----

!d = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>

llvm.func @use(!llvm.ptr, i64)

// A descriptor carried around a loop: the back edge passes the fields the
// block received.
// CHECK-LABEL: llvm.func @loop
// CHECK: ^[[L:bb[0-9]+]](%[[A0:.*]]: !llvm.ptr, %[[A1:.*]]: !llvm.ptr, %[[A2:.*]]: i64, %[[A3:.*]]: i64, %[[A4:.*]]: i64):
// CHECK-NEXT: llvm.call @use(%[[A1]], %[[A3]])
// CHECK-NEXT: llvm.cond_br %arg1, ^[[L]](%[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[A4]] : {{.*}}), ^{{bb[0-9]+}}
llvm.func @loop(%d: !d, %c: i1) {
  llvm.br ^loop(%d : !d)
^loop(%x: !d):
  %p = llvm.extractvalue %x[1] : !d
  %s = llvm.extractvalue %x[3, 0] : !d
  llvm.call @use(%p, %s) : (!llvm.ptr, i64) -> ()
  llvm.cond_br %c, ^loop(%x : !d), ^exit
^exit:
  llvm.return
}

// -----

!i = !llvm.struct<(i64)>
!o = !llvm.struct<(!i)>
!p = !llvm.struct<packed (i64, ptr)>
!s = !llvm.struct<(ptr, i64)>

// The stored value is itself a field read that folds away (its chain is
// erased once, after every rewrite: a worklist kept during the rewrites
// held ops they had erased).
// CHECK-LABEL: llvm.func @stored_field
// CHECK-NEXT: %[[G:.*]] = llvm.getelementptr %arg1[0, 0]
// CHECK-NEXT: %[[F:.*]] = llvm.extractvalue %arg0[0]
// CHECK-NEXT: llvm.store %[[F]], %[[G]] : i64, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @stored_field(%a: !i, %ptr: !llvm.ptr) {
  %u = llvm.mlir.poison : !o
  %v = llvm.insertvalue %a, %u[0] : !o
  %x = llvm.extractvalue %v[0] : !o
  llvm.store %x, %ptr : !i, !llvm.ptr
  llvm.return
}

// A packed struct's fields are not naturally aligned: its load and store
// stay whole.
// CHECK-LABEL: llvm.func @packed
// CHECK-NEXT: llvm.load %arg0 : !llvm.ptr -> !llvm.struct<packed (i64, ptr)>
// CHECK-NEXT: llvm.store %{{.*}}, %arg1 : !llvm.struct<packed (i64, ptr)>
llvm.func @packed(%a: !llvm.ptr, %b: !llvm.ptr) {
  %d = llvm.load %a : !llvm.ptr -> !p
  llvm.store %d, %b : !p, !llvm.ptr
  llvm.return
}

llvm.func @thrower()
llvm.func @use_whole(!s)
llvm.func @__gxx_personality_v0(...) -> i32

// The successors of an invoke keep their arguments: an unwind destination
// must start with its landingpad, where a rebuilt struct cannot go.
// CHECK-LABEL: llvm.func @invoke
// CHECK: ^{{bb[0-9]+}}(%{{.*}}: !llvm.struct<(ptr, i64)>):
// CHECK-NEXT: llvm.return
// CHECK: ^{{bb[0-9]+}}(%{{.*}}: !llvm.struct<(ptr, i64)>):
// CHECK-NEXT: llvm.landingpad
llvm.func @invoke(%d: !s, %e: !s) attributes {personality = @__gxx_personality_v0} {
  llvm.invoke @thrower() to ^ok(%d : !s) unwind ^bad(%e : !s) : () -> ()
^ok(%x: !s):
  llvm.return
^bad(%y: !s):
  %lp = llvm.landingpad cleanup : !llvm.struct<(ptr, i32)>
  llvm.call @use_whole(%y) : (!s) -> ()
  llvm.return
}
