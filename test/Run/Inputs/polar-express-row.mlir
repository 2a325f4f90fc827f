// One 1x11 parameter (one singular value, exactly 1 after normalisation)
// with the Polar Express coefficients for ns_steps = 3; see
// polar-express-tolerance.test.
dist.mesh @m [dp = 1]
!t = !dist.tensor<1x11xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.1 : f64, momentum = 0.9 : f64, eps = 1.0e-12 : f64, ns_steps = 3 : i64, ns_coeffs = array<f64: 8.28721201814563, -23.595886519098837, 17.300387312530933, 4.107059111542203, -2.9478499167379106, 0.5448431082926601, 3.9486908534822946, -2.908902115962949, 0.5518191394370137>, param_info = [#muon.param<"w0_e">]}
  return %r#0, %r#1 : !t, !t
}
