// Tensors of 2^62 elements (the limit a tensor may reach) have 2^64 bytes,
// past int64: the stacking keys, the expansion's stack check and the
// broadcast-split rule once multiplied them and overflowed (the sanitizer
// build reported it). Bytes now saturate and loads compare in 128 bits, so
// these expand and report; a 2^62-element matrix is never stacked.
// RUN: muon-opt %s --split-input-file --muon-assign-owners --muon-expand-step="ns-stack-bytes=67108864" | FileCheck %s
// RUN: muon-opt %s --split-input-file --muon-assign-owners --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @whole
// CHECK: muon.newton_schulz
// CHECK-NOT: muon.newton_schulz
// REPORT: 4611686018427387904x1
dist.mesh @m [dp = 1]
!t = !dist.tensor<4611686018427387904x1xf32, @m, [replicate]>
func.func @whole(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}

// -----

// CHECK-LABEL: func.func @blocks
// CHECK-COUNT-2: muon.newton_schulz
// REPORT: 4611686018427387904x1
dist.mesh @m [dp = 1]
!t = !dist.tensor<4611686018427387904x1xf32, @m, [replicate]>
func.func @blocks(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64,
     param_info = [#muon.param<"x", split = 0 [2305843009213693952, 2305843009213693952]>]}
  return %r#0, %r#1 : !t, !t
}

// -----

// Two replicas: the owner broadcasts its blocks (the broadcast-split rule).
// CHECK-LABEL: func.func @replicas
// CHECK: dist.broadcast
// REPORT: 4611686018427387904x1
dist.mesh @m [dp = 2]
!t = !dist.tensor<4611686018427387904x1xf32, @m, [replicate]>
func.func @replicas(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64,
     param_info = [#muon.param<"x", split = 0 [2305843009213693952, 2305843009213693952]>]}
  return %r#0, %r#1 : !t, !t
}
