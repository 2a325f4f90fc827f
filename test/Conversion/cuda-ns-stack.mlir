// target=cuda stacks an owner's same-shape matrices by default
// (ns-stack-bytes = 64 MiB): the three 64x32 matrices of this one-rank step
// are orthogonalised by one Newton-Schulz call on a 3 x 64 x 32 batch;
// ns-stack-bytes=0 keeps one call per matrix (target=cpu:
// ns-stack-lowering.mlir).
// REQUIRES: cuda

// RUN: muon-opt %s --muon-to-llvm="target=cuda" | FileCheck %s --check-prefix=STACK
// RUN: muon-opt %s --muon-to-llvm="target=cuda ns-stack-bytes=0" | FileCheck %s --check-prefix=APART

// STACK-COUNT-1: llvm.call @muon_rt_newton_schulz_cuda_by_reference(
// STACK-NOT: llvm.call @muon_rt_newton_schulz_cuda_by_reference(
// APART-COUNT-3: llvm.call @muon_rt_newton_schulz_cuda_by_reference(
// APART-NOT: llvm.call @muon_rt_newton_schulz_cuda_by_reference(

dist.mesh @m [dp = 1]
!t = !dist.tensor<64x32xf32, @m, [shard<0>]>
func.func @step(%p0: !t, %p1: !t, %p2: !t, %g0: !t, %g1: !t, %g2: !t,
                %m0: !t, %m1: !t, %m2: !t) -> (!t, !t, !t, !t, !t, !t) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !t, !t, !t)
      grads(%g0, %g1, %g2 : !t, !t, !t)
      momenta(%m0, %m1, %m2 : !t, !t, !t) {lr = 0.02 : f64}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !t, !t, !t, !t, !t, !t
}
