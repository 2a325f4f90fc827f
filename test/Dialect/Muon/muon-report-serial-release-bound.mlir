// The owner path bound counts that a rank orthogonalises its matrices one
// after another (docs/schedule.md). DDP over 3 ranks (H100 model; the 3
// ranks share a node, so the link is the one in a node: 3 us, 360 GB/s):
// four 2048x2048 f32 matrices
// (16777216 B), two owned by rank 0 and two by rank 1. Each Newton-Schulz
// takes 3846.2 us, so each owner releases its second result no earlier
// than 7692.5 us, and rank 2 then still receives one result from each:
// 2 * 16777216 B / 360 GB/s = 93.2 us, so no schedule ends before
// 7785.7 us. Counting each result's own earliest release (3846.2 us)
// instead, the bound would stop at rank 0's own path: 7692.5 us, then its
// last result leaving as scatter + all-gather, 68.1 us: 7760.6 us.
// The schedule runs two rounds; the last broadcasts the two second results
// in one batch after their Newton-Schulz, and rank 2 receives both:
// 3 + 93.2 us, 7788.7 us.
// RUN: muon-opt %s --muon-assign-owners --muon-report=schedules=true -o /dev/null | FileCheck %s
// CHECK: rounds+prefetch1 7788.7 1.013
// CHECK: lower bound 7692.5 1.000
// CHECK-NEXT: owner path bound 7785.7 1.012

dist.mesh @m [dp = 3]
!a = !dist.tensor<2048x2048xf32, @m, [replicate]>
func.func @step(%pa: !a, %pb: !a, %pc: !a, %pd: !a, %ga: !a, %gb: !a, %gc: !a, %gd: !a,
                %ma: !a, %mb: !a, %mc: !a, %md: !a) {
  %r:8 = muon.step params(%pa, %pb, %pc, %pd : !a, !a, !a, !a)
      grads(%ga, %gb, %gc, %gd : !a, !a, !a, !a) momenta(%ma, %mb, %mc, %md : !a, !a, !a, !a)
      {lr = 0.02 : f64, owners = array<i64: 0, 0, 1, 1>,
       param_info = [#muon.param<"a">, #muon.param<"b">, #muon.param<"c">, #muon.param<"d">]}
  return
}
