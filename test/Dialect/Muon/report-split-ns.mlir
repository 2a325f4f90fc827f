// The report of blocked Newton-Schulz: per parameter the NS FLOPs of its
// blocks, and a line per blocked parameter; where a shard holds whole
// blocks (heads over dp), what not gathering it saves: the 16x12 f32 half
// the owner would receive and send back, 2 x 768 B.
// heads: 2 owners x 2 blocks x 5 (4*8^2*12 + 2*8^3) = 81920 FLOPs;
// rows: 3 x 20480 = 61440; qkv: 5 (4*12^2*16 + 2*12^3) + 2 x 5 (4*6^2*16 +
// 2*6^3) = 63360 + 27360 = 90720.
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s
// RUN: muon-opt %s --muon-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

// CHECK: 0 heads 32x12 0x2 81920 0 0 0 0 -
// CHECK-NEXT: 1 rows 24x12 1 61440 576 576 0 0 dp(d0)
// CHECK-NEXT: 2 qkv 16x24 0 90720 768 768 0 0 dp(d1)
// CHECK-NEXT: blocked Newton-Schulz: param 0 (heads): 4 blocks along dim 0; dp holds whole blocks, orthogonalised where they are: 1536 B of gathers and scatters saved
// CHECK-NEXT: blocked Newton-Schulz: param 1 (rows): 3 blocks along dim 0
// CHECK-NEXT: blocked Newton-Schulz: param 2 (qkv): 3 blocks along dim 1
// JSON: "block_axis": "dp",
// JSON-NEXT: "block_saved_bytes": 1536,
// JSON: "ns_blocks": 4,

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
