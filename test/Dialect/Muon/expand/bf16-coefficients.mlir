// Newton-Schulz coefficients that diverge (docs/muon-dialect.md,
// "Coefficients that diverge"): muon-expand-step warns at a step when the
// iteration s <- a s + b s^3 + c s^5, started in [0, 1], or with
// ns_dtype = bf16 in [1, 1 + 2^-8] (one bf16 rounding above the unit
// interval), ends with |s| above 2 (or not finite) within the first 100
// iterations. It still expands the step, with no op printed after the
// warning.
// RUN: muon-opt %s --split-input-file --muon-expand-step --verify-diagnostics -o /dev/null
// RUN: muon-opt %s --split-input-file --muon-expand-step 2>&1 | FileCheck %s
// CHECK-NOT: see current operation
// CHECK-COUNT-4: muon.newton_schulz {{.*}} in bf16

dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
// Polar Express's 5 triples without their safety factor: a singular value
// of 1.0039 ends at 3.19e+51.
func.func @polar_express(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-warning @+1 {{ns_coeffs may diverge with ns_dtype = bf16: a singular value of 1.0039 (normalisation gives at most 1; bf16 rounding of X reaches 1 + 2^-8 = 1.0039) ends at 3.19e+51 after 5 iterations; use coefficients with a safety margin (Polar Express: every triple but the last as (a/1.01, b/1.01^3, c/1.01^5)) or ns_dtype = f32}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>, ns_dtype = bf16,
       ns_coeffs = array<f64: 8.28721201814563, -23.595886519098837, 17.300387312530933, 4.107059111542203, -2.9478499167379106, 0.5448431082926601, 3.9486908534822946, -2.908902115962949, 0.5518191394370137, 3.3184196573706015, -2.488488024314874, 0.51004894012372, 2.300652019954817, -1.6689039845747493, 0.4188073119525673>}
  return %r#0, %r#1 : !t, !t
}

// -----

// The same with the safety factor: every start ends at most 1.12.
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @polar_express_safe(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>, ns_dtype = bf16,
       ns_coeffs = array<f64: 8.205160414005578, -22.90193498705385, 16.460727222227106, 4.066395160932874, -2.861142510143691, 0.5184050425533778, 3.9095949044378163, -2.823362559203201, 0.5250466209185387, 3.2855640171986154, -2.415297378223945, 0.48529253021808904, 2.300652019954817, -1.6689039845747493, 0.4188073119525673>}
  return %r#0, %r#1 : !t, !t
}

// -----

// In f32 the rounding stays far below what the unsafe schedule amplifies:
// no warning.
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @polar_express_f32(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>,
       ns_coeffs = array<f64: 8.28721201814563, -23.595886519098837, 17.300387312530933, 4.107059111542203, -2.9478499167379106, 0.5448431082926601, 3.9486908534822946, -2.908902115962949, 0.5518191394370137, 3.3184196573706015, -2.488488024314874, 0.51004894012372, 2.300652019954817, -1.6689039845747493, 0.4188073119525673>}
  return %r#0, %r#1 : !t, !t
}

// -----

// The default quintic, for a million iterations: bounded (1.2), and the
// check follows the first 100 only.
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @quintic(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>, ns_dtype = bf16,
       ns_steps = 1000000 : i64}
  return %r#0, %r#1 : !t, !t
}

// -----

// A triple that grows inside the unit interval diverges in any precision:
// the warning names the first start that ends at infinity (past the f64
// range), and counts the iterations followed (100 of 200).
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @overflow(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-warning @+1 {{ns_coeffs diverge: a singular value of 0.0002 after normalisation ends at infinity after 100 iterations; an orthogonalisation takes every singular value in [0, 1] towards 1}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>,
       ns_steps = 200 : i64, ns_coeffs = array<f64: 1.0e+100, 0.0, 0.0>}
  return %r#0, %r#1 : !t, !t
}

// -----

// Finite growth inside the unit interval, in bf16: the same warning, with
// the start that ends largest (1 ends at 3^5 = 243).
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @growth(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-warning @+1 {{ns_coeffs diverge: a singular value of 1.0000 after normalisation ends at 2.43e+02 after 5 iterations}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>, ns_dtype = bf16,
       ns_coeffs = array<f64: 3.0, 0.0, 0.0>}
  return %r#0, %r#1 : !t, !t
}

// -----

// The end is printed signed: (-3, 0, 0) takes 1 to -243.
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @negative(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-warning @+1 {{ns_coeffs diverge: a singular value of 1.0000 after normalisation ends at -2.43e+02 after 5 iterations}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>,
       ns_coeffs = array<f64: -3.0, 0.0, 0.0>}
  return %r#0, %r#1 : !t, !t
}

// -----

// Exactly 2 is within the bound: (2, 0, 0) once takes 1 to 2 in f32 (no
// warning); in bf16 every start above 1 passes it, and the warning names
// the one that ends largest, 1 + 2^-8 (at 2.0078).
dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @two_f32(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>, ns_steps = 1 : i64,
       ns_coeffs = array<f64: 2.0, 0.0, 0.0>}
  return %r#0, %r#1 : !t, !t
}

// -----

dist.mesh @m [dp = 1]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @two_bf16(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  // expected-warning @+1 {{ns_coeffs may diverge with ns_dtype = bf16: a singular value of 1.0039 (normalisation gives at most 1; bf16 rounding of X reaches 1 + 2^-8 = 1.0039) ends at 2.01e+00 after 1 iterations}}
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, owners = array<i64: 0>, ns_steps = 1 : i64,
       ns_dtype = bf16, ns_coeffs = array<f64: 2.0, 0.0, 0.0>}
  return %r#0, %r#1 : !t, !t
}
