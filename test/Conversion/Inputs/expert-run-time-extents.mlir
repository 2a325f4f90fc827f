// An expert parameter whose storage split has run-time extents, beside two
// dense ones: every buffer is freed after its last use by
// muon-place-deallocations (a heap extent table made it hand the module to
// MLIR's pipeline, 38.7 instead of 8.8 MiB per rank on 49 such parameters).
dist.mesh @m [ep = 2, dp = 2, tp = 3]
!p = !dist.tensor<10x8xf32, @m, [replicate, replicate, shard<0>], storage = dim<0 on dp>>
!g = !dist.tensor<10x8xf32, @m, [replicate, partial<sum>, shard<0>]>
!q = !dist.tensor<96x96xf32, @m, [replicate, replicate, shard<0>], storage = dim<1 on dp>>
!gq = !dist.tensor<96x96xf32, @m, [replicate, partial<sum>, shard<0>]>
func.func @step(%p: !p, %q: !q, %q2: !q, %g: !g, %gq: !gq, %gq2: !gq, %m: !p, %mq: !q, %mq2: !q) -> (!p, !q, !q, !p, !q, !q) {
  %r:6 = muon.step params(%p, %q, %q2 : !p, !q, !q) grads(%g, %gq, %gq2 : !g, !gq, !gq) momenta(%m, %mq, %mq2 : !p, !q, !q) {lr = 0.02 : f64,
       param_info = [#muon.param<"e", expert = ep[1]>, #muon.param<"w">, #muon.param<"w2">]}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !p, !q, !q, !p, !q, !q
}
