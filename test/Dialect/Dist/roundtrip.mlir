// Printed with type aliases (the default) and read back; checked without
// them (--mlir-print-local-scope spells every type out).
// RUN: muon-opt %s --mlir-print-local-scope | FileCheck %s
// RUN: muon-opt %s | muon-opt --mlir-print-local-scope | FileCheck %s
// RUN: muon-opt -mlir-print-op-generic %s | muon-opt --mlir-print-local-scope | FileCheck %s
// RUN: muon-opt -emit-bytecode %s | muon-opt --mlir-print-local-scope | FileCheck %s

// Every op, attribute and type of the dist dialect, printed back as parsed.

// CHECK: dist.mesh @m [dp = 4, tp = 2]
dist.mesh @m [dp = 4, tp = 2]
// CHECK: dist.mesh @pod [x = 2, y = 2] devices = [0, 2, 1, 3]
dist.mesh @pod [x = 2, y = 2] devices = [0, 2, 1, 3]
// CHECK: dist.mesh @quoted ["data parallel" = 2]
dist.mesh @quoted ["data parallel" = 2]
// CHECK: dist.flat_group @g on @m[dp] numel [16, 8, 6, 4]
dist.flat_group @g on @m[dp] numel [16, 8, 6, 4]
// CHECK: dist.flat_group @gw on @m[dp] numel [128, 128] weights [1, 2, 1, 1]
dist.flat_group @gw on @m[dp] numel [128, 128] weights [1, 2, 1, 1]

// CHECK-LABEL: func.func @types
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [shard<0>, shard<1>]>
// CHECK-SAME: !dist.tensor<16x8xbf16, @m, [replicate, partial<sum>]>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [partial<max>, partial<max>]>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [partial<min>, reduced]>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, dp]}>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [replicate, shard<1>], storage = dim<0 on dp>>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = dim<0 on dp weights [1, 2, 1, 1]>>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [replicate, replicate], storage = block<0 on dp, 1 on tp>>
// CHECK-SAME: !dist.tensor<4x4xf32, @m, [replicate, replicate], storage = flat<@g, 0>>
// CHECK-SAME: !dist.tensor<16x8xf32, @m, [replicate, shard<0>], storage = whole<on dp owner 3>>
// CHECK-SAME: !dist.tensor<f32, @quoted, [replicate]>
// CHECK-SAME: !dist.token
func.func @types(
    %a: !dist.tensor<16x8xf32, @m, [shard<0>, shard<1>]>,
    %b: !dist.tensor<16x8xbf16, @m, [replicate, partial]>,
    %c: !dist.tensor<16x8xf32, @m, [partial<max>, partial<max>]>,
    %d: !dist.tensor<16x8xf32, @m, [partial<min>, reduced]>,
    %e: !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, dp]}>,
    %f: !dist.tensor<16x8xf32, @m, [replicate, shard<1>], storage = dim<0 on dp>>,
    %g: !dist.tensor<16x8xf32, @m, [reduced, replicate], storage = dim<0 on dp weights [1, 2, 1, 1]>>,
    %h: !dist.tensor<16x8xf32, @m, [replicate, replicate], storage = block<0 on dp, 1 on tp>>,
    %i: !dist.tensor<4x4xf32, @m, [replicate, replicate], storage = flat<@g, 0>>,
    %j: !dist.tensor<16x8xf32, @m, [replicate, shard<0>], storage = whole<on dp owner 3>>,
    %k: !dist.tensor<f32, @quoted, [replicate]>,
    %t: !dist.token) {
  return
}

