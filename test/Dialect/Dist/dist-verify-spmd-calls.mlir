// dist-verify-spmd follows calls: a call that leads to collectives (in its
// callee, or further down) is checked like those collectives, and the
// simulation of every rank runs the callee's body in the caller's order.
// RUN: muon-opt %s -split-input-file --dist-verify-spmd -verify-diagnostics
// Where the simulation puts the callee's collectives:
// dist-verify-spmd-call-sequences.mlir.

// Only rank 0 calls the helper whose all_reduce every rank of dp must join.
dist.mesh @m [dp = 2]
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func @owner_calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = dist.rank @m
  %c0 = arith.constant 0 : index
  %is0 = arith.cmpi eq, %r, %c0 : index
  // expected-note @+1 {{the control flow is here}}
  %y = scf.if %is0 -> tensor<4xf32> {
    // expected-error @+1 {{'func.call' op breaks the SPMD rule: it calls @helper, which issues collectives, and their members may not all reach it: the scf.if condition depends on the coordinate on mesh axis 'dp', one of the communicator's own axes}}
    %a = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Two calls deep: the middle function has no collective of its own.
dist.mesh @m [dp = 2, tp = 2]
func.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func private @middle(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func @by_tp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = dist.coord @m axes [tp]
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %t, %c0 : index
  // expected-note @+1 {{the control flow is here}}
  %y = scf.if %first -> tensor<4xf32> {
    // expected-error @+1 {{it calls @middle, which issues collectives, and their members may not all reach it: the scf.if condition depends on the coordinate on mesh axis 'tp'}}
    %a = func.call @middle(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// A recursion that leads to collectives cannot be simulated.
dist.mesh @m [dp = 2]
func.func @again(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{dist-verify-spmd: cannot decide how deep the recursion through @again goes on rank 0, and it contains collectives}}
  %b = func.call @again(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// A call reaching collectives in a later block of unstructured control
// flow is as undecidable as the collective written there.
dist.mesh @m [dp = 2]
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
// expected-error @+1 {{dist-verify-spmd: cannot decide which of the 3 blocks of this region rank 0 runs, and it contains collectives}}
func.func @branches(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = dist.rank @m
  %c0 = arith.constant 0 : index
  %is0 = arith.cmpi eq, %r, %c0 : index
  cf.cond_br %is0, ^a, ^b
^a:
  %y = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
^b:
  return %x : tensor<4xf32>
}
