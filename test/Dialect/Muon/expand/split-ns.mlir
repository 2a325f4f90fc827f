// Newton-Schulz in blocks (#muon.param<..., split = d [sizes]>).
// heads: 4 row blocks of 8 over dp = 2, 16 rows per shard: every shard
//   holds two whole blocks, so dp is independent: no gather, each rank
//   orthogonalises its own two blocks.
// rows: 3 blocks of 8 over 12-row shards: cut through a block, so the
//   matrix is gathered to its owner (rank 1), which runs the 3 blocks.
// qkv: column blocks 12, 6, 6 of a 16x24 matrix: their lr_adjust factors
//   differ (sqrt(16/12) and sqrt(16/6)), so each block is scaled where it is
//   computed and apply_update's scale is 1.
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null

// Only rows and qkv are gathered.
// R0-DAG: %[[S1:.*]] = arith.constant 1.1547005{{[0-9]*}} : f32
// R0-DAG: %[[S2:.*]] = arith.constant 1.63299{{[0-9]*}} : f32
// R0: dist.gather_batch %{{.*}}, %{{.*}} on @m axes [dp] dims [0, 1] roots [1, 0] : (tensor<12x12xf32>, tensor<16x12xf32>) -> (tensor<24x12xf32>, tensor<16x24xf32>)
// R0: tensor.extract_slice %{{.*}}[0, 0] [16, 12] [1, 1] : tensor<16x24xf32> to tensor<16x12xf32>
// Each block's scaling is one elementwise pass.
// R0: %[[Q:.*]] = muon.newton_schulz %{{.*}} : tensor<16x12xf32>
// R0: linalg.generic {{.*}} ins(%[[Q]] : tensor<16x12xf32>)
// R0-NEXT: ^bb0
// R0-NEXT: arith.mulf %{{.*}}, %[[S1]] : f32
// R0: %[[K:.*]] = muon.newton_schulz %{{.*}} : tensor<16x6xf32>
// R0: linalg.generic {{.*}} ins(%[[K]] : tensor<16x6xf32>)
// R0-NEXT: ^bb0
// R0-NEXT: arith.mulf %{{.*}}, %[[S2]] : f32
// R0: %[[V:.*]] = muon.newton_schulz %{{.*}} : tensor<16x6xf32>
// R0: %[[VS:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<16x6xf32>)
// The blocks' results are put together by one concat.
// R0: %[[QKV:.*]] = tensor.concat dim(1) %[[QS:.*]], %[[KS:.*]], %[[VS]] : (tensor<16x12xf32>, tensor<16x6xf32>, tensor<16x6xf32>) -> tensor<16x24xf32>
// R0: dist.scatter_batch %{{.*}}, %[[QKV]] on
// R0: tensor.extract_slice %{{.*}}[0, 0] [8, 12] [1, 1] : tensor<16x12xf32> to tensor<8x12xf32>
// R0: %[[H0:.*]] = muon.newton_schulz %{{.*}} : tensor<8x12xf32>
// R0: tensor.extract_slice %{{.*}}[8, 0] [8, 12] [1, 1] : tensor<16x12xf32> to tensor<8x12xf32>
// R0: %[[H1:.*]] = muon.newton_schulz %{{.*}} : tensor<8x12xf32>
// R0: %[[HEADS:.*]] = tensor.concat dim(0) %[[H0]], %[[H1]] : (tensor<8x12xf32>, tensor<8x12xf32>) -> tensor<16x12xf32>
// R0-COUNT-2: muon.apply_update {{.*}} scale 1.000000e+00
// R0: muon.apply_update %{{.*}}, %[[HEADS]] lr {{.*}} scale 1.000000e+00

// R1: dist.gather_batch
// R1-COUNT-3: muon.newton_schulz %{{.*}} : tensor<8x12xf32>
// R1: dist.scatter_batch
// R1-COUNT-2: muon.newton_schulz %{{.*}} : tensor<8x12xf32>
// R1-NOT: muon.newton_schulz

dist.mesh @m [dp = 2]
!heads = !dist.tensor<32x12xf32, @m, [shard<0>]>
!rows = !dist.tensor<24x12xf32, @m, [shard<0>]>
!qkv = !dist.tensor<16x24xf32, @m, [replicate], storage = dim<1 on dp>>
func.func @step(%p0: !heads, %g0: !heads, %m0: !heads, %p1: !rows, %g1: !rows, %m1: !rows,
                %p2: !qkv, %g2: !qkv, %m2: !qkv) -> (!heads, !rows, !qkv, !heads, !rows, !qkv) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !heads, !rows, !qkv)
      grads(%g0, %g1, %g2 : !heads, !rows, !qkv)
      momenta(%m0, %m1, %m2 : !heads, !rows, !qkv)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0, 1, 0>,
       param_info = [#muon.param<"heads", split = 0 [8, 8, 8, 8]>,
                     #muon.param<"rows", split = 0 [8, 8, 8]>,
                     #muon.param<"qkv", split = 1 [12, 6, 6]>]}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !heads, !rows, !qkv, !heads, !rows, !qkv
}
