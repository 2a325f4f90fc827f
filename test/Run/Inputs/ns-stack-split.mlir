// Two split parameters whose shards hold one block each (stacked per rank),
// a whole 16x12 and an 8x12 matrix: test/Run/ns-stack.test.
dist.mesh @m [dp = 2]
!t = !dist.tensor<16x12xf32, @m, [shard<0>]>
!h = !dist.tensor<8x12xf32, @m, [shard<0>]>
func.func @step(%p0: !t, %g0: !t, %m0: !t, %p1: !t, %g1: !t, %m1: !t,
                %p2: !t, %g2: !t, %m2: !t, %p3: !h, %g3: !h, %m3: !h) -> (!t, !t, !t, !h, !t, !t, !t, !h) {
  %r:8 = muon.step params(%p0, %p1, %p2, %p3 : !t, !t, !t, !h)
      grads(%g0, %g1, %g2, %g3 : !t, !t, !t, !h)
      momenta(%m0, %m1, %m2, %m3 : !t, !t, !t, !h)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0, 0, 0, 0>, prefetch_count = 0,
       param_info = [#muon.param<"a", split = 0 [8, 8]>,
                     #muon.param<"b", split = 0 [8, 8]>,
                     #muon.param<"c">, #muon.param<"d">]}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : !t, !t, !t, !h, !t, !t, !t, !h
}
