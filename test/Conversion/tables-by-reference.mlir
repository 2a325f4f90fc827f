// muon-tables-by-reference: a constant table handed to a runtime function's
// C interface is passed as the address of a constant descriptor global, to
// a wrapper variant that forwards it; tables built at run time, functions
// outside the runtime's table and wrappers named otherwise are left alone.
// RUN: muon-opt %s --split-input-file --muon-convert-step-to-llvm --reconcile-unrealized-casts --muon-tables-by-reference | FileCheck %s

// Two calls to muon_rt_comm with constant tables: one descriptor global per
// table (the same table twice is one global), the fields' constants gone,
// and the upstream wrapper erased once nothing calls it.
// CHECK-LABEL: module
// CHECK-DAG: llvm.mlir.global private constant @shape_descriptor() {{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> {
// CHECK-DAG: llvm.mlir.global private constant @axes_descriptor()
// CHECK-DAG: llvm.mlir.global private constant @other_axes_descriptor()
// CHECK-NOT: llvm.func private @muon_rt_comm(
// CHECK: llvm.func private @muon_rt_comm_by_reference(%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr) -> i64
// CHECK-NEXT: llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[R:.*]] = llvm.call @_mlir_ciface_muon_rt_comm(%[[A]], %[[B]]) : (!llvm.ptr, !llvm.ptr) -> i64
// CHECK-NEXT: llvm.return %[[R]] : i64
// CHECK-LABEL: llvm.func @two_comms
// CHECK-DAG: %[[SHAPE:.*]] = llvm.mlir.addressof @shape_descriptor
// CHECK-DAG: %[[AXES:.*]] = llvm.mlir.addressof @axes_descriptor
// CHECK-DAG: %[[OTHER:.*]] = llvm.mlir.addressof @other_axes_descriptor
// CHECK: llvm.call @muon_rt_comm_by_reference(%[[SHAPE]], %[[AXES]])
// CHECK: llvm.call @muon_rt_comm_by_reference(%[[SHAPE]], %[[OTHER]])
func.func private @muon_rt_comm(memref<?xi64>, memref<?xi64>) -> i64 attributes {llvm.emit_c_interface}
memref.global "private" constant @shape : memref<2xi64> = dense<[2, 4]>
memref.global "private" constant @axes : memref<1xi64> = dense<[0]>
memref.global "private" constant @other_axes : memref<1xi64> = dense<[1]>
func.func @two_comms() -> (i64, i64) {
  %s = memref.get_global @shape : memref<2xi64>
  %sd = memref.cast %s : memref<2xi64> to memref<?xi64>
  %a = memref.get_global @axes : memref<1xi64>
  %ad = memref.cast %a : memref<1xi64> to memref<?xi64>
  %b = memref.get_global @other_axes : memref<1xi64>
  %bd = memref.cast %b : memref<1xi64> to memref<?xi64>
  %c0 = call @muon_rt_comm(%sd, %ad) : (memref<?xi64>, memref<?xi64>) -> i64
  %c1 = call @muon_rt_comm(%sd, %bd) : (memref<?xi64>, memref<?xi64>) -> i64
  return %c0, %c1 : i64, i64
}

// -----

