// RUN: muon-opt %s -split-input-file --dist-verify-spmd -verify-diagnostics

// The classic deadlock: only the owner calls the gather every rank of the
// communicator must join.
dist.mesh @m [dp = 4]
func.func @owner_only(%x: tensor<4x8xf32>) {
  %r = dist.rank @m
  %c1 = arith.constant 1 : index
  %is_owner = arith.cmpi eq, %r, %c1 : index
  // expected-note @+1 {{the control flow is here}}
  scf.if %is_owner {
    // expected-error @+1 {{breaks the SPMD rule: the ranks of its communicator (mesh @m axes [dp]) may not all reach it: the scf.if condition depends on the coordinate on mesh axis 'dp', one of the communicator's own axes}}
    %0 = dist.gather %x on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<16x8xf32>
  }
  return
}

// -----

// A condition on another axis is uniform over the communicator: fine.
dist.mesh @m [dp = 2, tp = 2]
func.func @other_axis(%x: tensor<4x8xf32>) {
  %t = dist.coord @m axes [tp]
  %c0 = arith.constant 0 : index
  %cond = arith.cmpi eq, %t, %c0 : index
  scf.if %cond {
    %0 = dist.gather %x on @m axes [dp] dim 0 root 1 : tensor<4x8xf32> -> tensor<8x8xf32>
  }
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @data_dependent(%x: tensor<4x8xf32>, %flag: i1) {
  // expected-note @+1 {{the control flow is here}}
  scf.if %flag {
    // expected-error @+1 {{the scf.if condition may depend on runtime data, which can differ between ranks}}
    %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  }
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @loop_bound(%x: tensor<4x8xf32>) {
  %r = dist.rank @m
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{the control flow is here}}
  scf.for %i = %c0 to %r step %c1 {
    // expected-error @+1 {{the scf.for trip count depends on the coordinate on mesh axis 'dp'}}
    %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  }
  return
}

// -----

// A condition mixing axes: it depends on dp, the gather's own axis.
dist.mesh @m [dp = 2, tp = 2]
func.func @diverge(%x: tensor<4x8xf32>) {
  %d = dist.coord @m axes [dp]
  %t = dist.coord @m axes [tp]
  %root = arith.addi %d, %t : index
  %c0 = arith.constant 0 : index
  %cond = arith.cmpi eq, %root, %c0 : index
  // expected-note @+1 {{the control flow is here}}
  scf.if %cond {
    // expected-error @+1 {{the scf.if condition depends on the coordinate on mesh axis 'dp'}}
    %0 = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  }
  return
}

// -----

// A loop whose trip count every rank agrees on is fine: each rank issues
// three all_reduces.
dist.mesh @m [dp = 2]
func.func @loop_ok(%x: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  }
  return
}

// -----

// A trip count that overflows int64 (ub - lb past 2^63) does not slip past
// the simulation cap.
dist.mesh @m [dp = 2]
func.func @overflowing_trips(%x: tensor<4xf32>) {
  %lo = arith.constant -9223372036854775807 : index
  %hi = arith.constant 9223372036854775807 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{dist-verify-spmd: more than 1048576 iterations to simulate}}
  scf.for %i = %lo to %hi step %c1 {
    %r = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  }
  return
}

// -----

// Unstructured control flow: the simulation cannot tell which block a rank
// reaches, so a collective in a block after the entry block is refused
// (the same program under scf.if is checked above).
dist.mesh @m [dp = 4]
// expected-error @+1 {{dist-verify-spmd: cannot decide which of the 3 blocks of this region rank 0 runs, and it contains collectives (use structured control flow: scf.if, scf.index_switch, scf.for)}}
func.func @branches(%x: tensor<4x8xf32>) {
  %r = dist.rank @m
  %c1 = arith.constant 1 : index
  %is_owner = arith.cmpi eq, %r, %c1 : index
  cf.cond_br %is_owner, ^a, ^b
^a:
  %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  cf.br ^b
^b:
  return
}

// -----

// Collectives in the entry block run once on every rank; later blocks
// without collectives are no concern.
dist.mesh @m [dp = 4]
func.func @branches_without_collectives(%x: tensor<4x8xf32>, %c: i1) -> tensor<4x8xf32> {
  %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  cf.cond_br %c, ^a, ^b
^a:
  return %0 : tensor<4x8xf32>
^b:
  return %x : tensor<4x8xf32>
}

// -----

// Meshes of different rank counts in one function: which ranks run it is
// ambiguous.
dist.mesh @m [dp = 4]
dist.mesh @n [x = 2]
func.func @two_sizes(%x: tensor<4x8xf32>) {
  %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  // expected-error @+1 {{dist-verify-spmd: one function uses meshes of 4 and 2 ranks; cannot tell which ranks run it}}
  %1 = dist.all_reduce %x on @n axes [x] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// A condition on another mesh's coordinate (same rank count) that only
// some members of the collective's communicator satisfy: found by
// simulating every rank.
dist.mesh @m [dp = 4]
dist.mesh @n [a = 2, b = 2]
func.func @diverge(%x: tensor<4x8xf32>) {
  %c = dist.coord @n axes [a]
  %c0 = arith.constant 0 : index
  %cond = arith.cmpi eq, %c, %c0 : index
  scf.if %cond {
    // expected-error @+1 {{breaks the SPMD rule: collective sequences diverge on the communicator of ranks}}
    %0 = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  }
  return
}
