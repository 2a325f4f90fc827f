// muon-inline-entry-into-c-interface: an entry whose only use is the call
// in its C interface moves into that C interface, which keeps its
// signature (one descriptor pointer per buffer).
// RUN: muon-opt %s --muon-inline-entry-into-c-interface --split-input-file --allow-unregistered-dialect | FileCheck %s

llvm.func @work(!llvm.ptr, i64)

// CHECK-NOT: llvm.func @step(
// CHECK-LABEL: llvm.func @_mlir_ciface_step(%arg0: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK: %[[D:.*]] = llvm.load %arg0
// CHECK: %[[P:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[N:.*]] = llvm.extractvalue %[[D]][2]
// CHECK-NOT: llvm.call @step
// CHECK: llvm.br ^[[BODY:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK: llvm.cond_br %{{.*}}, ^[[THEN:bb[0-9]+]], ^[[END:bb[0-9]+]]
// CHECK: ^[[THEN]]:
// CHECK: llvm.call @work(%[[P]], %[[N]])
// CHECK: ^[[END]]:
// CHECK-NEXT: llvm.return
// CHECK-NOT: llvm.func @step(
llvm.func @step(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) attributes {llvm.emit_c_interface} {
  %z = llvm.mlir.constant(0 : i64) : i64
  %c = llvm.icmp "sgt" %n, %z : i64
  llvm.cond_br %c, ^then, ^end
^then:
  llvm.call @work(%b, %n) : (!llvm.ptr, i64) -> ()
  llvm.br ^end
^end:
  llvm.return
}
llvm.func @_mlir_ciface_step(%p: !llvm.ptr) attributes {llvm.emit_c_interface} {
  %d = llvm.load %p : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %a = llvm.extractvalue %d[0] : !llvm.struct<(ptr, ptr, i64)>
  %b = llvm.extractvalue %d[1] : !llvm.struct<(ptr, ptr, i64)>
  %n = llvm.extractvalue %d[2] : !llvm.struct<(ptr, ptr, i64)>
  llvm.call @step(%a, %b, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
  llvm.return
}

// -----

// Another use of the entry (here a direct call) keeps both functions.
// CHECK-LABEL: llvm.func @step(
// CHECK-LABEL: llvm.func @_mlir_ciface_step(
// CHECK: llvm.call @step(
// CHECK-LABEL: llvm.func @caller(
// CHECK: llvm.call @step(
llvm.func @step(%n: i64) attributes {llvm.emit_c_interface} {
  llvm.return
}
llvm.func @_mlir_ciface_step(%n: i64) attributes {llvm.emit_c_interface} {
  llvm.call @step(%n) : (i64) -> ()
  llvm.return
}
llvm.func @caller(%n: i64) {
  llvm.call @step(%n) : (i64) -> ()
  llvm.return
}

// -----

// An entry with a result (its C interface stores it through a pointer) and
// an entry only declared here are left alone.
// CHECK-LABEL: llvm.func @f(
// CHECK-LABEL: llvm.func @_mlir_ciface_f(
// CHECK: llvm.call @f(
// CHECK-LABEL: llvm.func @g(i64)
// CHECK-LABEL: llvm.func @_mlir_ciface_g(
// CHECK: llvm.call @g(
llvm.func @f(%n: i64) -> i64 {
  llvm.return %n : i64
}
llvm.func @_mlir_ciface_f(%n: i64, %out: !llvm.ptr) {
  %r = llvm.call @f(%n) : (i64) -> i64
  llvm.store %r, %out : i64, !llvm.ptr
  llvm.return
}
llvm.func @g(i64)
llvm.func @_mlir_ciface_g(%n: i64) {
  llvm.call @g(%n) : (i64) -> ()
  llvm.return
}

// -----

// In a nested module, the nested module's symbols decide.
// CHECK: module @inner
// CHECK-NOT: llvm.func @step(
// CHECK: llvm.func @_mlir_ciface_step(
// CHECK-NOT: llvm.call @step
module @inner {
  llvm.func @step(%n: i64) {
    llvm.return
  }
  llvm.func @_mlir_ciface_step(%n: i64) {
    llvm.call @step(%n) : (i64) -> ()
    llvm.return
  }
}

// -----

// Left alone: an entry referenced by an invoke elsewhere, one with a
// personality, one with an argument attribute (byval: its own copy), a
// variadic one. Each body means something else in another function, or
// the entry is still needed.
// CHECK-LABEL: llvm.func @invoked(
// CHECK-LABEL: llvm.func @with_personality(
// CHECK-LABEL: llvm.func @with_byval(
// CHECK-LABEL: llvm.func @variadic(
llvm.func @__gxx_personality_v0(...) -> i32
llvm.func @invoked() {
  llvm.return
}
llvm.func @_mlir_ciface_invoked() {
  llvm.call @invoked() : () -> ()
  llvm.return
}
llvm.func @other() attributes {personality = @__gxx_personality_v0} {
  llvm.invoke @invoked() to ^ok unwind ^bad : () -> ()
^ok:
  llvm.return
^bad:
  %lp = llvm.landingpad cleanup : !llvm.struct<(ptr, i32)>
  llvm.return
}
llvm.func @with_personality() attributes {personality = @__gxx_personality_v0} {
  llvm.return
}
llvm.func @_mlir_ciface_with_personality() {
  llvm.call @with_personality() : () -> ()
  llvm.return
}
llvm.func @with_byval(%p: !llvm.ptr {llvm.byval = i64}) {
  llvm.return
}
llvm.func @_mlir_ciface_with_byval(%p: !llvm.ptr) {
  llvm.call @with_byval(%p) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @variadic(%n: i64, ...) {
  llvm.return
}
llvm.func @_mlir_ciface_variadic(%n: i64) {
  llvm.call @variadic(%n) vararg(!llvm.func<void (i64, ...)>) : (i64) -> ()
  llvm.return
}

// -----

// Other references keep the entry too: its address taken (an inherent
// attribute of an op with properties), a reference in an array in a
// discardable attribute, and one on an op without properties.
// CHECK-LABEL: llvm.func @addressed(
// CHECK-LABEL: llvm.func @_mlir_ciface_addressed(
// CHECK: llvm.call @addressed(
// CHECK-LABEL: llvm.func @noted(
// CHECK-LABEL: llvm.func @_mlir_ciface_noted(
// CHECK: llvm.call @noted(
// CHECK-LABEL: llvm.func @unregistered_use(
// CHECK-LABEL: llvm.func @_mlir_ciface_unregistered_use(
// CHECK: llvm.call @unregistered_use(
llvm.func @addressed() {
  llvm.return
}
llvm.func @_mlir_ciface_addressed() {
  llvm.call @addressed() : () -> ()
  llvm.return
}
llvm.func @noted() {
  llvm.return
}
llvm.func @_mlir_ciface_noted() {
  llvm.call @noted() : () -> ()
  llvm.return
}
llvm.func @unregistered_use() {
  llvm.return
}
llvm.func @_mlir_ciface_unregistered_use() {
  llvm.call @unregistered_use() : () -> ()
  llvm.return
}
llvm.func @user() -> !llvm.ptr {
  %p = llvm.mlir.addressof @addressed : !llvm.ptr
  %c = llvm.mlir.constant(1 : i64) {user.refs = [@noted]} : i64
  "test.use"() {ref = @unregistered_use} : () -> ()
  llvm.return %p : !llvm.ptr
}
