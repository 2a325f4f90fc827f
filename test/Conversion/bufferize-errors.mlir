// Every diagnostic of muon-bufferize.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-bufferize

// A function taken as a value keeps the tensor types that bufferization
// replaces in the function: refused, not left as IR that does not verify.
func.func private @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @value() -> ((tensor<4xf32>) -> tensor<4xf32>) {
  // expected-error @+1 {{'func.constant' op is not lowered: a function used as a value keeps the tensor types that bufferization replaces; call the function directly}}
  %f = func.constant @scale : (tensor<4xf32>) -> tensor<4xf32>
  return %f : (tensor<4xf32>) -> tensor<4xf32>
}

// -----

func.func @indirect(%f: (tensor<4xf32>) -> tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call_indirect' op is not lowered: a function used as a value}}
  %y = func.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Without tensors in its type a function value is left alone.
func.func private @twice(%i: index) -> index {
  %j = arith.addi %i, %i : index
  return %j : index
}
func.func @scalar(%i: index) -> index {
  %f = func.constant @twice : (index) -> index
  %j = func.call_indirect %f(%i) : (index) -> index
  return %j : index
}
