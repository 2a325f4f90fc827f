// Every diagnostic of convert-dist-to-runtime.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-dist-to-runtime

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @direct_use(%p: !t) -> !t {
  // expected-error @below {{'func.return' op uses distributed argument #0 directly; the CPU lowering expects only dist.to_local on arguments (run muon-expand-step first)}}
  return %p : !t
}

// -----

// A distributed argument carried into a loop (a step inside scf.for) or a
// call: the lowering does not follow it there.
dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @into_loop(%p: !t) -> !t {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'scf.for' op uses distributed argument #0 directly; the CPU lowering expects only dist.to_local on arguments (a muon.step inside a loop, a branch or a called function is not lowered: write it in the function's own body, and loop around the compiled step on the host)}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %p) -> !t {
    scf.yield %a : !t
  }
  %l = dist.to_local %r : !t -> tensor<4x4xf32>
  %o = dist.from_local %l : tensor<4x4xf32> -> !t
  return %o : !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
!r = !dist.tensor<8x4xf32, @m, [replicate]>
func.func @return_not_from_local(%p: !r, %c: i1) -> !r {
  %l = dist.to_local %p : !r -> tensor<8x4xf32>
  %x = scf.if %c -> (!r) {
    %t = dist.from_local %l : tensor<8x4xf32> -> !r
    scf.yield %t : !r
  } else {
    %u = dist.from_local %l : tensor<8x4xf32> -> !r
    scf.yield %u : !r
  }
  // expected-error @below {{'func.return' op returns distributed value #0 not built by dist.from_local; run muon-expand-step first}}
  return %x : !r
}

// -----

dist.mesh @m [dp = 2]
func.func @async(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.all_gather' op is asynchronous (!dist.token); the CPU lowering runs it synchronously: only the rooted ones (dist.gather, dist.scatter, dist.broadcast and their batches) lower asynchronously}}
  %r, %t = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  dist.wait %t
  return %r : tensor<8x4xf32>
}

// -----

// A token nobody waits on still makes the op asynchronous.
dist.mesh @m [dp = 2]
func.func @async_unwaited(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.all_gather' op is asynchronous (!dist.token); the CPU lowering runs it synchronously: only the rooted ones (dist.gather, dist.scatter, dist.broadcast and their batches) lower asynchronously}}
  %r, %t = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  return %r : tensor<8x4xf32>
}

// -----

// The runtime writes the results at the wait: a token that leaves its
// region without the results would leave them to be freed first.
dist.mesh @m [dp = 2]
func.func @async_result_left_behind(%x: tensor<4x4xf32>, %c: i1) -> tensor<8x4xf32> {
  %y, %t = scf.if %c -> (tensor<8x4xf32>, !dist.token) {
    // expected-error @below {{'dist.gather_batch' op is asynchronous: its token leaves the region but result #1 does not; the runtime writes the results at the wait, so yield them together}}
    %r:2, %u = dist.gather_batch %x, %x on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>), !dist.token
    scf.yield %r#0, %u : tensor<8x4xf32>, !dist.token
  } else {
    %e = tensor.empty() : tensor<8x4xf32>
    %d = dist.completed_token
    scf.yield %e, %d : tensor<8x4xf32>, !dist.token
  }
  dist.wait %t
  return %y : tensor<8x4xf32>
}

// -----

// A result read before the wait would race with the runtime's write.
dist.mesh @m [dp = 4]
func.func @async_read_before_wait(%x: tensor<4x8xf32>) -> tensor<16x8xf32> {
  // expected-error @below {{'dist.gather' op is asynchronous: result #0 is read before its token is waited on; the runtime writes it at the dist.wait, so read it after}}
  %full, %t = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x8xf32> -> tensor<16x8xf32>, !dist.token
  // expected-note @below {{read here}}
  %y = arith.addf %full, %full : tensor<16x8xf32>
  dist.wait %t
  return %y : tensor<16x8xf32>
}

// -----

dist.mesh @m [dp = 2]
func.func @async_never_waited(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.gather' op is asynchronous: its token must have one use (a dist.wait, or an scf.yield towards one), it has 0}}
  %r, %t = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  return %r : tensor<8x4xf32>
}

// -----

// The request is waited exactly once: not under a condition that may skip
// it (the result would be read unwritten)...
dist.mesh @m [dp = 2]
func.func @async_wait_in_if(%x: tensor<4x4xf32>, %c: i1) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.gather' op is asynchronous: its token is waited or yielded inside a nested region, which may run never or several times; wait it in the block that made it, or yield it out of the region}}
  %r, %t = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  scf.if %c {
    // expected-note @below {{the token is used here}}
    dist.wait %t
  }
  return %r : tensor<8x4xf32>
}

// -----

// ... nor in a loop that may wait it several times ...
dist.mesh @m [dp = 2]
func.func @async_wait_in_loop(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'dist.gather' op is asynchronous: its token is waited or yielded inside a nested region}}
  %r, %t = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  scf.for %i = %c0 to %c2 step %c1 {
    // expected-note @below {{the token is used here}}
    dist.wait %t
  }
  return %r : tensor<8x4xf32>
}

// -----

