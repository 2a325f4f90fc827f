// RUN: muon-opt %s -split-input-file --muon-expand-step -verify-diagnostics
// RUN: muon-opt %s -split-input-file --muon-report -verify-diagnostics -o /dev/null
// RUN: not muon-opt %s --muon-assign-owners=strategy=fastest -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not muon-opt %s --dist-specialize-rank -o /dev/null 2>&1 | FileCheck %s --check-prefix=NORANK
// RUN: not muon-opt %s --dist-specialize-rank=rank=9 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BIGRANK
// RUN: not muon-opt %s --dist-specialize-rank=rank=-5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGRANK
// RUN: not muon-opt %s --dist-specialize-rank=rank=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINUS1

// STRATEGY: muon-assign-owners: unknown strategy 'fastest'; expected round_robin or balanced
// NORANK: dist-specialize-rank needs a rank: --dist-specialize-rank=rank=N
// BIGRANK: dist-specialize-rank: rank 9 is outside mesh @m (4 ranks)
// NEGRANK: dist-specialize-rank: rank -5 is negative; ranks count from 0
// MINUS1: dist-specialize-rank: rank -1 is negative; ranks count from 0

dist.mesh @m [dp = 4]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @f(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %c = dist.rank @m
  // expected-error @+1 {{has no owners; run muon-assign-owners}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

// A global-view step has no layouts to plan until convert-shard-to-dist.
func.func @global_view(%p: tensor<16x8xf32>, %g: tensor<16x8xf32>, %m: tensor<16x8xf32>) {
  // expected-error @below {{'muon.step' op is a global-view step (plain tensor operands) and has no layouts to plan; run convert-shard-to-dist first, which gives each operand the !dist.tensor type of its shard annotation}}
  %r:2 = muon.step params(%p : tensor<16x8xf32>) grads(%g : tensor<16x8xf32>) momenta(%m : tensor<16x8xf32>) {lr = 0.02 : f64, owners = array<i64: 0>}
  return
}

// -----

// Without owners too: the import comes first (muon-assign-owners would
// refuse the step as well), so that is what the passes ask for.
func.func @global_view_no_owners(%p: tensor<16x8xf32>, %g: tensor<16x8xf32>, %m: tensor<16x8xf32>) {
  // expected-error @below {{'muon.step' op is a global-view step (plain tensor operands) and has no layouts to plan; run convert-shard-to-dist first}}
  %r:2 = muon.step params(%p : tensor<16x8xf32>) grads(%g : tensor<16x8xf32>) momenta(%m : tensor<16x8xf32>) {lr = 0.02 : f64}
  return
}
