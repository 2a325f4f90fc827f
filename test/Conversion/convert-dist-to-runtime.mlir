// convert-dist-to-runtime after muon-expand-step: the boundary becomes the
// local shards, each checked against every rank's expected shape before
// anything else (one table per argument type); communicators are created up front, in one order; rooted
// collectives become runtime calls with the resolved extents.

// RUN: muon-opt %s --muon-expand-step --convert-muon-to-linalg --convert-muon-to-runtime --convert-dist-to-runtime | FileCheck %s
// With prefetch the rooted calls are asynchronous (last argument 1): the
// request travels out of the participation scf.if as an i64 (0 on the
// ranks that skip the call) and is waited on before the result is read.
// RUN: sed 's/prefetch_count = 0/prefetch_count = 1/' %s | muon-opt --muon-expand-step --convert-muon-to-linalg --convert-muon-to-runtime --convert-dist-to-runtime | FileCheck %s --check-prefix=ASYNC
// ASYNC: %[[IF:.*]]:2 = scf.if %{{.*}} -> (tensor<8x4xf32>, i64) {
// ASYNC: %[[REQ:.*]] = func.call @muon_rt_gather({{.*}}, %c1_i64{{[_0-9]*}}) : (i64, memref<*xf32>, memref<*xf32>, i64, i64, memref<?xi64>, i64) -> i64
// ASYNC: scf.yield %{{.*}}, %[[REQ]] : tensor<8x4xf32>, i64
// ASYNC: scf.yield %{{.*}}, %c0_i64{{[_0-9]*}} : tensor<8x4xf32>, i64
// ASYNC: call @muon_rt_wait(%[[IF]]#1) : (i64) -> ()
// ASYNC: func.call @muon_rt_scatter({{.*}}, %c1_i64{{[_0-9]*}})
// ASYNC: call @muon_rt_wait

dist.mesh @m [dp = 2, tp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>, replicate]>

// CHECK-NOT: dist.mesh
// One run of ranks (from rank 0) holding 4x4, on a mesh of 4 ranks:
// CHECK-DAG: memref.global "private" constant @[[SHAPES:.*]] : memref<6xi64> = dense<[-1, 4, 2, 0, 4, 4]>
// CHECK-DAG: memref.global "private" constant @[[MESH:.*]] : memref<2xi64> = dense<2>
// CHECK-DAG: memref.global "private" constant @[[DP:.*]] : memref<1xi64> = dense<0>
// CHECK-DAG: memref.global "private" constant @[[TP:.*]] : memref<1xi64> = dense<1>
// CHECK-DAG: memref.global "private" constant @[[EXT:.*]] : memref<2xi64> = dense<4>
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<4xi64> = dense<[2, 4, 6, 4]>
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[P:.*]]: tensor<4x4xf32>, %[[G:.*]]: tensor<4x4xf32>, %[[M:.*]]: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {llvm.emit_c_interface}
// CHECK: memref.get_global @[[SHAPES]]
// CHECK: bufferization.to_buffer %[[P]] read_only
// CHECK: call @muon_rt_check_arg
// CHECK: call @muon_rt_check_arg
// CHECK: call @muon_rt_check_arg
// CHECK: memref.get_global @[[MESH]]
// CHECK: memref.get_global @[[DP]]
// CHECK: %[[DPCOMM:.*]] = call @muon_rt_comm(
// CHECK: memref.get_global @[[TP]]
// CHECK: %[[TPCOMM:.*]] = call @muon_rt_comm(
// CHECK: call @muon_rt_comm_rank(%[[DPCOMM]])
// CHECK: call @muon_rt_comm_rank(%[[TPCOMM]])
// CHECK: scf.if
// CHECK: memref.get_global @[[EXT]]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<8x4xf32>
// CHECK: func.call @muon_rt_gather(%[[DPCOMM]], %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %c1_i64{{.*}}, %{{.*}}, %c0_i64{{.*}})
// CHECK: bufferization.to_tensor %{{.*}} restrict writable : memref<8x4xf32> to tensor<8x4xf32>
// CHECK: func.call @muon_rt_newton_schulz
// CHECK: func.call @muon_rt_scatter(%[[DPCOMM]],
// CHECK: call @muon_rt_broadcast(%[[TPCOMM]],
// CHECK: return %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 2>,
       prefetch_count = 0}
  return %r#0, %r#1 : !t, !t
}

// Rank queries, and the extents of a weighted split (rows 2, 4, 6, 4 of 16).
dist.mesh @w [dp = 4]
// CHECK-LABEL: func.func @queries
// CHECK: %[[C:.*]] = call @muon_rt_comm(
// CHECK: call @muon_rt_world_rank() : () -> i64
// CHECK: call @muon_rt_comm_rank(%[[C]])
// CHECK: %[[IDX:.*]] = call @muon_rt_comm_rank(%[[C]])
// CHECK: %[[I:.*]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK: %[[E:.*]] = memref.load %{{.*}}[%[[I]]] : memref<?xi64>
// CHECK: %[[N:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK: memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK: call @muon_rt_scatter
func.func @queries(%x: tensor<16x8xf32>) -> (index, index, tensor<?x8xf32>) {
  %r = dist.rank @w
  %c = dist.coord @w axes [dp]
  %s = dist.scatter %x on @w axes [dp] dim 0 root 0 weights [1, 2, 3, 2] : tensor<16x8xf32> -> tensor<?x8xf32>
  return %r, %c, %s : index, index, tensor<?x8xf32>
}

