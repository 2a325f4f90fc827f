// The owner path bound counts what a rank must receive after
// Newton-Schulz (docs/schedule.md). DDP over 3 ranks (H100 model; the 3
// ranks share a node, so the link is the one in a node: 3 us, 360 GB/s):
// two 2048x2048 f32 matrices (16777216 B) owned by ranks 0 and 1, a 16x16
// one by rank 2. Each big Newton-Schulz takes
// 5 * (4 + 2) * 2048^3 flops at 67 TFLOP/s = 3846.2 us.
// - Rank 2 lacks both big results, released at 3846.2 us, and its link
//   receives them one after the other: 2 * 16777216 B / 360 GB/s = 93.2 us,
//   so no schedule ends before 3939.4 us.
// - Rank 0's own path is shorter: 3846.2 us, then its result alone leaves
//   as scatter + all-gather, 2 * 3 us + (2/3 + 2/3) * 16777216 B / 360 GB/s
//   = 68.1 us: 3914.3 us.
// The schedule broadcasts the three results in one batch, direct (split, it
// would move as much: 4 (S + G) > 3 D), 3 + 93.2 us after Newton-Schulz:
// 3942.4 us.
// RUN: muon-opt %s --muon-assign-owners --muon-report=schedules=true -o /dev/null | FileCheck %s
// CHECK: rounds+prefetch1 3942.4 1.025
// CHECK: lower bound 3846.2 1.000
// CHECK-NEXT: owner path bound 3939.4 1.024

// The bound never exceeds a schedule: two 400x250 results over 3 ranks
// (100000 elements each) leave in one direct batch, 3 us + 2 * 400000 B /
// 360 GB/s = 5.2 us after their Newton-Schulz (9.8 us); each alone costs
// the same (split would take 2 * 3 us + 533336 B / 360 GB/s = 7.5 us, and
// the bound counts the faster exchange).
// RUN: %python %S/../../Run/Inputs/replica_step.py 3 1 400x250 400x250 | muon-opt --muon-assign-owners --muon-report=schedules=true -o /dev/null | FileCheck %s --check-prefix=TWO
// TWO: rounds+prefetch1 15.0 1.533
// TWO: owner path bound 15.0 1.533

dist.mesh @m [dp = 3]
!a = !dist.tensor<2048x2048xf32, @m, [replicate]>
!c = !dist.tensor<16x16xf32, @m, [replicate]>
func.func @step(%pa: !a, %pb: !a, %pc: !c, %ga: !a, %gb: !a, %gc: !c,
                %ma: !a, %mb: !a, %mc: !c) {
  %r:6 = muon.step params(%pa, %pb, %pc : !a, !a, !c)
      grads(%ga, %gb, %gc : !a, !a, !c) momenta(%ma, %mb, %mc : !a, !a, !c)
      {lr = 0.02 : f64,
       param_info = [#muon.param<"a">, #muon.param<"b">, #muon.param<"c">]}
  return
}
