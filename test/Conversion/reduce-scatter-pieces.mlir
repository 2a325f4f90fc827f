// RUN: muon-opt %s --convert-dist-to-runtime | FileCheck %s

// A reduce-scatter into weighted or explicitly sized pieces (how the step
// reduces a partial gradient into weighted or flat storage): the extents
// are a constant table, the weighted chunk rule evaluated at compile time.
dist.mesh @w [dp = 4]
// CHECK-DAG: memref.global "private" constant @[[SIZES:.*]] : memref<4xi64> = dense<[0, 100, 28, 0]>
// CHECK-DAG: memref.global "private" constant @[[WEIGHTED:.*]] : memref<4xi64> = dense<[2, 4, 6, 4]>
// CHECK-LABEL: func.func @reduce_into_pieces
// CHECK: %[[W:.*]] = memref.get_global @[[WEIGHTED]]
// CHECK: %[[WT:.*]] = memref.cast %[[W]]
// CHECK: call @muon_rt_reduce_scatter(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[WT]], %{{.*}})
// CHECK: %[[S:.*]] = memref.get_global @[[SIZES]]
// CHECK: %[[ST:.*]] = memref.cast %[[S]]
// CHECK: call @muon_rt_reduce_scatter(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ST]], %{{.*}})
func.func @reduce_into_pieces(%g: tensor<16x8xf32>, %f: tensor<128xf32>) -> (tensor<?x8xf32>, tensor<?xf32>) {
  %s = dist.reduce_scatter %g on @w axes [dp] reduce sum dim 0 weights [1, 2, 3, 2] : tensor<16x8xf32> -> tensor<?x8xf32>
  %t = dist.reduce_scatter %f on @w axes [dp] reduce avg dim 0 sizes [0, 100, 28, 0] : tensor<128xf32> -> tensor<?xf32>
  return %s, %t : tensor<?x8xf32>, tensor<?xf32>
}
