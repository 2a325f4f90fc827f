// convert-shard-to-dist: MLIR shard annotations imported as dist layouts.
// RUN: muon-opt %s --split-input-file --convert-shard-to-dist --mlir-print-local-scope | FileCheck %s

// Grid axes are named a0, a1, ... without dist.axis_names. split_axes[d]
// lists the axes that shard dim d, the first the outer split: mesh-axis
// order needs no `order`, the other one writes it.
// CHECK: dist.mesh @g [a0 = 2, a1 = 3]
// CHECK-NOT: shard.
// CHECK-LABEL: func.func @placements
// CHECK-SAME: %{{.*}}: !dist.tensor<12x6xf32, @g, [shard<0>, replicate]>
// CHECK-SAME: %{{.*}}: !dist.tensor<12x6xf32, @g, [replicate, shard<1>]>
// CHECK-SAME: %{{.*}}: !dist.tensor<12x6xf32, @g, [shard<0>, shard<0>]>
// CHECK-SAME: %{{.*}}: !dist.tensor<12x6xf32, @g, [shard<0>, shard<0>], order = {0 = [a1, a0]}>
// CHECK-SAME: %{{.*}}: !dist.tensor<12x6xf32, @g, [shard<1>, shard<0>]>
// CHECK-SAME: %{{.*}}: !dist.tensor<12x6xf32, @g, [replicate, replicate]>
// CHECK-SAME: %{{.*}}: tensor<12x6xf32>)
shard.grid @g(shape = 2x3)
func.func @placements(%a: tensor<12x6xf32>, %b: tensor<12x6xf32>,
                      %c: tensor<12x6xf32>, %d: tensor<12x6xf32>,
                      %e: tensor<12x6xf32>, %f: tensor<12x6xf32>,
                      %unannotated: tensor<12x6xf32>) {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[], [1]] : !shard.sharding
  %s2 = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %s3 = shard.sharding @g split_axes = [[1, 0]] : !shard.sharding
  %s4 = shard.sharding @g split_axes = [[1], [0]] : !shard.sharding
  %s5 = shard.sharding @g split_axes = [[]] : !shard.sharding
  %0 = shard.shard %a to %s0 : tensor<12x6xf32>
  %1 = shard.shard %b to %s1 : tensor<12x6xf32>
  %2 = shard.shard %c to %s2 : tensor<12x6xf32>
  %3 = shard.shard %d to %s3 : tensor<12x6xf32>
  %4 = shard.shard %e to %s4 : tensor<12x6xf32>
  %5 = shard.shard %f to %s5 : tensor<12x6xf32>
  return
}

// -----

// dist.axis_names names the mesh axes. Uneven splits import through
// sharded_dims_offsets equal to the chunk rule's, nested splits outer
// first (3 rows: dp halves of 2 and 1, then 1 + 1 and 1 + 0 over tp, an
// empty shard; 10 rows: dp halves of 5, each 3 + 2); only split dims have
// offsets.
// CHECK: dist.mesh @g [dp = 2, tp = 2]
// CHECK-LABEL: func.func @uneven
// CHECK-SAME: !dist.tensor<10x6xf32, @g, [replicate, shard<0>]>
// CHECK-SAME: !dist.tensor<6x3xf32, @g, [shard<1>, shard<1>]>
// CHECK-SAME: !dist.tensor<10x7xf32, @g, [shard<0>, shard<0>]>
// CHECK-SAME: !dist.tensor<10x8xf32, @g, [shard<0>, shard<0>]>
shard.grid @g(shape = 2x2) {dist.axis_names = ["dp", "tp"]}
func.func @uneven(%a: tensor<10x6xf32>, %b: tensor<6x3xf32>,
                  %c: tensor<10x7xf32>, %d: tensor<10x8xf32>) {
  %s0 = shard.sharding @g split_axes = [[1]] sharded_dims_offsets = [0, 5, 10] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[], [0, 1]] sharded_dims_offsets = [0, 1, 2, 3, 3] : !shard.sharding
  %s2 = shard.sharding @g split_axes = [[0, 1]] sharded_dims_offsets = [0, 3, 5, 8, 10] : !shard.sharding
  // Even splits need no offsets; equal ones are accepted.
  %s3 = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %0 = shard.shard %a to %s0 : tensor<10x6xf32>
  %1 = shard.shard %b to %s1 : tensor<6x3xf32>
  %2 = shard.shard %c to %s2 : tensor<10x7xf32>
  %3 = shard.shard %d to %s2 : tensor<10x8xf32>
  return
}

// -----

