// Every diagnostic of convert-dist-to-runtime.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-dist-to-runtime

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @direct_use(%p: !t) -> !t {
  // expected-error @below {{'dist.redistribute' op uses distributed argument #0 directly; the CPU lowering expects only dist.to_local on arguments (run muon-expand-step first)}}
  %r = dist.redistribute %p : !t -> !t
  return %r : !t
}

// -----

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
!r = !dist.tensor<8x4xf32, @m, [replicate]>
func.func @return_not_from_local(%p: !r) -> !t {
  %l = dist.to_local %p : !r -> tensor<8x4xf32>
  %t = dist.from_local %l : tensor<8x4xf32> -> !r
  %x = dist.redistribute %t : !r -> !t
  // expected-error @below {{'func.return' op returns distributed value #0 not built by dist.from_local; run muon-expand-step first}}
  return %x : !t
}

// -----

dist.mesh @m [dp = 2]
func.func @async(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.all_gather' op is asynchronous (!dist.token); the CPU lowering runs collectives synchronously and does not lower tokens yet}}
  %r, %t = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  dist.wait %t
  return %r : tensor<8x4xf32>
}

// -----

// A token nobody waits on still makes the op asynchronous.
dist.mesh @m [dp = 2]
func.func @async_unwaited(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.all_gather' op is asynchronous (!dist.token); the CPU lowering runs collectives synchronously and does not lower tokens yet}}
  %r, %t = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>, !dist.token
  return %r : tensor<8x4xf32>
}

// -----

dist.mesh @m [dp = 2]
func.func @async_batch(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'dist.gather_batch' op is asynchronous (!dist.token); the CPU lowering runs collectives synchronously and does not lower tokens yet}}
  %r:2, %t = dist.gather_batch %x, %x on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>), !dist.token
  dist.wait %t
  return %r#0 : tensor<8x4xf32>
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
