// target=cuda: Newton-Schulz becomes muon_rt_newton_schulz_cuda with the
// CPU call's arguments (operand, result buffer, steps, coefficients, eps,
// operand precision: 1 = bf16 on tensor cores, 0 = exact fp32). Momentum,
// update and collectives lower as on the CPU.

// RUN: muon-opt %s --split-input-file --convert-muon-to-runtime=target=cuda | FileCheck %s

// CHECK-DAG: func.func private @muon_rt_newton_schulz_cuda(memref<*xf32>, memref<*xf32>, i64, memref<?xf64>, f64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @ns_bf16(
// CHECK-NOT: memref.copy
// CHECK: %[[P:.*]] = arith.constant 1 : i64
// CHECK: call @muon_rt_newton_schulz_cuda(%{{.*}}, %{{.*}}, %c5_i64, %{{.*}}, %{{.*}}, %[[P]])
// CHECK-NOT: call @muon_rt_newton_schulz(
func.func @ns_bf16(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in bf16 : tensor<64x128xf32>
  return %o : tensor<64x128xf32>
}

// -----

// CHECK-LABEL: func.func @ns_f32(
// CHECK: %[[P:.*]] = arith.constant 0 : i64
// CHECK: call @muon_rt_newton_schulz_cuda(%{{.*}}, %{{.*}}, %c3_i64, %{{.*}}, %{{.*}}, %[[P]])
func.func @ns_f32(%x: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
  %o = muon.newton_schulz %x steps 3 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f32 : tensor<4x2x8xf32>
  return %o : tensor<4x2x8xf32>
}
