// dist-lower-redistribute picks the collective each change needs: a shard
// undone is an all_gather, a new shard a slice at per-rank offsets (nothing
// moves), an axis moving from one dim to another an all_to_all, a partial reduced an all_reduce (a reduce_scatter when it becomes
// the innermost shard of a dim), replicate <-> reduced nothing, a new
// partial<sum> the value on coordinate 0 and zeros elsewhere; weighted
// storage is gathered with the members' actual lengths. Data: the
// redistribute-*.test runs.
// RUN: muon-opt %s --dist-lower-redistribute | FileCheck %s
// RUN: muon-opt %s --dist-lower-redistribute --dist-verify-spmd -o /dev/null

// CHECK-LABEL: func.func @gather
// CHECK: %[[G:.*]] = dist.all_gather %{{.*}} on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: dist.from_local %[[G]]
// CHECK-LABEL: func.func @slice
// CHECK-NOT: dist.all
// CHECK: %[[R:.*]] = dist.rank @m
// CHECK: %[[T:.*]] = arith.constant dense<[0, 0, 4, 4, 8, 8, 12, 12]> : tensor<8xindex>
// CHECK: %[[O:.*]] = tensor.extract %[[T]][%[[R]]]
// CHECK: tensor.extract_slice %{{.*}}[%[[O]], 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
// CHECK-LABEL: func.func @reduce
// CHECK: dist.all_reduce %{{.*}} on @m axes [dp] reduce sum
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: dist.reduce_scatter %{{.*}} on @m axes [dp] reduce sum dim 0 : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-LABEL: func.func @relabel
// CHECK-NEXT: %[[L:.*]] = dist.to_local
// CHECK-NEXT: dist.from_local %[[L]]
// CHECK-LABEL: func.func @change_dim
// CHECK: dist.all_to_all %{{.*}} on @m axes [dp] split 1 concat 0 : tensor<4x8xf32> -> tensor<16x2xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK-LABEL: func.func @to_partial
// CHECK: %[[C:.*]] = dist.coord @m axes [dp]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[C]], %{{.*}} : index
// The zeros are a generic (outlined into an optimised kernel when lowered).
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<{{.*}}xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield %{{.*}} : f32
// CHECK: arith.select %[[FIRST]], %{{.*}}, %[[Z]]
// CHECK-LABEL: func.func @weighted
// CHECK: %[[W:.*]] = dist.all_gather %{{.*}} on @m axes [dp] dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: tensor.cast %[[W]] : tensor<?x8xf32> to tensor<16x8xf32>
// A chain goes through the local view once: no to_local of a rebuilt value.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: dist.to_local
// CHECK-NOT: dist.to_local
// CHECK: dist.all_gather
// CHECK: tensor.extract_slice
// CHECK-COUNT-1: dist.from_local
// CHECK-NOT: dist.from_local
// A tensor with a zero-size dim has no elements: its new blocks are made
// (tensor.empty), not sliced.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: tensor.extract_slice
// CHECK: tensor.empty() : tensor<0x3xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return

dist.mesh @m [dp = 4, tp = 2]
!s0 = !dist.tensor<16x8xf32, @m, [shard<0>, replicate]>
!r = !dist.tensor<16x8xf32, @m, [replicate, replicate]>
!d = !dist.tensor<16x8xf32, @m, [reduced, replicate]>
!p = !dist.tensor<16x8xf32, @m, [partial<sum>, replicate]>
!s1 = !dist.tensor<16x8xf32, @m, [shard<1>, replicate]>
!fsdp = !dist.tensor<16x8xf32, @m, [replicate, replicate], storage = dim<0 on dp weights [1, 1, 1, 5]>>
func.func @gather(%x: !s0) -> !r {
  %y = dist.redistribute %x : !s0 -> !r
  return %y : !r
}
func.func @slice(%x: !r) -> !s0 {
  %y = dist.redistribute %x : !r -> !s0
  return %y : !s0
}
func.func @reduce(%x: !p) -> !d {
  %y = dist.redistribute %x : !p -> !d
  return %y : !d
}
func.func @reduce_scatter(%x: !p) -> !s0 {
  %y = dist.redistribute %x : !p -> !s0
  return %y : !s0
}
func.func @relabel(%x: !r) -> !d {
  %y = dist.redistribute %x : !r -> !d
  return %y : !d
}
func.func @change_dim(%x: !s0) -> !s1 {
  %y = dist.redistribute %x : !s0 -> !s1
  return %y : !s1
}
func.func @to_partial(%x: !r) -> !p {
  %y = dist.redistribute %x : !r -> !p
  return %y : !p
}
func.func @weighted(%x: !fsdp) -> !s0 {
  %y = dist.redistribute %x : !fsdp -> !s0
  return %y : !s0
}
func.func @chain(%x: !s0) -> !s0 {
  %y = dist.redistribute %x : !s0 -> !r
  %z = dist.redistribute %y : !r -> !s0
  return %z : !s0
}
!e0 = !dist.tensor<0x6xf32, @m, [shard<0>, replicate]>
!e1 = !dist.tensor<0x6xf32, @m, [replicate, shard<1>]>
func.func @empty(%x: !e0) -> !e1 {
  %y = dist.redistribute %x : !e0 -> !e1
  return %y : !e1
}

// A rank-0 tensor in a flat group is one element: reshaped to 1-D before
// its element range is taken, and back to rank 0 after the range is
// gathered (member 0 of numel [1, 7], so rank 0 holds the element).
// CHECK-LABEL: func.func @scalar_into_flat
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: tensor.extract_slice %[[V]][0] [%{{.*}}] [1] : tensor<1xf32> to tensor<?xf32>
// CHECK-LABEL: func.func @scalar_out_of_flat
// CHECK: %[[G:.*]] = dist.all_gather %{{.*}} on @m axes [dp] dim 0 : tensor<?xf32> -> tensor<?xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[G]] : tensor<?xf32> to tensor<1xf32>
// CHECK: tensor.collapse_shape %[[C]] [] : tensor<1xf32> into tensor<f32>
dist.flat_group @scalars on @m[dp] numel [1, 7]
!sr = !dist.tensor<f32, @m, [replicate, replicate]>
!sf = !dist.tensor<f32, @m, [replicate, replicate], storage = flat<@scalars, 0>>
func.func @scalar_into_flat(%x: !sr) -> !sf {
  %y = dist.redistribute %x : !sr -> !sf
  return %y : !sf
}
func.func @scalar_out_of_flat(%x: !sf) -> !sr {
  %y = dist.redistribute %x : !sf -> !sr
  return %y : !sr
}