// The descriptor global holds what memref.get_global's lowering wrote: the
// conversion's constant allocated pointer, the data's address, offset 0,
// the size and stride 1.
// CHECK-LABEL: llvm.mlir.global private constant @coeffs_descriptor()
// CHECK-DAG: %[[DATA:.*]] = llvm.mlir.addressof @coeffs : !llvm.ptr
// CHECK-DAG: %[[ALIGNED:.*]] = llvm.getelementptr %[[DATA]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<3 x f64>
// CHECK-DAG: %[[DEAD:.*]] = llvm.mlir.constant(3735928559 : i64) : i64
// CHECK-DAG: %[[ALLOCATED:.*]] = llvm.inttoptr %[[DEAD]] : i64 to !llvm.ptr
// CHECK: %[[D0:.*]] = llvm.insertvalue %[[ALLOCATED]], %{{.*}}[0]
// CHECK: %[[D1:.*]] = llvm.insertvalue %[[ALIGNED]], %[[D0]][1]
// CHECK: %[[OFFSET:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: %[[D2:.*]] = llvm.insertvalue %[[OFFSET]], %[[D1]][2]
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[D3:.*]] = llvm.insertvalue %[[SIZE]], %[[D2]][3, 0]
// CHECK: %[[STRIDE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[D4:.*]] = llvm.insertvalue %[[STRIDE]], %[[D3]][4, 0]
// CHECK: llvm.return %[[D4]]
// Unranked operands and scalars stay as they were; the variant builds the
// unranked descriptors in stack slots, as the upstream wrapper does.
// CHECK-LABEL: llvm.func private @muon_rt_newton_schulz_by_reference
// CHECK-SAME: (%[[R0:.*]]: i64, %[[P0:.*]]: !llvm.ptr, %[[R1:.*]]: i64, %[[P1:.*]]: !llvm.ptr, %[[N:.*]]: i64, %[[C:.*]]: !llvm.ptr, %[[E:.*]]: f64, %[[K:.*]]: i64)
// CHECK: %[[S0:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: llvm.store %[[R0]]
// CHECK: llvm.store %[[P0]]
// CHECK: %[[S1:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: llvm.store %[[R1]]
// CHECK: llvm.store %[[P1]]
// CHECK: llvm.call @_mlir_ciface_muon_rt_newton_schulz(%[[S0]], %[[S1]], %[[N]], %[[C]], %[[E]], %[[K]])
// CHECK-LABEL: llvm.func @ns
// CHECK-SAME: (%[[IN:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr)
// CHECK: %[[COEFFS:.*]] = llvm.mlir.addressof @coeffs_descriptor
// CHECK: llvm.call @muon_rt_newton_schulz_by_reference(%{{.*}}, %[[IN]], %{{.*}}, %[[OUT]], %{{.*}}, %[[COEFFS]], %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, f64, i64) -> ()
func.func private @muon_rt_newton_schulz(memref<*xf32>, memref<*xf32>, i64, memref<?xf64>, f64, i64) attributes {llvm.emit_c_interface}
memref.global "private" constant @coeffs : memref<3xf64> = dense<[3.4445, -4.775, 2.0315]>
func.func @ns(%in: !llvm.ptr, %out: !llvm.ptr) {
  %rank = llvm.mlir.constant(2 : i64) : i64
  %u = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
  %u0 = llvm.insertvalue %rank, %u[0] : !llvm.struct<(i64, ptr)>
  %i1 = llvm.insertvalue %in, %u0[1] : !llvm.struct<(i64, ptr)>
  %o1 = llvm.insertvalue %out, %u0[1] : !llvm.struct<(i64, ptr)>
  %iv = builtin.unrealized_conversion_cast %i1 : !llvm.struct<(i64, ptr)> to memref<*xf32>
  %ov = builtin.unrealized_conversion_cast %o1 : !llvm.struct<(i64, ptr)> to memref<*xf32>
  %g = memref.get_global @coeffs : memref<3xf64>
  %c = memref.cast %g : memref<3xf64> to memref<?xf64>
  %steps = arith.constant 5 : i64
  %eps = arith.constant 1.0e-7 : f64
  %kind = arith.constant 0 : i64
  call @muon_rt_newton_schulz(%iv, %ov, %steps, %c, %eps, %kind) : (memref<*xf32>, memref<*xf32>, i64, memref<?xf64>, f64, i64) -> ()
  return
}

// -----