// Over three axes of 2 the offsets are the product's 8 + 1, which MLIR's
// shard.sharding verifier takes (it reads sum + 1 = 7 and allows more):
// 10 rows, halves of 5, each 3 + 2, each of those split 2 + 1 or 1 + 1.
// CHECK-LABEL: func.func @three_axes
// CHECK-SAME: !dist.tensor<10x8xf32, @g3, [shard<0>, shard<0>, shard<0>]>
shard.grid @g3(shape = 2x2x2)
func.func @three_axes(%x: tensor<10x8xf32>) {
  %s = shard.sharding @g3 split_axes = [[0, 1, 2]] sharded_dims_offsets = [0, 2, 3, 4, 5, 7, 8, 9, 10] : !shard.sharding
  %0 = shard.shard %x to %s : tensor<10x8xf32>
  return
}

// -----

// An argument annotated only for its users takes that sharding. An
// annotate_for_users annotation asking for another layout than the
// value's becomes dist.redistribute; one asking for the same is nothing.
// The function returns the imported values.
// CHECK-LABEL: func.func @for_users
// CHECK-SAME: (%[[A:.*]]: !dist.tensor<8x8xf32, @g, [shard<1>, replicate]>, %[[B:.*]]: !dist.tensor<8x8xf32, @g, [shard<0>, replicate]>)
// CHECK-SAME: -> (!dist.tensor<8x8xf32, @g, [shard<1>, replicate]>, !dist.tensor<8x8xf32, @g, [replicate, shard<0>]>, !dist.tensor<8x8xf32, @g, [shard<0>, replicate]>)
// CHECK: %[[R:.*]] = dist.redistribute %[[B]] : !dist.tensor<8x8xf32, @g, [shard<0>, replicate]> -> !dist.tensor<8x8xf32, @g, [replicate, shard<0>]>
// CHECK-NEXT: return %[[A]], %[[R]], %[[B]]
shard.grid @g(shape = 2x2)
func.func @for_users(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %s0 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s2 = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %0 = shard.shard %a to %s0 annotate_for_users : tensor<8x8xf32>
  %1 = shard.shard %b to %s1 : tensor<8x8xf32>
  %2 = shard.shard %1 to %s2 annotate_for_users : tensor<8x8xf32>
  %3 = shard.shard %1 to %s1 annotate_for_users : tensor<8x8xf32>
  return %0, %2, %3 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A global-view muon.step is rebuilt on the imported values; its results
// keep the parameters' layouts, and a result annotated with its own layout
// or redistributed for its users is returned as such.
// CHECK-LABEL: func.func @step
// CHECK-SAME: -> (!dist.tensor<8x4xf32, @g, [shard<0>]>, !dist.tensor<8x4xf32, @g, [replicate]>, !dist.tensor<8x4xf32, @g, [shard<0>]>)
// CHECK: %[[NEW:.*]], %[[MOM:.*]] = muon.step params(%arg0 : !dist.tensor<8x4xf32, @g, [shard<0>]>) grads(%arg1 : !dist.tensor<8x4xf32, @g, [shard<0>]>) momenta(%arg2 : !dist.tensor<8x4xf32, @g, [shard<0>]>) lr(%arg3) {momentum = 9.000000e-01 : f64}
// CHECK: %[[FULL:.*]] = dist.redistribute %[[NEW]] : {{.*}} -> !dist.tensor<8x4xf32, @g, [replicate]>
// CHECK: return %[[NEW]], %[[FULL]], %[[MOM]]
shard.grid @g(shape = 2)
func.func @step(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %m: tensor<8x4xf32>, %lr: f64)
    -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<8x4xf32>
  %g1 = shard.shard %g to %s : tensor<8x4xf32>
  %m1 = shard.shard %m to %s : tensor<8x4xf32>
  %new:2 = muon.step params(%p1 : tensor<8x4xf32>) grads(%g1 : tensor<8x4xf32>)
                     momenta(%m1 : tensor<8x4xf32>) lr(%lr) {momentum = 0.9 : f64}
  %own = shard.shard %new#0 to %s : tensor<8x4xf32>
  %full = shard.shard %new#0 to %r annotate_for_users : tensor<8x4xf32>
  return %own, %full, %new#1 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Without shard ops or global-view steps the module is unchanged.
// CHECK-LABEL: func.func @no_shard
// CHECK-SAME: (%arg0: !dist.tensor<8x4xf32, @m, [shard<0>]>) -> !dist.tensor<8x4xf32, @m, [shard<0>]>
dist.mesh @m [dp = 2]
func.func @no_shard(%x: !dist.tensor<8x4xf32, @m, [shard<0>]>) -> !dist.tensor<8x4xf32, @m, [shard<0>]> {
  return %x : !dist.tensor<8x4xf32, @m, [shard<0>]>
}
