// The owner path bound: one 2048x2048 matrix over 2 ranks (H100 model,
// docs/schedule.md). Its owner receives the other half (1024x2048 f32 =
// 8 MiB: 3 us + 8388608 B / 360 GB/s = 26.3 us), orthogonalises it
// (5 * (4 + 2) * 2048^3 flops at 67 TFLOP/s = 3846.2 us) and sends the half
// back (26.3 us). No schedule overlaps that chain, so every schedule takes
// 3898.8 us, 1.014x the lower bound max(link, NS) = 3846.2 us, and exactly
// the owner path bound.
// RUN: muon-opt %s --muon-assign-owners --muon-report=schedules=true -o /dev/null | FileCheck %s
// CHECK: rounds+prefetch1 3898.8 1.014
// CHECK: lower bound 3846.2 1.000
// CHECK-NEXT: owner path bound 3898.8 1.014

dist.mesh @m [dp = 2]
!t = !dist.tensor<2048x2048xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, param_info = [#muon.param<"w">]}
  return
}