// A table built at run time (a stack buffer the runtime fills) stays a
// descriptor passed field by field, through the upstream wrapper, which is
// kept; a constant table beside it goes by reference, to a variant that
// builds the other's descriptor in a stack slot.
// CHECK-LABEL: llvm.func private @muon_rt_chunk_extents_by_reference
// CHECK-SAME: (%{{.*}}: i64, %[[W:.*]]: !llvm.ptr, %[[A0:.*]]: !llvm.ptr, %[[A1:.*]]: !llvm.ptr, %[[A2:.*]]: i64, %[[A3:.*]]: i64, %[[A4:.*]]: i64)
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-COUNT-5: llvm.store
// CHECK: llvm.call @_mlir_ciface_muon_rt_chunk_extents(%{{.*}}, %[[W]], %[[SLOT]])
// CHECK: llvm.func private @muon_rt_chunk_extents(
// CHECK-LABEL: llvm.func @dynamic
// CHECK: %[[WEIGHTS:.*]] = llvm.mlir.addressof @weights_descriptor
// CHECK: llvm.call @muon_rt_chunk_extents_by_reference(%{{.*}}, %[[WEIGHTS]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK: llvm.call @muon_rt_chunk_extents(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
func.func private @muon_rt_chunk_extents(i64, memref<?xi64>, memref<?xi64>) attributes {llvm.emit_c_interface}
memref.global "private" constant @weights : memref<2xi64> = dense<[1, 3]>
func.func @dynamic(%n: i64, %w: memref<?xi64>) {
  %buf = memref.alloca() : memref<2xi64>
  %out = memref.cast %buf : memref<2xi64> to memref<?xi64>
  %g = memref.get_global @weights : memref<2xi64>
  %c = memref.cast %g : memref<2xi64> to memref<?xi64>
  call @muon_rt_chunk_extents(%n, %c, %out) : (i64, memref<?xi64>, memref<?xi64>) -> ()
  // Both tables from the caller: nothing constant, the call as it was.
  call @muon_rt_chunk_extents(%n, %w, %out) : (i64, memref<?xi64>, memref<?xi64>) -> ()
  return
}

// -----

// A wrapper whose address is taken is kept (here written in the LLVM
// dialect: a func.func's address cannot be taken); a function outside the
// runtime's table, though it has a C interface, is left alone.
// CHECK-LABEL: module
// CHECK: llvm.func private @muon_rt_comm(
// CHECK-LABEL: llvm.func @named
// CHECK: llvm.call @muon_rt_comm_by_reference(
// CHECK: llvm.mlir.addressof @muon_rt_comm : !llvm.ptr
// CHECK-LABEL: llvm.func @outside
// CHECK: llvm.call @not_runtime(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
llvm.func @_mlir_ciface_muon_rt_comm(!llvm.ptr, !llvm.ptr) -> i64
llvm.func private @muon_rt_comm(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %a3: i64, %a4: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64, %b3: i64, %b4: i64) -> i64 {
  %c = llvm.mlir.constant(0 : i64) : i64
  llvm.return %c : i64
}
llvm.mlir.global private constant @shape(dense<4> : tensor<1xi64>) : !llvm.array<1 x i64>
llvm.func @named() -> !llvm.ptr {
  %dead = llvm.mlir.constant(3735928559 : i64) : i64
  %allocated = llvm.inttoptr %dead : i64 to !llvm.ptr
  %data = llvm.mlir.addressof @shape : !llvm.ptr
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %c = llvm.call @muon_rt_comm(%allocated, %data, %zero, %one, %one, %allocated, %data, %zero, %one, %one) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> i64
  %f = llvm.mlir.addressof @muon_rt_comm : !llvm.ptr
  llvm.return %f : !llvm.ptr
}
func.func private @not_runtime(memref<?xi64>) attributes {llvm.emit_c_interface}
memref.global "private" constant @other : memref<1xi64> = dense<[4]>
func.func @outside() {
  %s = memref.get_global @other : memref<1xi64>
  %sd = memref.cast %s : memref<1xi64> to memref<?xi64>
  call @not_runtime(%sd) : (memref<?xi64>) -> ()
  return
}

// -----

// A declaration whose type is not the runtime table's (here a scalar in
// place of the table) is not a wrapper this pass knows: its calls stay.
// CHECK-LABEL: llvm.func @mismatch
// CHECK: llvm.call @muon_rt_comm(
// CHECK-NOT: by_reference
func.func private @muon_rt_comm(memref<?xi64>, i64) -> i64 attributes {llvm.emit_c_interface}
memref.global "private" constant @shape : memref<1xi64> = dense<[4]>
func.func @mismatch(%n: i64) -> i64 {
  %s = memref.get_global @shape : memref<1xi64>
  %sd = memref.cast %s : memref<1xi64> to memref<?xi64>
  %c = call @muon_rt_comm(%sd, %n) : (memref<?xi64>, i64) -> i64
  return %c : i64
}
