// Every diagnostic of the CPU lowering passes.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-muon-to-linalg --convert-muon-to-runtime

func.func @momentum_f16(%m: tensor<4x4xf16>, %g: tensor<4x4xf16>) -> tensor<4x4xf16> {
  // expected-error @below {{'muon.momentum_update' op operand type 'tensor<4x4xf16>' is not lowered to the host runtime: only f32 tensors are}}
  %nm, %u = muon.momentum_update %m, %g beta 0.9 : tensor<4x4xf16>
  return %u : tensor<4x4xf16>
}

// -----

func.func @apply_bf16(%p: tensor<4x4xbf16>, %o: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @below {{'muon.apply_update' op operand type 'tensor<4x4xbf16>' is not lowered to the host runtime: only f32 tensors are}}
  %r = muon.apply_update %p, %o lr 0.1 weight_decay 0.0 scale 1.0 : tensor<4x4xbf16>
  return %r : tensor<4x4xbf16>
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @unexpanded(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-error @below {{'muon.step' op must be expanded before convert-muon-to-runtime: run muon-expand-step first}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}
