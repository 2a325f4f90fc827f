// FSDP with reduced weights: a 10x8 f32 gradient, partial over dp = 4, is
// reduce-scattered into the parameter's storage rows. A ring reduce-scatter
// sends 3/4 of the 320 B each rank holds: 240 B per rank, 960 B in all.
// One all-reduce of the whole gradient (and a slice) would send twice that:
// 2 * 3/4 * 320 = 480 B per rank, 1920 B in all.
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s
// RUN: muon-opt %s --muon-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

// CHECK: param name shape owner ns_flops gather_B scatter_B reduce_B allreduce_B chain (inner first)
// CHECK-NEXT: 0 w 10x8 1 17920 224 224 960 1920 dp(d0)
// JSON: "allreduce_bytes": 1920,
// JSON: "reduce_bytes": 960,

dist.mesh @m [dp = 4]
!p = !dist.tensor<10x8xf32, @m, [reduced], storage = dim<0 on dp>>
!g = !dist.tensor<10x8xf32, @m, [partial]>
func.func @fsdp(%p: !p, %g: !g, %m: !p) -> (!p, !p) {
  %r:2 = muon.step params(%p : !p) grads(%g : !g) momenta(%m : !p)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 1>,
       param_info = [#muon.param<"w">]}
  return %r#0, %r#1 : !p, !p
}
