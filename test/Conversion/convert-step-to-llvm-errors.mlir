// muon-convert-step-to-llvm fails where its passes fail: a cf operation it
// cannot convert (a branch carrying a tensor) is an error, as in
// convert-cf-to-llvm, and an invalid LLVM data layout is refused.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-convert-step-to-llvm

func.func @tensor_branch(%c: i1, %t: tensor<4xf32>) {
  // expected-error @below {{failed to legalize operation 'cf.cond_br' that was explicitly marked illegal}}
  cf.cond_br %c, ^a(%t : tensor<4xf32>), ^a(%t : tensor<4xf32>)
^a(%x: tensor<4xf32>):
  return
}

// -----

// expected-error @below {{invalid data layout descriptor}}
module attributes {llvm.data_layout = "g"} {
}
