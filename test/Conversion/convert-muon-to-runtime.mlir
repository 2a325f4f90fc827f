// convert-muon-to-runtime: Newton-Schulz becomes a runtime call (BLAS,
// counted) that reads the operand's buffer and writes a fresh one (no copy
// of the operand); momentum and the update become elementwise
// linalg.generic with the exact step formulas.

// RUN: muon-opt %s --convert-muon-to-linalg --convert-muon-to-runtime | FileCheck %s

// CHECK-DAG: memref.global "private" constant @[[COEFFS:.*]] : memref<3xf64> = dense<[3.444500e+00, -4.775000e+00, 2.031500e+00]>
// CHECK-DAG: func.func private @muon_rt_newton_schulz(memref<*xf32>, memref<*xf32>, i64, memref<?xf64>, f64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @ns(
// CHECK-SAME: %[[X:.*]]: tensor<?x8xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[BUF:.*]] = memref.alloc(%[[D]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK: %[[U:.*]] = memref.cast %[[BUF]] : memref<?x8xf32> to memref<*xf32>
// CHECK: %[[SRC:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK-NOT: memref.copy
// CHECK: %[[SU:.*]] = memref.cast %[[SRC]] : memref<?x8xf32> to memref<*xf32>
// CHECK: %[[C:.*]] = memref.get_global @[[COEFFS]]
// CHECK: %[[CC:.*]] = memref.cast %[[C]] : memref<3xf64> to memref<?xf64>
// The last argument is the operand precision: 0 = fp32 (MUON_RT_NS_FP32).
// CHECK: call @muon_rt_newton_schulz(%[[SU]], %[[U]], %c5_i64, %[[CC]], %cst, %c0_i64)
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: return %[[R]]
func.func @ns(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// eps is a constant at the top of the function, not in the owner's branch,
// so one CSE leaves one per step, not one per matrix.
// CHECK-LABEL: func.func @ns_in_branch(
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.9999999999999995E-8 : f64
// CHECK: scf.if
// CHECK: call @muon_rt_newton_schulz(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[EPS]], %{{.*}})
func.func @ns_in_branch(%x: tensor<8x8xf32>, %c: i1) -> tensor<8x8xf32> {
  %r = scf.if %c -> tensor<8x8xf32> {
    %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<8x8xf32>
    scf.yield %o : tensor<8x8xf32>
  } else {
    scf.yield %x : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// Inside a region isolated from above, eps goes to the top of that region.
// CHECK-LABEL: func.func @ns_in_isolated_region(
// CHECK: omp.target {
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.9999999999999995E-8 : f64
// CHECK: call @muon_rt_newton_schulz(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[EPS]], %{{.*}})
func.func @ns_in_isolated_region() {
  omp.target {
    %c = arith.constant dense<1.0> : tensor<8x8xf32>
    %o = muon.newton_schulz %c steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<8x8xf32>
    omp.terminator
  }
  return
}

// bf16: the same call with precision 1 (bf16 operands, fp32 accumulation).
// CHECK-LABEL: func.func @ns_bf16(
// CHECK: call @muon_rt_newton_schulz(%{{.*}}, %{{.*}}, %c5_i64, %{{.*}}, %{{.*}}, %c1_i64)
func.func @ns_bf16(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in bf16 : tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// lerp form with nesterov: M' = M + (1-b)(G - M); U = G + b (M' - G).
// CHECK-LABEL: func.func @momentum_lerp
// The factors are made outside the body, which captures them (so kernels
// that differ only in factors share code once outlined).
// CHECK: %[[B:.*]] = arith.constant 0.899999976 : f32
// CHECK: %[[W:.*]] = arith.constant 1.000000e-01 : f32
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: ^bb0(%[[M:.*]]: f32, %[[G:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[G]], %[[M]]
// CHECK-NEXT: %[[WD:.*]] = arith.mulf %[[W]], %[[D]]
// CHECK-NEXT: %[[NM:.*]] = arith.addf %[[M]], %[[WD]]
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[NM]], %[[G]]
// CHECK: %[[BD:.*]] = arith.mulf %[[B]], %[[D2]]
// CHECK: %[[U:.*]] = arith.addf %[[G]], %[[BD]]
// CHECK: linalg.yield %[[NM]], %[[U]]
func.func @momentum_lerp(%m: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %nm, %u = muon.momentum_update %m, %g beta 0.9 nesterov : tensor<4x4xf32>
  return %nm, %u : tensor<4x4xf32>, tensor<4x4xf32>
}

// sum form without nesterov: M' = b M + G; U = M'.
// CHECK-LABEL: func.func @momentum_sum
// CHECK: ^bb0(%[[M:.*]]: f32, %[[G:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[BM:.*]] = arith.mulf %{{.*}}, %[[M]]
// CHECK: %[[NM:.*]] = arith.addf %[[BM]], %[[G]]
// CHECK: linalg.yield %[[NM]], %[[NM]]
func.func @momentum_sum(%m: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %nm, %u = muon.momentum_update %m, %g beta 0.9 sum : tensor<4x4xf32>
  return %nm, %u : tensor<4x4xf32>, tensor<4x4xf32>
}

// P' = P (1 - lr wd) - lr (O scale): 1 - 0.1*0.5 = 0.95, folded in f64 and
// rounded to f32 once.
// CHECK-LABEL: func.func @apply
// CHECK: %[[LR:.*]] = arith.constant 1.000000e-01 : f32
// CHECK: %[[DEC:.*]] = arith.constant 0.949999988 : f32
// CHECK: %[[S:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: ^bb0(%[[P:.*]]: f32, %[[O:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[PD:.*]] = arith.mulf %[[DEC]], %[[P]]
// CHECK-NEXT: %[[OS:.*]] = arith.mulf %[[S]], %[[O]]
// CHECK: %[[ST:.*]] = arith.mulf %[[LR]], %[[OS]]
// CHECK: arith.subf %[[PD]], %[[ST]]
func.func @apply(%p: tensor<?x4xf32>, %o: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = muon.apply_update %p, %o lr 0.1 weight_decay 0.5 scale 2.0 : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// A factor that rounds to 1.0f is not multiplied at all (x * 1.0 == x bit
// for bit): no weight decay and scale 1 leave P - lr O; beta 1 in the sum
// form leaves M + G. Nothing later has to fold them.
// CHECK-LABEL: func.func @apply_unit_factors
// CHECK: %[[LR:.*]] = arith.constant 1.000000e-01 : f32
// CHECK: ^bb0(%[[P:.*]]: f32, %[[O:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ST:.*]] = arith.mulf %[[LR]], %[[O]]
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[P]], %[[ST]]
// CHECK-NEXT: linalg.yield %[[R]]
func.func @apply_unit_factors(%p: tensor<4x4xf32>, %o: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = muon.apply_update %p, %o lr 0.1 weight_decay 0.0 scale 1.0 : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// lerp with beta 0: M' = M + (G - M), no product by 1 - beta = 1.
// CHECK-LABEL: func.func @momentum_lerp_zero_beta
// CHECK: ^bb0(%[[M:.*]]: f32, %[[G:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[G]], %[[M]]
// CHECK-NEXT: %[[NM:.*]] = arith.addf %[[M]], %[[D]]
// CHECK-NEXT: linalg.yield %[[NM]], %[[NM]]
func.func @momentum_lerp_zero_beta(%m: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %nm, %u = muon.momentum_update %m, %g beta 0.0 : tensor<4x4xf32>
  return %nm, %u : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @momentum_sum_unit_beta
// CHECK: ^bb0(%[[M:.*]]: f32, %[[G:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[NM:.*]] = arith.addf %[[M]], %[[G]]
// CHECK-NEXT: %[[U:.*]] = arith.addf %[[G]], %[[NM]]
// CHECK-NEXT: linalg.yield %[[NM]], %[[U]]
func.func @momentum_sum_unit_beta(%m: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %nm, %u = muon.momentum_update %m, %g beta 1.0 sum nesterov : tensor<4x4xf32>
  return %nm, %u : tensor<4x4xf32>, tensor<4x4xf32>
}

// lr and weight_decay read at run time: the same two f32 factors, computed
// in f64 before the loop and rounded once (a constant joins as f64).
// CHECK-LABEL: func.func @apply_runtime(
// CHECK-SAME: %{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<?x4xf32>, %[[LR64:.*]]: f64)
// CHECK-DAG: %[[WD:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[LW:.*]] = arith.mulf %[[LR64]], %[[WD]] : f64
// CHECK: %[[DEC64:.*]] = arith.subf %[[ONE]], %[[LW]] : f64
// CHECK: %[[LR:.*]] = arith.truncf %[[LR64]] : f64 to f32
// CHECK: %[[DEC:.*]] = arith.truncf %[[DEC64]] : f64 to f32
// CHECK: ^bb0(%[[P:.*]]: f32, %[[O:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.mulf %[[DEC]], %[[P]]
// CHECK: arith.mulf %[[LR]], %{{.*}}
func.func @apply_runtime(%p: tensor<?x4xf32>, %o: tensor<?x4xf32>, %lr: f64) -> tensor<?x4xf32> {
  %r = muon.apply_update %p, %o lr %lr weight_decay 0.5 scale 2.0 : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
