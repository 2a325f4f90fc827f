// One instance of a pass run on two modules (as a pass manager built once
// by an embedding compiler and run on several modules, or nested modules
// without threading) keeps nothing from the first: each module gets its
// own loop function and table, its own descriptor globals and wrapper
// variants, declared in that module.
// RUN: muon-opt %s --mlir-disable-threading --pass-pipeline='builtin.module(builtin.module(muon-roll-call-runs))' | FileCheck %s --check-prefix=ROLL
// RUN: muon-opt %s --mlir-disable-threading --pass-pipeline='builtin.module(builtin.module(muon-convert-step-to-llvm,reconcile-unrealized-casts,muon-tables-by-reference))' | FileCheck %s --check-prefix=TABLES

// ROLL-LABEL: module @first
// ROLL: llvm.call @f_run(
// ROLL: llvm.func private @f_run(
// ROLL-LABEL: module @second
// ROLL: llvm.call @f_run(
// ROLL: llvm.func private @f_run(
// TABLES-LABEL: module @first
// TABLES: llvm.mlir.global private constant @shape_descriptor()
// TABLES: llvm.func private @muon_rt_comm_by_reference(
// TABLES: llvm.call @muon_rt_comm_by_reference(
// TABLES-LABEL: module @second
// TABLES: llvm.mlir.global private constant @shape_descriptor()
// TABLES: llvm.func private @muon_rt_comm_by_reference(
// TABLES: llvm.call @muon_rt_comm_by_reference(
module @first {
  llvm.func @f(!llvm.ptr)
  llvm.func @run(%p: !llvm.ptr) {
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
  func.func private @muon_rt_comm(memref<?xi64>, memref<?xi64>) -> i64 attributes {llvm.emit_c_interface}
  memref.global "private" constant @shape : memref<2xi64> = dense<[2, 4]>
  func.func @comm() -> i64 {
    %s = memref.get_global @shape : memref<2xi64>
    %sd = memref.cast %s : memref<2xi64> to memref<?xi64>
    %c = call @muon_rt_comm(%sd, %sd) : (memref<?xi64>, memref<?xi64>) -> i64
    return %c : i64
  }
}
module @second {
  llvm.func @f(!llvm.ptr)
  llvm.func @run(%p: !llvm.ptr) {
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.call @f(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
  func.func private @muon_rt_comm(memref<?xi64>, memref<?xi64>) -> i64 attributes {llvm.emit_c_interface}
  memref.global "private" constant @shape : memref<2xi64> = dense<[2, 4]>
  func.func @comm() -> i64 {
    %s = memref.get_global @shape : memref<2xi64>
    %sd = memref.cast %s : memref<2xi64> to memref<?xi64>
    %c = call @muon_rt_comm(%sd, %sd) : (memref<?xi64>, memref<?xi64>) -> i64
    return %c : i64
  }
}