// ... nor yielded by a loop's body, which runs any number of times ...
dist.mesh @m [dp = 2]
func.func @async_yield_from_loop(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %d = dist.completed_token
  %out:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %e, %b = %d) -> (tensor<8x4xf32>, !dist.token) {
    // expected-error @below {{'dist.gather' op is asynchronous: its token is yielded by 'scf.for', whose region may run several times; only the region of an scf.if, scf.index_switch or scf.execute_region may pass a token out}}
    %r, %t = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
    // expected-note @below {{the token is used here}}
    scf.yield %r, %t : tensor<8x4xf32>, !dist.token
  }
  dist.wait %out#1
  return %out#0 : tensor<8x4xf32>
}

// -----

// ... nor handed to another op, such as a call whose callee waits it.
dist.mesh @m [dp = 2]
func.func private @waits(%t: !dist.token) {
  dist.wait %t
  return
}
func.func @async_token_to_call(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.gather' op is asynchronous: its token goes to 'func.call'; it must go to a dist.wait, or an scf.yield towards one}}
  %r, %t = dist.gather %x on @m axes [dp] dim 0 root 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  // expected-note @below {{the token is used here}}
  func.call @waits(%t) : (!dist.token) -> ()
  return %r : tensor<8x4xf32>
}

// -----

dist.mesh @m [dp = 2]
func.func @f16_batch(%x: tensor<4x4xf32>, %y: tensor<4x4xf16>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.scatter_batch' op operand type 'tensor<4x4xf16>' is not lowered to the host runtime: only f32 tensors are}}
  %r:2 = dist.scatter_batch %x, %y on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<4x4xf32>, tensor<4x4xf16>) -> (tensor<2x4xf32>, tensor<2x4xf16>)
  %c = tensor.empty() : tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

dist.mesh @m [dp = 2]
func.func @f16(%x: tensor<4x4xf16>) -> tensor<4x4xf16> {
  // expected-error @below {{'dist.all_reduce' op operand type 'tensor<4x4xf16>' is not lowered to the host runtime: only f32 tensors are}}
  %r = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4x4xf16> -> tensor<4x4xf16>
  return %r : tensor<4x4xf16>
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @inner_to_local(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @below {{'dist.from_local' op is not lowered to the CPU runtime: only at function arguments / results}}
  %t = dist.from_local %x : tensor<4x4xf32> -> !t
  %l = dist.to_local %t : !t -> tensor<4x4xf32>
  return %l : tensor<4x4xf32>
}

// -----

dist.mesh @m [dp = 2]
func.func @all_to_all_dynamic(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  // expected-error @below {{'dist.all_to_all' op with a dynamic result is not lowered yet}}
  %r = dist.all_to_all %x on @m axes [dp] split 0 concat 1 : tensor<?x4xf32> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
// expected-error @below {{'func.func' op has several blocks; the CPU lowering expects structured control flow (scf)}}
func.func @blocks(%p: !t) -> !t {
  %l = dist.to_local %p : !t -> tensor<4x4xf32>
  cf.br ^next
^next:
  %r = dist.from_local %l : tensor<4x4xf32> -> !t
  return %r : !t
}

// -----

// convert-dist-to-runtime alone does not lower redistributions; the
// muon-to-llvm pipeline runs dist-lower-redistribute before it.
dist.mesh @m [dp = 2]
!s = !dist.tensor<8x4xf32, @m, [shard<0>]>
!r = !dist.tensor<8x4xf32, @m, [replicate]>
func.func @redistribute(%x: !s) -> !r {
  // expected-error @below {{'dist.redistribute' op is not lowered to the CPU runtime: lower redistributions first (dist-lower-redistribute)}}
  %y = dist.redistribute %x : !s -> !r
  return %y : !r
}

// -----

// A collective's extent tables have an entry per member of its
// communicator: bounded as every pass that visits every rank is (a scatter
// over 2^31 members ran out of memory building its table).
dist.mesh @m [dp = 2147483648]
func.func @huge_scatter(%x: tensor<1x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'dist.scatter' op convert-dist-to-runtime builds tables with an entry per member of this collective's communicator, which has 2147483648 ranks; at most 1048576 are supported}}
  %g = dist.scatter %x on @m axes [dp] dim 0 root 5 : tensor<1x8xf32> -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// -----

// A collective that finds its members' lengths at run time keeps them in a
// stack table of 8 bytes per member: at most 2^16 members (a static split
// over the same communicator is a constant table: run-time-extents.mlir).
dist.mesh @m [dp = 131072]
func.func @run_time_extents(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'dist.all_gather' op finds its members' lengths at run time (no `sizes`, and the split length depends on the rank), in a table of 8 bytes per member on the stack; its communicator has 131072 ranks, at most 65536 are supported (give `sizes`, or make the length the same on every rank)}}
  %g = dist.all_gather %x on @m axes [dp] dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// -----

// The bound is on the communicator, not the mesh: a collective over a
// small axis of a huge mesh is lowered.
dist.mesh @m [dp = 2097152, tp = 2]
func.func @small_comm(%x: tensor<2x8xf32>) -> tensor<1x8xf32> {
  %g = dist.scatter %x on @m axes [tp] dim 0 root 1 : tensor<2x8xf32> -> tensor<1x8xf32>
  return %g : tensor<1x8xf32>
}
