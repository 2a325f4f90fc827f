// The balanced strategy on a Llama-7B-like list (32 layers x q/k/v/o/gate/
// up/down, FSDP over 8 ranks) is within 5% of perfect balance.
// RUN: %python %S/Inputs/llama_step.py 32 | muon-opt --muon-assign-owners --muon-report -o /dev/null | FileCheck %s --check-prefix=LLAMA
// LLAMA: muon.step at {{.*}}: 224 parameters on mesh @m (8 ranks), strategy balanced, ns_steps 5
// LLAMA: layers.0.attn.q 4096x4096
// LLAMA: balance: max/mean NS load = {{1\.0[0-4][0-9]*}}

// Round robin on the same list: 224 params over 8 ranks, 28 each.
// RUN: %python %S/Inputs/llama_step.py 32 | sed 's/balanced/round_robin/' | muon-opt --muon-assign-owners --muon-report -o /dev/null | FileCheck %s --check-prefix=RR
// RR: 7 {{.*}} 28

// Exact figures on a small step: a 16x8 FSDP weight over 4 ranks, owner 0:
// NS = 5 * (4*8*8*16 + 2*8^3) = 25600 flops; 3 ranks send 4x8 f32 = 128 B.
// RUN: muon-opt %s --muon-assign-owners --muon-report -o /dev/null | FileCheck %s
// CHECK: param name shape owner ns_flops gather_B scatter_B chain (inner first)
// CHECK-NEXT: 0 w 16x8 0 25600 384 384 dp(d0)
// CHECK: rank coords
// CHECK-NEXT: 0 dp=0 1 25600 384 384
// CHECK-NEXT: 1 dp=1 0 0 128 128
dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @small(%p: !t, %g: !t, %m: !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, param_info = [#muon.param<"w">]}
  return
}
