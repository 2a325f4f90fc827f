// A 1x4 parameter sharded over dp = 2: rank 1 holds no row.
dist.mesh @m [dp = 2]
!t = !dist.tensor<1x4xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}
