// muon-convert-step-to-llvm fails where its passes fail: a cf operation it
// cannot convert (a branch carrying a tensor) is an error, as in
// convert-cf-to-llvm, an invalid LLVM data layout is refused, and so is a
// memref in a memory space that is not an address space.
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

// -----

// A memory space that is not an address space: upstream's converter reports
// it without a location and leaves the function unconverted, which a partial
// conversion accepts; the pass fails and says where.
// expected-error @unknown {{conversion of memref memory space "foo" to integer address space failed}}
// expected-error @below {{memref memory space "foo" is not an LLVM address space (an integer); map it to one before muon-to-llvm}}
func.func @odd_space(%a: memref<4xf32, "foo">) {
  return
}
