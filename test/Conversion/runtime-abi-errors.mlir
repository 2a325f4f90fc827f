// The lowering's diagnostics about the runtime ABI: role attributes it
// cannot publish, and runtime functions declared with the wrong type or
// C interface, or defined with a body.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-dist-to-runtime

// expected-error @below {{'func.func' op carries only one of muon_arg_roles and muon_result_roles}}
func.func @one_list(%x: tensor<4xf32>) -> tensor<4xf32> attributes {muon_arg_roles = [[]]} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{'func.func' op has a malformed role list 3 : i64}}
func.func @list(%x: tensor<4xf32>) -> tensor<4xf32> attributes {muon_arg_roles = [3], muon_result_roles = [[]]} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{'func.func' op has a malformed role {param = 0 : i64, role = "bias", step = 0 : i64}}}
func.func @role(%x: tensor<4xf32>) -> tensor<4xf32> attributes {muon_arg_roles = [[{role = "bias", step = 0, param = 0}]], muon_result_roles = [[]]} {
  return %x : tensor<4xf32>
}

// -----

memref.global "private" constant @__muon_roles_taken : memref<1xi64> = dense<0>
// expected-error @below {{'func.func' op cannot publish its role table: the symbol @__muon_roles_taken is taken}}
func.func @taken(%x: tensor<4xf32>) -> tensor<4xf32> attributes {muon_arg_roles = [[]], muon_result_roles = [[]]} {
  return %x : tensor<4xf32>
}

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op declares runtime function @muon_rt_world_rank with type '() -> i32', but the runtime's function table says '() -> i64'}}
func.func private @muon_rt_world_rank() -> i32
func.func @rank() -> index {
  %r = dist.rank @m
  return %r : index
}

// -----

// A body under a runtime function's name would be called instead of the
// runtime's: the lowered step would compute something else without a word.
dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op defines runtime function @muon_rt_world_rank, which the lowering calls: the name is the runtime's (declare it without a body, or rename it)}}
func.func @muon_rt_world_rank() -> i64 {
  %c = arith.constant 7 : i64
  return %c : i64
}
func.func @rank() -> index {
  %r = dist.rank @m
  return %r : index
}

// -----

// A declaration of the right type is the runtime's own: no diagnostic.
dist.mesh @m [dp = 2]
func.func private @muon_rt_world_rank() -> i64
func.func @declared_rank() -> index {
  %r = dist.rank @m
  return %r : index
}

// -----

dist.mesh @m [dp = 2]
!h = !dist.tensor<8x4xf16, @m, [shard<0>]>
// expected-error @below {{'func.func' op argument #0 has type '!dist.tensor<8x4xf16, @m, [shard<0>]>'; the CPU runtime takes f32 tensors only}}
func.func @f16_arg(%x: !h) -> tensor<4x4xf16> {
  %l = dist.to_local %x : !h -> tensor<4x4xf16>
  return %l : tensor<4x4xf16>
}

// -----

// expected-error @below {{'func.func' op has roles for 2 arguments and 0 results, but its signature has 1 and 1 (a pass changed the signature after muon-expand-step)}}
func.func @stale(%x: tensor<4xf32>) -> tensor<4xf32> attributes {muon_arg_roles = [[], []], muon_result_roles = []} {
  return %x : tensor<4xf32>
}

// -----

// The C interface is part of the declaration: with it the call would go to
// _mlir_ciface_muon_rt_world_rank, which the runtime does not export.
dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op declares runtime function @muon_rt_world_rank with llvm.emit_c_interface, but the runtime exports it without a C interface (declare it as the runtime's function table does, or leave the declaration to the lowering)}}
func.func private @muon_rt_world_rank() -> i64 attributes {llvm.emit_c_interface}
func.func @rank() -> index {
  %r = dist.rank @m
  return %r : index
}

// -----

// And without it, a function the runtime exports only as _mlir_ciface_.
dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op declares runtime function @muon_rt_comm without llvm.emit_c_interface, but the runtime exports it with a C interface}}
func.func private @muon_rt_comm(memref<?xi64>, memref<?xi64>) -> i64
func.func @rank(%x: tensor<4xf32>) -> tensor<8xf32> {
  %y = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}
