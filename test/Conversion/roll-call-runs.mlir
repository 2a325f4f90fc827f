// muon-roll-call-runs: a run of calls to one function (nothing between them
// but memory-effect-free ops) becomes one call of a loop over a table of
// their arguments: integer constants and global addresses from a constant
// table, a value every call shares as a loop argument, constant element
// offsets from one base pointer as that base and a table column, anything
// else stored into a stack slot.
// RUN: muon-opt %s --split-input-file --muon-roll-call-runs | FileCheck %s
// RUN: muon-opt %s --split-input-file --muon-roll-call-runs="min-run=2 max-run=2" | FileCheck %s --check-prefix=CHUNK

// Four checks of entry arguments: index and rank constants and the index
// of the table's address in the run's address list are a row each, in call
// order; the arguments' descriptors go to the slot; the loop calls the
// callee once per row.
// CHECK-LABEL: module
// CHECK-LABEL: llvm.func @entry(
// CHECK-SAME: %[[A0:[^:]*]]: !llvm.ptr, %[[A1:[^:]*]]: !llvm.ptr, %[[A2:[^:]*]]: !llvm.ptr, %[[A3:[^:]*]]: !llvm.ptr)
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.array<4 x struct<(ptr)>> : (i64) -> !llvm.ptr
// CHECK-NOT: llvm.call @check(
// CHECK: %[[N:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: %[[T:.*]] = llvm.mlir.addressof @check_run_table
// CHECK: %[[L:.*]] = llvm.mlir.addressof @check_run_addresses
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[SLOT]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr)>
// CHECK: llvm.store %[[A0]], %[[P0]]
// CHECK: %[[P3:.*]] = llvm.getelementptr %[[SLOT]][3, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr)>
// CHECK: llvm.store %[[A3]], %[[P3]]
// CHECK: llvm.call @check_run(%[[N]], %[[T]], %[[L]], %[[SLOT]]) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: llvm.call @check(
// CHECK: llvm.return
// CHECK: llvm.func private @check_run(%[[COUNT:[^:]*]]: i64, %[[TABLE:[^:]*]]: !llvm.ptr, %[[LIST:[^:]*]]: !llvm.ptr, %[[STORED:[^:]*]]: !llvm.ptr)
// CHECK: llvm.br ^[[HEAD:.*]](%{{.*}} : i64)
// CHECK: ^[[HEAD]](%[[I:.*]]: i64):
// CHECK: %[[MORE:.*]] = llvm.icmp "slt" %[[I]], %[[COUNT]]
// CHECK: llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK: ^[[BODY]]:
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[TABLE]][%[[I]], 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<3 x i64>
// CHECK: %[[V0:.*]] = llvm.load %[[F0]] : !llvm.ptr -> i64
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[TABLE]][%[[I]], 1]
// CHECK: %[[V1:.*]] = llvm.load %[[F1]] : !llvm.ptr -> i64
// CHECK: %[[F2:.*]] = llvm.getelementptr %[[STORED]][%[[I]], 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(ptr)>
// CHECK: %[[V2:.*]] = llvm.load %[[F2]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[F3:.*]] = llvm.getelementptr %[[TABLE]][%[[I]], 2]
// CHECK: %[[K:.*]] = llvm.load %[[F3]] : !llvm.ptr -> i64
// CHECK: %[[E3:.*]] = llvm.getelementptr %[[LIST]][%[[K]]] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[V3:.*]] = llvm.load %[[E3]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @check(%[[V0]], %[[V1]], %[[V2]], %[[V3]])
// CHECK: llvm.add %[[I]], %{{.*}}
// CHECK: llvm.br ^[[HEAD]]
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: llvm.return
// CHECK: llvm.mlir.global private constant @check_run_table(dense<{{\[}}[0, 2, 0], [1, 2, 1], [2, 2, 0], [3, 2, 1]]> : tensor<4x3xi64>) {{.*}} : !llvm.array<4 x array<3 x i64>>
// CHECK: llvm.mlir.global private constant @check_run_addresses() {{.*}} : !llvm.array<2 x ptr>
// CHECK: %[[E:.*]] = llvm.mlir.addressof @expected
// CHECK: llvm.insertvalue %[[E]], %{{.*}}[0]
// CHECK: %[[O:.*]] = llvm.mlir.addressof @other
// CHECK: llvm.insertvalue %[[O]], %{{.*}}[1]

