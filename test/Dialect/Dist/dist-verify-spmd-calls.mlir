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

// -----

// A private function whose every use is a call runs only where it is
// called: its arguments vary as what its calls pass. Every rank passes
// true here, so the branch around the all_reduce is uniform.
dist.mesh @m [dp = 2]
func.func private @maybe_reduce(%x: tensor<4xf32>, %go: i1) -> tensor<4xf32> {
  %y = scf.if %go -> tensor<4xf32> {
    %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @uniform_flag(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = arith.constant true
  %a = func.call @maybe_reduce(%x, %t) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// A trip count the caller passes, the same on every rank.
dist.mesh @m [dp = 2]
func.func private @reduce_n(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %a = dist.all_reduce %acc on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @three_times(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c3 = arith.constant 3 : index
  %a = func.call @reduce_n(%x, %c3) : (tensor<4xf32>, index) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// A flag on the tp coordinate, passed in, is uniform over the callee's dp
// communicators: the tp = 0 ranks reduce, on every dp communicator alike.
dist.mesh @m [dp = 2, tp = 2]
func.func private @maybe_reduce(%x: tensor<4xf32>, %t: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %t, %c0 : index
  %y = scf.if %first -> tensor<4xf32> {
    %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @by_tp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = dist.coord @m axes [tp]
  %a = func.call @maybe_reduce(%x, %t) : (tensor<4xf32>, index) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// The same flag on the dp coordinate: the members of the dp communicator
// disagree, and the error is in the callee.
dist.mesh @m [dp = 2, tp = 2]
func.func private @maybe_reduce(%x: tensor<4xf32>, %d: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %d, %c0 : index
  // expected-note @+1 {{the control flow is here}}
  %y = scf.if %first -> tensor<4xf32> {
    // expected-error @+1 {{the scf.if condition depends on the coordinate on mesh axis 'dp', one of the communicator's own axes}}
    %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @by_dp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = dist.coord @m axes [dp]
  %a = func.call @maybe_reduce(%x, %d) : (tensor<4xf32>, index) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Joined over the calls: one passes a constant, another its own argument
// (runtime data, maybe different on every rank).
dist.mesh @m [dp = 2]
func.func private @maybe_reduce(%x: tensor<4xf32>, %go: i1) -> tensor<4xf32> {
  // expected-note @+1 {{the control flow is here}}
  %y = scf.if %go -> tensor<4xf32> {
    // expected-error @+1 {{the scf.if condition may depend on runtime data, which can differ between ranks}}
    %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @constant_flag(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = arith.constant true
  %a = func.call @maybe_reduce(%x, %t) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func @data_flag(%x: tensor<4xf32>, %go: i1) -> tensor<4xf32> {
  %a = func.call @maybe_reduce(%x, %go) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Through a chain of private functions: what the entry point passes
// reaches the last one.
dist.mesh @m [dp = 2]
func.func private @inner(%x: tensor<4xf32>, %go: i1) -> tensor<4xf32> {
  // expected-note @+1 {{the control flow is here}}
  %y = scf.if %go -> tensor<4xf32> {
    // expected-error @+1 {{the scf.if condition depends on the coordinate on mesh axis 'dp'}}
    %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func private @outer(%x: tensor<4xf32>, %go: i1) -> tensor<4xf32> {
  %a = func.call @inner(%x, %go) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func @entry(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = dist.rank @m
  %c0 = arith.constant 0 : index
  %is0 = arith.cmpi eq, %r, %c0 : index
  %a = func.call @outer(%x, %is0) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// A private function whose address is taken may run from anywhere: it is
// an entry point, and its arguments are runtime data.
dist.mesh @m [dp = 2]
func.func private @maybe_reduce(%x: tensor<4xf32>, %go: i1) -> tensor<4xf32> {
  // expected-note @+1 {{the control flow is here}}
  %y = scf.if %go -> tensor<4xf32> {
    // expected-error @+1 {{the scf.if condition may depend on runtime data}}
    %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @uniform_flag(%x: tensor<4xf32>) -> (tensor<4xf32>, (tensor<4xf32>, i1) -> tensor<4xf32>) {
  %t = arith.constant true
  %a = func.call @maybe_reduce(%x, %t) : (tensor<4xf32>, i1) -> tensor<4xf32>
  %f = func.constant @maybe_reduce : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %a, %f : tensor<4xf32>, (tensor<4xf32>, i1) -> tensor<4xf32>
}
