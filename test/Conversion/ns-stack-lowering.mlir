// target=cpu does not stack by default (its BLAS runs a batch matrix by
// matrix): the three 64x32 matrices of this one-rank step are three
// Newton-Schulz calls; ns-stack-bytes asks for stacks (one call on a
// 3 x 64 x 32 batch). target=cuda: cuda-ns-stack.mlir.

// RUN: muon-opt %s --muon-to-llvm | FileCheck %s --check-prefix=CPU
// RUN: muon-opt %s --muon-to-llvm="ns-stack-bytes=65536" | FileCheck %s --check-prefix=CPUSTACK

// CPU-COUNT-3: llvm.call @muon_rt_newton_schulz_by_reference(
// CPU-NOT: llvm.call @muon_rt_newton_schulz_by_reference(
// CPUSTACK-COUNT-1: llvm.call @muon_rt_newton_schulz_by_reference(
// CPUSTACK-NOT: llvm.call @muon_rt_newton_schulz_by_reference(

dist.mesh @m [dp = 1]
!t = !dist.tensor<64x32xf32, @m, [shard<0>]>
func.func @step(%p0: !t, %p1: !t, %p2: !t, %g0: !t, %g1: !t, %g2: !t,
                %m0: !t, %m1: !t, %m2: !t) -> (!t, !t, !t, !t, !t, !t) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !t, !t, !t)
      grads(%g0, %g1, %g2 : !t, !t, !t)
      momenta(%m0, %m1, %m2 : !t, !t, !t) {lr = 0.02 : f64}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !t, !t, !t, !t, !t, !t
}