// CHECK-LABEL: func.func @attributes
// Attributes print sorted by name.
// CHECK-SAME: dist.l = #dist.layout<@m, [shard<0>, shard<0>], order = {0 = [tp, dp]}, storage = whole<on dp owner 0>>
// CHECK-SAME: dist.o = #dist.shard_order<0 = ["tp", "dp"]>
// CHECK-SAME: dist.p = #dist.placement<shard<1>>
// CHECK-SAME: dist.r = #dist.placement<reduced>
// CHECK-SAME: dist.red = #dist.reduce<max>
// CHECK-SAME: dist.s = #dist.storage<block<0 on dp weights [1, 1, 1, 5], 1 on tp>>
func.func @attributes() attributes {
    dist.p = #dist.placement<shard<1>>,
    dist.r = #dist.placement<reduced>,
    dist.s = #dist.storage<block<0 on dp weights [1, 1, 1, 5], 1 on tp>>,
    dist.l = #dist.layout<@m, [shard<0>, shard<0>], order = {0 = [tp, dp]}, storage = whole<on dp owner 0>>,
    dist.o = #dist.shard_order<0 = ["tp", "dp"]>,
    dist.red = #dist.reduce<max>} {
  return
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<4x8xf32>, %full: tensor<16x8xf32>,
                       %u: tensor<?x8xf32>) {
  // CHECK: dist.all_gather %{{.*}} on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  %0 = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  // CHECK: dist.all_gather %{{.*}} on @m axes [dp, tp] dim 1 : tensor<4x8xf32> -> tensor<4x64xf32>
  %1 = dist.all_gather %x on @m axes [dp, tp] dim 1 : tensor<4x8xf32> -> tensor<4x64xf32>
  // Uneven shards gather from a dynamic size.
  // CHECK: dist.all_gather %{{.*}} on @m axes [dp] dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  %2 = dist.all_gather %u on @m axes [dp] dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  // CHECK: dist.all_gather %{{.*}} on @m axes [dp] dim 0 reduced : tensor<4x8xf32> -> tensor<16x8xf32>
  %gr = dist.all_gather %x on @m axes [dp] dim 0 reduced : tensor<4x8xf32> -> tensor<16x8xf32>
  // CHECK: dist.reduce_scatter %{{.*}} on @m axes [dp] reduce sum dim 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  %3 = dist.reduce_scatter %full on @m axes [dp] reduce sum dim 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.reduce_scatter %{{.*}} on @m axes [tp] reduce avg dim 1 : tensor<16x8xf32> -> tensor<16x4xf32>
  %4 = dist.reduce_scatter %full on @m axes [tp] reduce avg dim 1 : tensor<16x8xf32> -> tensor<16x4xf32>
  // CHECK: dist.reduce_scatter %{{.*}} on @m axes [dp] reduce sum dim 0 weights [1, 1, 1, 5] : tensor<16x8xf32> -> tensor<?x8xf32>
  %rw = dist.reduce_scatter %full on @m axes [dp] reduce sum dim 0 weights [1, 1, 1, 5] : tensor<16x8xf32> -> tensor<?x8xf32>
  // Equal weights give every rank the same piece: a static size may say so.
  // CHECK: dist.reduce_scatter %{{.*}} on @m axes [dp] reduce sum dim 0 weights [2, 2, 2, 2] : tensor<16x8xf32> -> tensor<4x8xf32>
  %rq = dist.reduce_scatter %full on @m axes [dp] reduce sum dim 0 weights [2, 2, 2, 2] : tensor<16x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.reduce_scatter %{{.*}} on @m axes [dp] reduce sum dim 0 sizes [16, 0, 0, 0] : tensor<16x8xf32> -> tensor<?x8xf32>
  %rs = dist.reduce_scatter %full on @m axes [dp] reduce sum dim 0 sizes [16, 0, 0, 0] : tensor<16x8xf32> -> tensor<?x8xf32>
  // CHECK: dist.all_reduce %{{.*}} on @m axes [tp] reduce max : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = dist.all_reduce %x on @m axes [tp] reduce max : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.broadcast %{{.*}} on @m axes [dp] root 3 : tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = dist.broadcast %x on @m axes [dp] root 3 : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.gather %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<16x8xf32>
  %7 = dist.gather %x on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<16x8xf32>
  // CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 1 : tensor<16x8xf32> -> tensor<4x8xf32>
  %8 = dist.scatter %full on @m axes [dp] dim 0 root 1 : tensor<16x8xf32> -> tensor<4x8xf32>
  // CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 0 : tensor<16x8xf32> -> tensor<?x8xf32>
  %9 = dist.scatter %full on @m axes [dp] dim 0 root 0 : tensor<16x8xf32> -> tensor<?x8xf32>
  // CHECK: dist.gather %{{.*}} on @m axes [dp] dim 0 root 0 sizes [9, 7, 0, 0] : tensor<?x8xf32> -> tensor<16x8xf32>
  %11 = dist.gather %u on @m axes [dp] dim 0 root 0 sizes [9, 7, 0, 0] : tensor<?x8xf32> -> tensor<16x8xf32>
  // CHECK: dist.scatter %{{.*}} on @m axes [dp] dim 0 root 3 weights [1, 2, 1, 1] : tensor<16x8xf32> -> tensor<?x8xf32>
  %12 = dist.scatter %full on @m axes [dp] dim 0 root 3 weights [1, 2, 1, 1] : tensor<16x8xf32> -> tensor<?x8xf32>
  // CHECK: dist.all_to_all %{{.*}} on @m axes [dp] split 0 concat 1 : tensor<16x8xf32> -> tensor<4x32xf32>
  %10 = dist.all_to_all %full on @m axes [dp] split 0 concat 1 : tensor<16x8xf32> -> tensor<4x32xf32>
  return
}

