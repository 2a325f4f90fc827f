// A small FSDP x TP step for the consumer's --lower mode.
dist.mesh @m [dp = 2, tp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>, shard<1>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}
