// A buffer muon-allocate-through-runtime allocates, converted to LLVM: its
// view is the unranked descriptor {rank, slot}, whose two fields calls take
// as they are (nothing extracted again), and nothing of the conversion's
// allocation is left.
// RUN: muon-opt %s --muon-allocate-through-runtime \
// RUN:   --muon-convert-step-to-llvm=use-generic-functions=1 \
// RUN:   --reconcile-unrealized-casts | FileCheck %s

// CHECK-LABEL: llvm.func @viewed
// CHECK-NOT: builtin.unrealized_conversion_cast
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[S:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> : (i64) -> !llvm.ptr
// CHECK-DAG: %[[T:.*]] = llvm.mlir.addressof @__muon_buffer_layout_0 : !llvm.ptr
// CHECK: llvm.call @muon_rt_buffers_alloc(%[[S]], %[[T]], %[[ONE]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: llvm.extractvalue
// CHECK: llvm.call @use(%[[TWO]], %[[S]]) : (i64, !llvm.ptr) -> ()
// CHECK: llvm.call @muon_rt_buffers_free(%[[S]], %[[T]], %[[ONE]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// A second buffer in the same block (the entry: its slot joins the others
// at the top, before the ops of the first buffer's rewrite).
// CHECK: llvm.call @muon_rt_buffers_alloc(%[[S2:.*]], %[[T]], %[[ONE]])
// CHECK: llvm.call @muon_rt_buffers_free(%[[S2]], %[[T]], %[[ONE]])
// CHECK-NOT: _mlir_memref_to_llvm
// CHECK: llvm.return
func.func private @use(memref<*xf32>)
func.func @viewed() {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x6xf32>
  %v = memref.cast %a : memref<4x6xf32> to memref<*xf32>
  call @use(%v) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4x6xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<4x6xf32>
  %w = memref.cast %b : memref<4x6xf32> to memref<*xf32>
  call @use(%w) : (memref<*xf32>) -> ()
  memref.dealloc %b : memref<4x6xf32>
  return
}