// CHECK-LABEL: func.func @batches
func.func @batches(%x: tensor<4x8xf32>, %y: tensor<8x2xf32>, %u: tensor<?x8xf32>,
                   %full: tensor<16x8xf32>, %w: tensor<8x8xf32>) {
  // CHECK: %{{.*}}:3 = dist.gather_batch %{{.*}}, %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 1, 0] roots [0, 3, 1] : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<?x8xf32>) -> (tensor<16x8xf32>, tensor<8x8xf32>, tensor<?x8xf32>)
  %0:3 = dist.gather_batch %x, %y, %u on @m axes [dp] dims [0, 1, 0] roots [0, 3, 1] : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<?x8xf32>) -> (tensor<16x8xf32>, tensor<8x8xf32>, tensor<?x8xf32>)
  // CHECK: %{{.*}}:2 = dist.scatter_batch %{{.*}}, %{{.*}} on @m axes [tp] dims [0, 1] roots [1, 0] : (tensor<16x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x4xf32>)
  %1:2 = dist.scatter_batch %full, %w on @m axes [tp] dims [0, 1] roots [1, 0] : (tensor<16x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x4xf32>)
  // CHECK: %{{.*}}, %{{.*}} = dist.gather_batch %{{.*}} on @m axes [dp, tp] dims [0] roots [7] : (tensor<4x8xf32>) -> (tensor<32x8xf32>), !dist.token
  %2, %t = dist.gather_batch %x on @m axes [dp, tp] dims [0] roots [7] : (tensor<4x8xf32>) -> (tensor<32x8xf32>), !dist.token
  dist.wait %t
  // Per-item sizes (a flat piece) and weights; an empty array: the chunk rule.
  // CHECK: %{{.*}}:2 = dist.gather_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [0, 1] sizes [array<i64: 9, 7, 0, 0>, array<i64>] : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  %4:2 = dist.gather_batch %u, %x on @m axes [dp] dims [0, 0] roots [0, 1] sizes [array<i64: 9, 7, 0, 0>, array<i64>] : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  // CHECK: %{{.*}}:2 = dist.scatter_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 0] roots [3, 0] weights [array<i64>, array<i64: 1, 2, 1, 1>] : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<?x8xf32>)
  %5:2 = dist.scatter_batch %full, %full on @m axes [dp] dims [0, 0] roots [3, 0] weights [array<i64>, array<i64: 1, 2, 1, 1>] : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<?x8xf32>)
  // CHECK: %{{.*}}:2 = dist.broadcast_batch %{{.*}}, %{{.*}} on @m axes [dp] roots [3, 0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> (tensor<4x8xf32>, tensor<8x2xf32>)
  %3:2 = dist.broadcast_batch %x, %y on @m axes [dp] roots [3, 0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> (tensor<4x8xf32>, tensor<8x2xf32>)
  // CHECK: dist.completed_token
  %done = dist.completed_token
  dist.wait %done
  return
}

