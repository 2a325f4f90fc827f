// Every diagnostic of target=cuda's Newton-Schulz lowering (the compute
// type is f32 or bf16 by the op's verifier; both are lowered).
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-muon-to-runtime=target=cuda

func.func @ns_f16_operand(%x: tensor<8x8xf16>) -> tensor<8x8xf16> {
  // expected-error @below {{'muon.newton_schulz' op operand type 'tensor<8x8xf16>' is not lowered to the host runtime: only f32 tensors are}}
  %o = muon.newton_schulz %x steps 5 coeffs [3.4445, -4.775, 2.0315] eps 1.0e-7 in bf16 : tensor<8x8xf16>
  return %o : tensor<8x8xf16>
}
