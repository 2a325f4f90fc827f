// The update's scale for each lr_adjust, on a wide 4x16 and a tall 16x4
// matrix (folded into muon.apply_update):
//   original:           sqrt(max(1, m/n)):  1   and 2
//   match_rms_adamw:    0.2 sqrt(max(m, n)): 0.8 and 0.8
//   spectral_unclamped: sqrt(m/n):          0.5 and 2
// RUN: sed s/ADJUST/original/ %s | muon-opt --muon-assign-owners --muon-expand-step | FileCheck %s --check-prefix=ORIGINAL
// RUN: sed s/ADJUST/match_rms_adamw/ %s | muon-opt --muon-assign-owners --muon-expand-step | FileCheck %s --check-prefix=ADAMW
// RUN: sed s/ADJUST/spectral_unclamped/ %s | muon-opt --muon-assign-owners --muon-expand-step | FileCheck %s --check-prefix=SPECTRAL
// RUN: sed s/ADJUST/spectral/ %s | not muon-opt 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// ORIGINAL: muon.apply_update {{.*}} scale 1.000000e+00 : tensor<4x16xf32>
// ORIGINAL: muon.apply_update {{.*}} scale 2.000000e+00 : tensor<16x4xf32>
// ADAMW: muon.apply_update {{.*}} scale 8.000000e-01 : tensor<4x16xf32>
// ADAMW: muon.apply_update {{.*}} scale 8.000000e-01 : tensor<16x4xf32>
// SPECTRAL: muon.apply_update {{.*}} scale 5.000000e-01 : tensor<4x16xf32>
// SPECTRAL: muon.apply_update {{.*}} scale 2.000000e+00 : tensor<16x4xf32>
// UNKNOWN: error: expected ::muon::optim::LrAdjust to be one of: original, match_rms_adamw, spectral_unclamped

dist.mesh @m [dp = 1]
!w = !dist.tensor<4x16xf32, @m, [replicate]>
!t = !dist.tensor<16x4xf32, @m, [replicate]>
func.func @step(%p0: !w, %g0: !w, %m0: !w, %p1: !t, %g1: !t, %m1: !t) -> (!w, !t, !w, !t) {
  %r:4 = muon.step params(%p0, %p1 : !w, !t) grads(%g0, %g1 : !w, !t)
      momenta(%m0, %m1 : !w, !t)
      {lr = 0.02 : f64, lr_adjust = #muon.lr_adjust<ADJUST>}
  return %r#0, %r#1, %r#2, %r#3 : !w, !t, !w, !t
}