// CHECK-LABEL: func.func @async
func.func @async(%x: tensor<4x8xf32>, %full: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // CHECK: %[[R0:.*]], %[[T0:.*]] = dist.all_gather %{{.*}} on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>, !dist.token
  %0, %t0 = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>, !dist.token
  // CHECK: dist.reduce_scatter {{.*}} -> tensor<4x8xf32>, !dist.token
  %1, %t1 = dist.reduce_scatter %full on @m axes [dp] reduce sum dim 0 : tensor<16x8xf32> -> tensor<4x8xf32>, !dist.token
  // CHECK: dist.all_reduce {{.*}} -> tensor<4x8xf32>, !dist.token
  %2, %t2 = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>, !dist.token
  // CHECK: dist.broadcast {{.*}} -> tensor<4x8xf32>, !dist.token
  %3, %t3 = dist.broadcast %x on @m axes [dp] root 0 : tensor<4x8xf32> -> tensor<4x8xf32>, !dist.token
  // CHECK: dist.gather {{.*}} -> tensor<16x8xf32>, !dist.token
  %4, %t4 = dist.gather %x on @m axes [dp] dim 0 root 2 : tensor<4x8xf32> -> tensor<16x8xf32>, !dist.token
  // CHECK: dist.scatter {{.*}} -> tensor<4x8xf32>, !dist.token
  %5, %t5 = dist.scatter %full on @m axes [dp] dim 0 root 2 : tensor<16x8xf32> -> tensor<4x8xf32>, !dist.token
  // CHECK: dist.all_to_all {{.*}} -> tensor<4x32xf32>, !dist.token
  %6, %t6 = dist.all_to_all %full on @m axes [dp] split 0 concat 1 : tensor<16x8xf32> -> tensor<4x32xf32>, !dist.token
  // CHECK: dist.wait %[[T0]], %{{.*}}, %{{.*}}
  dist.wait %t0, %t1, %t2
  // CHECK: dist.wait %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}
  dist.wait %t3, %t4, %t5, %t6
  // CHECK: return %[[R0]]
  return %0 : tensor<16x8xf32>
}

// CHECK-LABEL: func.func @views
func.func @views(%a: !dist.tensor<10x8xf32, @m, [shard<0>, replicate]>,
                 %b: !dist.tensor<4x4xf32, @m, [replicate, replicate], storage = flat<@g, 0>>) {
  // CHECK: dist.to_local %{{.*}} : !dist.tensor<10x8xf32, @m, [shard<0>, replicate]> -> tensor<?x8xf32>
  %0 = dist.to_local %a : !dist.tensor<10x8xf32, @m, [shard<0>, replicate]> -> tensor<?x8xf32>
  // CHECK: dist.from_local %{{.*}} : tensor<?x8xf32> -> !dist.tensor<10x8xf32, @m, [shard<0>, replicate]>
  %1 = dist.from_local %0 : tensor<?x8xf32> -> !dist.tensor<10x8xf32, @m, [shard<0>, replicate]>
  // CHECK: dist.redistribute %{{.*}} : !dist.tensor<10x8xf32, @m, [shard<0>, replicate]> -> !dist.tensor<10x8xf32, @m, [replicate, shard<1>]>
  %2 = dist.redistribute %1 : !dist.tensor<10x8xf32, @m, [shard<0>, replicate]> -> !dist.tensor<10x8xf32, @m, [replicate, shard<1>]>
  // Flat storage: a 1-D local piece (9 or 7 elements of member 0 per rank).
  // CHECK: dist.to_local %{{.*}} -> tensor<?xf32>
  %3 = dist.to_local %b : !dist.tensor<4x4xf32, @m, [replicate, replicate], storage = flat<@g, 0>> -> tensor<?xf32>
  return
}

// CHECK-LABEL: func.func @queries
func.func @queries() -> (index, index, index) {
  // CHECK: dist.rank @m
  %r = dist.rank @m
  // CHECK: dist.coord @m axes [tp]
  %c = dist.coord @m axes [tp]
  // CHECK: dist.coord @m axes [dp, tp]
  %g = dist.coord @m axes [dp, tp]
  return %r, %c, %g : index, index, index
}