// With at most two calls per loop, the four checks are two loop calls of
// one loop function, with a table each.
// CHUNK-LABEL: llvm.func @entry(
// CHUNK: llvm.call @check_run(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHUNK: llvm.call @check_run(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHUNK-NOT: llvm.call @check(
// CHUNK: llvm.return
// CHUNK: llvm.mlir.global private constant @check_run_table(dense<{{\[}}[0, 2, 0], [1, 2, 1]]> : tensor<2x3xi64>)
// CHUNK: llvm.mlir.global private constant @check_run_table_0(dense<{{\[}}[2, 2, 0], [3, 2, 1]]> : tensor<2x3xi64>)
llvm.mlir.global private constant @expected(dense<[4, 4, 2, 4]> : tensor<4xi64>) : !llvm.array<4 x i64>
llvm.mlir.global private constant @other(dense<[2, 2, 2, 2]> : tensor<4xi64>) : !llvm.array<4 x i64>
llvm.func @check(i64, i64, !llvm.ptr, !llvm.ptr)
llvm.func @entry(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: !llvm.ptr, %a3: !llvm.ptr) {
  %e = llvm.mlir.addressof @expected : !llvm.ptr
  %o = llvm.mlir.addressof @other : !llvm.ptr
  %rank = llvm.mlir.constant(2 : i64) : i64
  %i0 = llvm.mlir.constant(0 : i64) : i64
  llvm.call @check(%i0, %rank, %a0, %e) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
  %i1 = llvm.mlir.constant(1 : i64) : i64
  llvm.call @check(%i1, %rank, %a1, %o) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
  %i2 = llvm.mlir.constant(2 : i64) : i64
  llvm.call @check(%i2, %rank, %a2, %e) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
  %i3 = llvm.mlir.constant(3 : i64) : i64
  llvm.call @check(%i3, %rank, %a3, %o) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

// -----

// Items of one batch: the handle (a call's result, the same in every item)
// is passed to the loop once; the begin and end calls, which return values,
// stay calls and bound the run. The buffers are one base pointer each,
// itself in the first item and a one-index GEP of it in the others: the
// base is passed to the loop once and the element index is a table column,
// so the loop makes the GEP. A narrower integer is a table column read as
// i64 and truncated; a float that differs between calls is stored.
// CHECK-LABEL: llvm.func @batch(
// CHECK-SAME: %[[IN:[^:]*]]: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr)
// CHECK: llvm.alloca %{{.*}} x !llvm.array<4 x struct<(f64)>>
// CHECK: %[[H:.*]] = llvm.call @begin() : () -> i64
// CHECK-NOT: llvm.getelementptr %[[IN]]
// CHECK-NOT: llvm.call @item(
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @item_run(%[[H]], %[[IN]], %[[OUT]], %{{.*}}, %{{.*}}, %[[NULL]], %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @end(%[[H]])
// CHECK: llvm.func private @item_run(%[[SH:[^:]*]]: i64, %[[B0:[^:]*]]: !llvm.ptr, %[[B1:[^:]*]]: !llvm.ptr, %{{.*}}: i64, %[[TAB:[^:]*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ST:[^:]*]]: !llvm.ptr)
// CHECK: %[[I0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[B0]][%[[I0]]] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK: %[[I1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[B1]][%[[I1]]] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK: %[[D:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[D32:.*]] = llvm.trunc %[[D]] : i64 to i32
// CHECK: llvm.getelementptr %[[ST]][%{{.*}}, 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(f64)>
// CHECK: %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f64
// CHECK: llvm.call @item(%[[SH]], %[[P0]], %[[P1]], %[[D32]], %[[X]])
// CHECK: llvm.mlir.global private constant @item_run_table(dense<{{\[}}[0, 0, 0], [1, 1, 1], [2, 2, -1], [3, 3, 0]]> : tensor<4x3xi64>)
llvm.func @begin() -> i64
llvm.func @item(i64, !llvm.ptr, !llvm.ptr, i32, f64)
llvm.func @end(i64) -> i64
llvm.func @batch(%in: !llvm.ptr, %out: !llvm.ptr) -> i64 {
  %h = llvm.call @begin() : () -> i64
  %d0 = llvm.mlir.constant(0 : i32) : i32
  %d1 = llvm.mlir.constant(1 : i32) : i32
  %dm = llvm.mlir.constant(-1 : i32) : i32
  %x0 = llvm.mlir.constant(0.5 : f64) : f64
  %x1 = llvm.mlir.constant(1.5 : f64) : f64
  %in1 = llvm.getelementptr %in[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %out1 = llvm.getelementptr %out[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %in2 = llvm.getelementptr %in[2] : (!llvm.ptr) -> !llvm.ptr, i64
  %out2 = llvm.getelementptr %out[2] : (!llvm.ptr) -> !llvm.ptr, i64
  %in3 = llvm.getelementptr %in[3] : (!llvm.ptr) -> !llvm.ptr, i64
  %out3 = llvm.getelementptr %out[3] : (!llvm.ptr) -> !llvm.ptr, i64
  llvm.call @item(%h, %in, %out, %d0, %x0) : (i64, !llvm.ptr, !llvm.ptr, i32, f64) -> ()
  llvm.call @item(%h, %in1, %out1, %d1, %x1) : (i64, !llvm.ptr, !llvm.ptr, i32, f64) -> ()
  llvm.call @item(%h, %in2, %out2, %dm, %x0) : (i64, !llvm.ptr, !llvm.ptr, i32, f64) -> ()
  llvm.call @item(%h, %in3, %out3, %d0, %x1) : (i64, !llvm.ptr, !llvm.ptr, i32, f64) -> ()
  %r = llvm.call @end(%h) : (i64) -> i64
  llvm.return %r : i64
}

// -----

// A store between calls (it may change what a later call reads) ends a run;
// so does a call of another function; runs shorter than min-run (4) stay.
// A kernel's calls are left alone. Nothing changes here.
// CHECK-LABEL: llvm.func @broken(
// CHECK-COUNT-3: llvm.call @f(
// CHECK: llvm.store
// CHECK-COUNT-3: llvm.call @f(
// CHECK: llvm.call @g(
// CHECK-COUNT-3: llvm.call @f(
// CHECK-NOT: _run
// CHECK-LABEL: llvm.func @kernel(
// CHECK-COUNT-4: llvm.call @f(
// CHECK-NOT: _run
llvm.func @f(!llvm.ptr)
llvm.func @g()
llvm.func @broken(%p: !llvm.ptr, %v: i64) {
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.store %v, %p : i64, !llvm.ptr
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @g() : () -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @kernel(%p: !llvm.ptr) attributes {muon.kernel} {
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Every argument shared and no constant: no table, no address list, no
// slot (null pointers), and each call's own arguments unchanged.
// CHECK-LABEL: llvm.func @shared(
// CHECK-NOT: llvm.alloca
// CHECK: %[[N:.*]] = llvm.mlir.constant(5 : i64) : i64
// CHECK: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @f_run(%arg0, %[[N]], %[[Z]], %[[Z]], %[[Z]]) : (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.func private @f_run(%[[P:[^:]*]]: !llvm.ptr,
// CHECK: llvm.call @f(%[[P]])
llvm.func @f(!llvm.ptr)
llvm.func @shared(%p: !llvm.ptr) {
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Two runs with the same record type share one slot, as long as the longer
// run: four records, then six.
// CHECK-LABEL: llvm.func @two_runs(
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.array<6 x struct<(ptr)>>
// CHECK-NOT: llvm.alloca
// CHECK: llvm.call @h_run(%{{.*}}, %{{.*}}, %{{.*}}, %[[SLOT]])
// CHECK: llvm.store %{{.*}}, %arg6
// CHECK: llvm.getelementptr %[[SLOT]][5, 0]
// CHECK: llvm.call @h_run(%{{.*}}, %{{.*}}, %{{.*}}, %[[SLOT]])
llvm.func @h(!llvm.ptr)
llvm.func @two_runs(%p0: !llvm.ptr, %p1: !llvm.ptr, %p2: !llvm.ptr, %p3: !llvm.ptr, %p4: !llvm.ptr, %p5: !llvm.ptr, %q: !llvm.ptr, %v: i64) {
  llvm.call @h(%p0) : (!llvm.ptr) -> ()
  llvm.call @h(%p1) : (!llvm.ptr) -> ()
  llvm.call @h(%p2) : (!llvm.ptr) -> ()
  llvm.call @h(%p3) : (!llvm.ptr) -> ()
  llvm.store %v, %q : i64, !llvm.ptr
  llvm.call @h(%p0) : (!llvm.ptr) -> ()
  llvm.call @h(%p1) : (!llvm.ptr) -> ()
  llvm.call @h(%p2) : (!llvm.ptr) -> ()
  llvm.call @h(%p3) : (!llvm.ptr) -> ()
  llvm.call @h(%p4) : (!llvm.ptr) -> ()
  llvm.call @h(%p5) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Offsets from one base only: a run whose pointers are GEPs of two element
// types, of two bases, with two indices, or with a dynamic index, stores
// them (a base passed alone by every call is shared: @shared above). Four
// runs (a call of @sep between them), each with its own slot use.
// CHECK-LABEL: llvm.func @not_offsets(
// CHECK-COUNT-4: llvm.store
// CHECK: llvm.call @h_run(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.store
// CHECK: llvm.call @h_run(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.store
// CHECK: llvm.call @h_run(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.store
// CHECK: llvm.call @h_run(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: _run_table
llvm.func @h(!llvm.ptr)
llvm.func @sep()
llvm.func @not_offsets(%p: !llvm.ptr, %q: !llvm.ptr, %n: i64) {
  %a1 = llvm.getelementptr %p[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %b1 = llvm.getelementptr %p[1] : (!llvm.ptr) -> !llvm.ptr, i32
  %q1 = llvm.getelementptr %q[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %s1 = llvm.getelementptr %p[1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64)>
  %s2 = llvm.getelementptr %p[2, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64)>
  %d1 = llvm.getelementptr %p[%n] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.call @h(%p) : (!llvm.ptr) -> ()
  llvm.call @h(%a1) : (!llvm.ptr) -> ()
  llvm.call @h(%b1) : (!llvm.ptr) -> ()
  llvm.call @h(%p) : (!llvm.ptr) -> ()
  llvm.call @sep() : () -> ()
  llvm.call @h(%a1) : (!llvm.ptr) -> ()
  llvm.call @h(%q1) : (!llvm.ptr) -> ()
  llvm.call @h(%a1) : (!llvm.ptr) -> ()
  llvm.call @h(%q1) : (!llvm.ptr) -> ()
  llvm.call @sep() : () -> ()
  llvm.call @h(%s1) : (!llvm.ptr) -> ()
  llvm.call @h(%s2) : (!llvm.ptr) -> ()
  llvm.call @h(%s1) : (!llvm.ptr) -> ()
  llvm.call @h(%s2) : (!llvm.ptr) -> ()
  llvm.call @sep() : () -> ()
  llvm.call @h(%p) : (!llvm.ptr) -> ()
  llvm.call @h(%d1) : (!llvm.ptr) -> ()
  llvm.call @h(%p) : (!llvm.ptr) -> ()
  llvm.call @h(%d1) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// The address of a global in another address space is not put in the
// address list (a list of default-space pointers): it is stored.
// CHECK-LABEL: llvm.func @other_space(
// CHECK: llvm.alloca %{{.*}} x !llvm.array<4 x struct<(ptr<1>)>>
// CHECK: llvm.call @k_run(
// CHECK: llvm.func private @k_run(
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr<1>
llvm.mlir.global external @d0(0 : i64) {addr_space = 1 : i32} : i64
llvm.mlir.global external @d1(0 : i64) {addr_space = 1 : i32} : i64
llvm.func @k(!llvm.ptr<1>)
llvm.func @other_space() {
  %a = llvm.mlir.addressof @d0 : !llvm.ptr<1>
  %b = llvm.mlir.addressof @d1 : !llvm.ptr<1>
  llvm.call @k(%a) : (!llvm.ptr<1>) -> ()
  llvm.call @k(%b) : (!llvm.ptr<1>) -> ()
  llvm.call @k(%a) : (!llvm.ptr<1>) -> ()
  llvm.call @k(%b) : (!llvm.ptr<1>) -> ()
  llvm.return
}

// -----

// Left as calls: an LLVM intrinsic (its arguments may have to be
// immediates), a callee with an `llvm.immarg` parameter, tail calls, and
// runs cut by a division (it may trap, so it must not move before a call
// that could stop the program first).
// CHECK-LABEL: llvm.func @left_alone(
// CHECK-COUNT-4: llvm.call @llvm.donothing.like(
// CHECK-COUNT-4: llvm.call @imm(
// CHECK-COUNT-4: llvm.call tail @f(
// CHECK-COUNT-2: llvm.call @f(
// CHECK: llvm.sdiv
// CHECK-COUNT-2: llvm.call @f(
// CHECK-NOT: _run
llvm.func @llvm.donothing.like(i1)
llvm.func @imm(i32 {llvm.immarg})
llvm.func @f(!llvm.ptr)
llvm.func @left_alone(%p: !llvm.ptr, %a: i64, %b: i64) -> i64 {
  %t = llvm.mlir.constant(true) : i1
  %f = llvm.mlir.constant(false) : i1
  llvm.call @llvm.donothing.like(%t) : (i1) -> ()
  llvm.call @llvm.donothing.like(%f) : (i1) -> ()
  llvm.call @llvm.donothing.like(%t) : (i1) -> ()
  llvm.call @llvm.donothing.like(%f) : (i1) -> ()
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  llvm.call @imm(%c0) : (i32) -> ()
  llvm.call @imm(%c1) : (i32) -> ()
  llvm.call @imm(%c0) : (i32) -> ()
  llvm.call @imm(%c1) : (i32) -> ()
  llvm.call tail @f(%p) : (!llvm.ptr) -> ()
  llvm.call tail @f(%p) : (!llvm.ptr) -> ()
  llvm.call tail @f(%p) : (!llvm.ptr) -> ()
  llvm.call tail @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  %q = llvm.sdiv %a, %b : i64
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.return %q : i64
}

// -----

// A thread-local global's address differs per thread: it is stored, not
// put in the constant address list.
// CHECK-LABEL: llvm.func @thread_local(
// CHECK: llvm.alloca %{{.*}} x !llvm.array<4 x struct<(ptr)>>
// CHECK: llvm.call @u_run(
// CHECK-NOT: _run_addresses
llvm.mlir.global internal thread_local @t0(0 : i64) : i64
llvm.mlir.global internal thread_local @t1(0 : i64) : i64
llvm.func @u(!llvm.ptr)
llvm.func @thread_local() {
  %a = llvm.mlir.addressof @t0 : !llvm.ptr
  %b = llvm.mlir.addressof @t1 : !llvm.ptr
  llvm.call @u(%a) : (!llvm.ptr) -> ()
  llvm.call @u(%b) : (!llvm.ptr) -> ()
  llvm.call @u(%a) : (!llvm.ptr) -> ()
  llvm.call @u(%b) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Offsets keep their sign and their element type, in any address space:
// a negative index and a struct element type from a base in address space
// 1 are a table column and one base argument of the loop, which makes the
// GEP with the same element type.
// CHECK-LABEL: llvm.func @signed_offsets(
// CHECK-SAME: %[[B:[^:]*]]: !llvm.ptr<1>)
// CHECK-NOT: llvm.store
// CHECK: llvm.call @w_run(%[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr<1>, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.func private @w_run(%[[BASE:[^:]*]]: !llvm.ptr<1>,
// CHECK: %[[I:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P:.*]] = llvm.getelementptr %[[BASE]][%[[I]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, !llvm.struct<(i64, f32)>
// CHECK: llvm.call @w(%[[P]])
// CHECK: llvm.mlir.global private constant @w_run_table(dense<{{\[}}[-1], [0], [2], [-2147483647]]> : tensor<4x1xi64>)
llvm.func @w(!llvm.ptr<1>)
llvm.func @signed_offsets(%b: !llvm.ptr<1>) {
  %m1 = llvm.getelementptr %b[-1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, !llvm.struct<(i64, f32)>
  %p2 = llvm.getelementptr %b[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, !llvm.struct<(i64, f32)>
  %mx = llvm.getelementptr %b[-2147483647] : (!llvm.ptr<1>) -> !llvm.ptr<1>, !llvm.struct<(i64, f32)>
  llvm.call @w(%m1) : (!llvm.ptr<1>) -> ()
  llvm.call @w(%b) : (!llvm.ptr<1>) -> ()
  llvm.call @w(%p2) : (!llvm.ptr<1>) -> ()
  llvm.call @w(%mx) : (!llvm.ptr<1>) -> ()
  llvm.return
}
