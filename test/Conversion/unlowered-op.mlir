// muon-to-llvm lowers math ops (LLVM intrinsics, or libm calls where LLVM
// has none) and reports an op of a dialect it does not lower at the op,
// instead of leaving it for the translation to LLVM IR to fail on.
// RUN: muon-opt %s --split-input-file --muon-to-llvm --verify-diagnostics | FileCheck %s

// CHECK: llvm.func @erff(f32) -> f32
// CHECK-LABEL: llvm.func @math
// CHECK: llvm.intr.exp
// CHECK: llvm.intr.sqrt
// CHECK: llvm.call @erff
func.func @math(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.sqrt %0 : f32
  %2 = math.erf %1 : f32
  return %2 : f32
}

// -----

func.func @complex(%x: complex<f32>) -> f32 {
  // expected-error @below {{'complex.abs' was not lowered to the LLVM dialect: muon-to-llvm lowers the ops of func, arith, math, memref, scf, cf, index and linalg, and the step's own dialects}}
  %a = complex.abs %x : complex<f32>
  return %a : f32
}
