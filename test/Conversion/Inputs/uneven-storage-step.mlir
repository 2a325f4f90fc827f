// 10 rows over tp = 3 (4, 4, 2), each tp shard's rows stored over dp: the
// storage split's length depends on the rank, so its extents are found at
// run time.
dist.mesh @m [dp = 2, tp = 3]
!p = !dist.tensor<10x8xf32, @m, [replicate, shard<0>], storage = dim<0 on dp>>
!g = !dist.tensor<10x8xf32, @m, [partial<sum>, shard<0>]>
func.func @step(%p: !p, %g: !g, %m: !p) -> (!p, !p) {
  %r:2 = muon.step params(%p : !p) grads(%g : !g) momenta(%m : !p) {lr = 0.02 : f64}
  return %r#0, %r#1 : !p, !p
}
