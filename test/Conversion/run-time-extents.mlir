// Collectives whose members' lengths are found at run time (no `sizes`, a
// split length that depends on the rank) fill one stack table per
// communicator size at the top of the function: each fills it, reads it
// and hands it to its runtime call, which copies it, before the next fills
// it. A batch therefore adds each item (muon_rt_batch_item) right after
// filling the table for it.

// RUN: muon-opt %s --split-input-file --convert-dist-to-runtime | FileCheck %s
// A step with such collectives keeps muon-place-deallocations' frees (no
// upstream dealloc_helper: the table is nothing to track).
// RUN: muon-opt %S/Inputs/expert-run-time-extents.mlir --muon-assign-owners --muon-to-llvm --mlir-print-ir-after=muon-place-deallocations -o /dev/null 2>&1 | FileCheck %s --check-prefix=FREES
// FREES: IR Dump After MuonPlaceDeallocations
// FREES-NOT: dealloc_helper
// FREES: call @muon_rt_member_dims(
// FREES-NOT: dealloc_helper
// FREES: memref.dealloc
// FREES-NOT: dealloc_helper

dist.mesh @m [dp = 2, tp = 2]

// CHECK-LABEL: func.func @batch(
// CHECK:         %[[TABLE:.*]] = memref.alloca() : memref<2xi64>
// CHECK-NOT:     memref.alloca
// CHECK:         %[[B:.*]] = call @muon_rt_batch_begin(
// CHECK:         %[[T0:.*]] = memref.cast %[[TABLE]] : memref<2xi64> to memref<?xi64>
// CHECK:         call @muon_rt_member_dims({{.*}}, %[[T0]])
// CHECK:         call @muon_rt_batch_item(%[[B]], {{.*}}, %[[T0]])
// CHECK:         %[[T1:.*]] = memref.cast %[[TABLE]] : memref<2xi64> to memref<?xi64>
// CHECK:         call @muon_rt_member_dims({{.*}}, %[[T1]])
// CHECK:         call @muon_rt_batch_item(%[[B]], {{.*}}, %[[T1]])
// CHECK:         call @muon_rt_batch_end(%[[B]]
func.func @batch(%x: tensor<?x4xf32>, %y: tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>) {
  %r:2 = dist.gather_batch %x, %y on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<?x4xf32>, tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>)
  return %r#0, %r#1 : tensor<?x4xf32>, tensor<?x8xf32>
}

// -----

// A static split, or one with `sizes`, has a constant table and no slot.
// CHECK-LABEL: func.func @static(
// CHECK-NOT:     memref.alloca
// CHECK:         return
dist.mesh @m [dp = 2]
func.func @static(%x: tensor<2x4xf32>, %y: tensor<?x4xf32>) -> (tensor<4x4xf32>, tensor<3x4xf32>) {
  %a = dist.all_gather %x on @m axes [dp] dim 0 : tensor<2x4xf32> -> tensor<4x4xf32>
  %b = dist.gather %y on @m axes [dp] dim 0 root 0 sizes [1, 2] : tensor<?x4xf32> -> tensor<3x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<3x4xf32>
}

// -----

// The same over a communicator of 2^17 members: a static split needs no
// run-time table, so the 2^16-member bound on those does not apply.
// CHECK-LABEL: func.func @static_large(
// CHECK-NOT:     memref.alloca
// CHECK:         call @muon_rt_all_gather(
dist.mesh @m [dp = 131072]
func.func @static_large(%x: tensor<1x8xf32>) -> tensor<131072x8xf32> {
  %a = dist.all_gather %x on @m axes [dp] dim 0 : tensor<1x8xf32> -> tensor<131072x8xf32>
  return %a : tensor<131072x8xf32>
}
