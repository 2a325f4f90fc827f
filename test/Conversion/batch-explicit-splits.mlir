// A batch item with explicit sizes (a flat piece) or weights (a weighted
// storage split) lowers as the single op would: its constant extent table
// (the sizes, or the weighted chunks of the full length: 8 rows by 1:3
// are 2 and 6), then muon_rt_batch_item with it; a chunk-rule item beside
// them gets the even table. One exchange for the three.

// RUN: muon-opt %s --convert-dist-to-runtime | FileCheck %s

// CHECK-DAG: memref.global "private" constant @[[SIZES:.*]] : memref<2xi64> = dense<[10, 2]>
// CHECK-DAG: memref.global "private" constant @[[WEIGHTED:.*]] : memref<2xi64> = dense<[2, 6]>
// CHECK-DAG: memref.global "private" constant @[[EVEN:.*]] : memref<2xi64> = dense<4>
// CHECK-LABEL: func.func @f
// CHECK: %[[B:.*]] = call @muon_rt_batch_begin
// CHECK: memref.get_global @[[SIZES]]
// CHECK: call @muon_rt_batch_item(%[[B]],
// CHECK: memref.get_global @[[WEIGHTED]]
// CHECK: call @muon_rt_batch_item(%[[B]],
// CHECK: memref.get_global @[[EVEN]]
// CHECK: call @muon_rt_batch_item(%[[B]],
// CHECK: call @muon_rt_batch_end(%[[B]],
// CHECK-NOT: call @muon_rt_batch_end

dist.mesh @m [dp = 2]
func.func @f(%piece: tensor<?xf32>, %rows: tensor<?x4xf32>, %x: tensor<4x4xf32>) -> (tensor<12xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %r:3 = dist.gather_batch %piece, %rows, %x on @m axes [dp] dims [0, 0, 0] roots [0, 1, 1] sizes [array<i64: 10, 2>, array<i64>, array<i64>] weights [array<i64>, array<i64: 1, 3>, array<i64>] : (tensor<?xf32>, tensor<?x4xf32>, tensor<4x4xf32>) -> (tensor<12xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  return %r#0, %r#1, %r#2 : tensor<12xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// A scatter item with sizes: its dynamic result is sized from the constant
// table at the member's index, with no exchange at run time (no
// muon_rt_root_dim, no muon_rt_member_dims).
// CHECK-LABEL: func.func @scatter
// CHECK: %[[B:.*]] = call @muon_rt_batch_begin
// CHECK: %[[T:.*]] = memref.get_global @[[SIZES]]
// CHECK: %[[R:.*]] = call @muon_rt_comm_rank
// CHECK: memref.load
// CHECK: memref.alloc
// CHECK-NOT: muon_rt_root_dim
// CHECK-NOT: muon_rt_member_dims
// CHECK: call @muon_rt_batch_item(%[[B]],
// CHECK: call @muon_rt_batch_end(%[[B]],
func.func @scatter(%full: tensor<12xf32>) -> tensor<?xf32> {
  %r = dist.scatter_batch %full on @m axes [dp] dims [0] roots [0] sizes [array<i64: 10, 2>] : (tensor<12xf32>) -> (tensor<?xf32>)
  return %r : tensor<?xf32>
}
