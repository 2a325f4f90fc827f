// What stacks with what (ns-stack-bytes). A stack holds matrices of one
// shape and one element type, each the single matrix its owner
// orthogonalises for its parameter: a whole matrix, or the one block of a
// `split` parameter whose shard holds one block. Matrices of a stack that
// run on different ranks are orthogonalised apart.

// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=1536 --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=R0
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=1536 --dist-specialize-rank=rank=1 | FileCheck %s --check-prefix=R1
// RUN: muon-opt %s --muon-expand-step=ns-stack-bytes=1536 --dist-verify-spmd -o /dev/null

dist.mesh @m [dp = 2]
!t = !dist.tensor<16x12xf32, @m, [shard<0>]>
!h = !dist.tensor<8x12xf32, @m, [shard<0>]>

// a and b split their 16 rows into blocks of 8 along the sharded dim: each
// rank orthogonalises its own 8x12 block of each, so the two blocks are
// one batch on every rank. c (16x12) is whole on owner 0; d (8x12) has the
// blocks' shape but is gathered to owner 0 alone, so it shares their round
// (one stack in the schedule, 3 x 384 B <= 1536 B) but not their call.
// R0-LABEL: func.func @split
// R0: muon.newton_schulz %{{.*}} : tensor<16x12xf32>
// R0: muon.newton_schulz %{{.*}} : tensor<2x8x12xf32>
// R0: muon.newton_schulz %{{.*}} : tensor<8x12xf32>
// R0-NOT: muon.newton_schulz
// R0: return
// R1-LABEL: func.func @split
// R1-NOT: muon.newton_schulz %{{.*}} : tensor<16x12xf32>
// R1: muon.newton_schulz %{{.*}} : tensor<2x8x12xf32>
// R1-NOT: muon.newton_schulz
// R1: return
func.func @split(%p0: !t, %g0: !t, %m0: !t, %p1: !t, %g1: !t, %m1: !t,
                 %p2: !t, %g2: !t, %m2: !t, %p3: !h, %g3: !h, %m3: !h)
    -> (!t, !t, !t, !h, !t, !t, !t, !h) {
  %r:8 = muon.step params(%p0, %p1, %p2, %p3 : !t, !t, !t, !h)
      grads(%g0, %g1, %g2, %g3 : !t, !t, !t, !h)
      momenta(%m0, %m1, %m2, %m3 : !t, !t, !t, !h)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 0, 0, 0>, prefetch_count = 0,
       param_info = [#muon.param<"a", split = 0 [8, 8]>,
                     #muon.param<"b", split = 0 [8, 8]>,
                     #muon.param<"c">, #muon.param<"d">]}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : !t, !t, !t, !h, !t, !t, !t, !h
}

// Element types of one width do not mix: bf16 with bf16, f16 with f16.
!a = !dist.tensor<8x4xbf16, @m, [shard<0>]>
!b = !dist.tensor<8x4xf16, @m, [shard<0>]>
!c = !dist.tensor<8x4xf32, @m, [shard<0>]>
// R0-LABEL: func.func @element_types
// R0-DAG: muon.newton_schulz %{{.*}} : tensor<2x8x4xbf16>
// R0-DAG: muon.newton_schulz %{{.*}} : tensor<2x8x4xf16>
// R0-DAG: muon.newton_schulz %{{.*}} : tensor<8x4xf32>
// R0: return
func.func @element_types(%p0: !a, %p1: !b, %p2: !a, %p3: !b, %p4: !c,
                         %g0: !a, %g1: !b, %g2: !a, %g3: !b, %g4: !c,
                         %m0: !a, %m1: !b, %m2: !a, %m3: !b, %m4: !c)
    -> (!a, !b, !a, !b, !c, !a, !b, !a, !b, !c) {
  %r:10 = muon.step params(%p0, %p1, %p2, %p3, %p4 : !a, !b, !a, !b, !c)
      grads(%g0, %g1, %g2, %g3, %g4 : !a, !b, !a, !b, !c)
      momenta(%m0, %m1, %m2, %m3, %m4 : !a, !b, !a, !b, !c)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 0, 0, 0, 0>, prefetch_count = 0}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9
      : !a, !b, !a, !b, !c, !a, !b, !a, !b, !c
}
