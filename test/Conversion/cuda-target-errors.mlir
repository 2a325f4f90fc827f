// Every diagnostic of target=cuda's Newton-Schulz lowering.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-muon-to-runtime=target=cuda

func.func @ns_f16(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'muon.newton_schulz' op Newton-Schulz in 'f16' is not lowered to the GPU: use ns_dtype = bf16 (tensor cores) or f32 (exact, no TF32)}}
  %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in f16 : tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

func.func @ns_f16_operand(%x: tensor<8x8xf16>) -> tensor<8x8xf16> {
  // expected-error @below {{'muon.newton_schulz' op operand type 'tensor<8x8xf16>' is not lowered to the CPU runtime: only f32 tensors are}}
  %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in bf16 : tensor<8x8xf16>
  return %o : tensor<8x8xf16>
}
