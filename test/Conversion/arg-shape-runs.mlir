// convert-dist-to-runtime gives muon_rt_check_arg every rank's expected local
// shape as runs of ranks with one shape (muon_runtime.h):
//   [-1, ranks, dims, then per run: its first rank, the shape]
// so the table grows with the places where shards differ, not with the mesh.
// One table per argument type; arguments of one type share it.
// RUN: muon-opt %s --convert-dist-to-runtime | FileCheck %s

dist.mesh @m [dp = 4]
dist.mesh @m2 [dp = 2, tp = 2]
dist.mesh @big [dp = 65536, tp = 8]

// 10 rows over 4 ranks: 3, 3, 3, 1.
// CHECK-DAG: memref.global "private" constant @[[UNEVEN:.*]] : memref<9xi64> = dense<[-1, 4, 2, 0, 3, 4, 3, 1, 4]>
!uneven = !dist.tensor<10x4xf32, @m, [shard<0>]>
// Split over the inner axis: 2 rows on tp = 0, 1 on tp = 1, so the shape
// changes at every rank.
// CHECK-DAG: memref.global "private" constant @[[INNER:.*]] : memref<15xi64> = dense<[-1, 4, 2, 0, 2, 4, 1, 1, 4, 2, 2, 4, 3, 1, 4]>
!inner = !dist.tensor<3x4xf32, @m2, [replicate, shard<0>]>
// 524,288 ranks: dp coordinates below 8192 hold a row (ranks below 65,536),
// the others none. Two runs.
// CHECK-DAG: memref.global "private" constant @[[BIG:.*]] : memref<9xi64> = dense<[-1, 524288, 2, 0, 1, 16, 65536, 0, 16]>
!bigt = !dist.tensor<8192x16xf32, @big, [shard<0>, replicate]>
// Flat storage: the local shard is 1-D (dims 1), member 1's 24 elements
// all on dp = 1 (ranks 2 and 3), none on dp = 0.
// CHECK-DAG: memref.global "private" constant @[[FLAT:.*]] : memref<7xi64> = dense<[-1, 4, 1, 0, 0, 2, 24]>
dist.flat_group @g on @m2[dp] numel [96, 24]
!flat = !dist.tensor<6x4xf32, @m2, [reduced, replicate], storage = flat<@g, 1>>

// CHECK-LABEL: func.func @f(
// CHECK: %[[T0:.*]] = memref.get_global @[[UNEVEN]]
// CHECK: %[[U:.*]] = memref.cast %[[T0]]
// CHECK: call @muon_rt_check_arg(%{{.*}}, %{{.*}}, %[[U]])
// CHECK: memref.get_global @[[INNER]]
// CHECK: call @muon_rt_check_arg
// CHECK: memref.get_global @[[BIG]]
// CHECK: call @muon_rt_check_arg
// CHECK-NOT: memref.get_global
// CHECK: call @muon_rt_check_arg(%{{.*}}, %{{.*}}, %[[U]])
// CHECK: memref.get_global @[[FLAT]]
func.func @f(%a: !uneven, %b: !inner, %c: !bigt, %d: !uneven, %e: !flat)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x16xf32>, tensor<?x4xf32>,
        tensor<?xf32>) {
  %la = dist.to_local %a : !uneven -> tensor<?x4xf32>
  %lb = dist.to_local %b : !inner -> tensor<?x4xf32>
  %lc = dist.to_local %c : !bigt -> tensor<?x16xf32>
  %ld = dist.to_local %d : !uneven -> tensor<?x4xf32>
  %le = dist.to_local %e : !flat -> tensor<?xf32>
  return %la, %lb, %lc, %ld, %le
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x16xf32>, tensor<?x4xf32>,
        tensor<?xf32>
}
