// One 16x1 parameter (one singular value) with the 5-step Polar Express
// coefficients: the fp32 amplification of polar-express-row.mlir times
// the original lr_adjust scale sqrt(16) = 4; see polar-express-tolerance.test.
dist.mesh @m [dp = 1]
!t = !dist.tensor<16x1xf32, @m, [replicate]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, ns_coeffs = array<f64: 8.28721201814563, -23.595886519098837, 17.300387312530933, 4.107059111542203, -2.9478499167379106, 0.5448431082926601, 3.9486908534822946, -2.908902115962949, 0.5518191394370137, 3.3184196573706015, -2.488488024314874, 0.51004894012372, 2.300652019954817, -1.6689039845747493, 0.4188073119525673>}
  return %r#0, %r#1 : !t, !t
}
