// Every diagnostic of convert-shard-to-dist, at the op it names.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-shard-to-dist

shard.grid @g(shape = 2)
func.func @halo(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  // expected-error @below {{'shard.shard' op has a sharding with halo_sizes; dist shards do not overlap, so halos have no equivalent}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @dynamic_offsets(%a: tensor<8x4xf32>, %x: i64) {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, %x, 8] : !shard.sharding
  // expected-error @below {{has a sharding with dynamic sharded_dims_offsets; dist layouts are static}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

// expected-error @below {{'shard.grid' op has a dynamic size on axis 1; a dist mesh needs static sizes}}
shard.grid @g(shape = 2x?)

// -----

// expected-error @below {{'shard.grid' op has dist.axis_names = ["x"]; expected 2 non-empty strings, one per grid axis}}
shard.grid @g(shape = 2x2) {dist.axis_names = ["x"]}

// -----

// expected-error @below {{has dist.axis_names = ["x", ""]; expected 2 non-empty strings}}
shard.grid @g(shape = 2x2) {dist.axis_names = ["x", ""]}

// -----

// The mesh's own verifier speaks for the names it refuses.
// expected-error @below {{'dist.mesh' op duplicate mesh axis 'x'}}
shard.grid @g(shape = 2x2) {dist.axis_names = ["x", "x"]}

// -----

shard.grid @g(shape = 2)
func.func @beyond_rank(%a: tensor<8xf32>) {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  // expected-error @below {{has a sharding that splits dim 1, but the tensor has rank 1}}
  %0 = shard.shard %a to %s : tensor<8xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @axis_range(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[1]] : !shard.sharding
  // expected-error @below {{has a sharding over grid axis 1, but the grid has 1 axes}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @too_many_offsets(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 4, 8, 8] : !shard.sharding
  // expected-error @below {{has a sharding with 4 sharded_dims_offsets; its split dims need 3}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

// The count is checked before the values: these would otherwise read as
// offsets [0, 4, 4] that do not reach 16.
shard.grid @g(shape = 2)
func.func @too_many_offsets_first(%a: tensor<16x8xf32>) {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 16] : !shard.sharding
  // expected-error @below {{has a sharding with 4 sharded_dims_offsets; its split dims need 3 (the shard count + 1 for each)}}
  %0 = shard.shard %a to %s : tensor<16x8xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @offsets_short_of_length(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 4, 7] : !shard.sharding
  // expected-error @below {{has sharded_dims_offsets [0, 4, 7] for dim 0; they must rise from 0 to its length 8}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @offsets_not_chunks(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 3, 8] : !shard.sharding
  // expected-error @below {{splits dim 0 (length 8) over 2 shards at offsets [0, 3, 8], but dist compute shards follow the chunk rule, [0, 4, 8]; write sharded_dims_offsets with those offsets, or a length the shard count divides (weights exist only for storage sharding)}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

// Without offsets shard gives the extra rows to the trailing shards, dist
// to the leading ones: an uneven split is refused, not reinterpreted.
shard.grid @g(shape = 4)
func.func @uneven(%a: tensor<10x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @below {{splits dim 0 (length 10) over 4 shards at offsets [0, 2, 4, 7, 10] (shard's rule: the extra elements on the trailing shards), but dist compute shards follow the chunk rule, [0, 3, 6, 9, 10]}}
  %0 = shard.shard %a to %s : tensor<10x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @sharding_argument(%a: tensor<8x4xf32>, %s: !shard.sharding) {
  // expected-error @below {{takes a sharding that no shard.sharding op defines; the import reads static shard.sharding ops}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @dynamic_shape(%a: tensor<?x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @below {{annotates a tensor of dynamic shape 'tensor<?x4xf32>'; dist tensors have static shapes}}
  %0 = shard.shard %a to %s : tensor<?x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @two_shardings(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  // expected-note @below {{the first sharding}}
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  // expected-error @below {{gives argument #0 a second sharding, different from its first (the shard dialect leaves this undefined); add annotate_for_users to redistribute it for this annotation's users}}
  %1 = shard.shard %a to %t : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @users_disagree(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  // expected-note @below {{the first annotate_for_users}}
  %0 = shard.shard %a to %s annotate_for_users : tensor<8x4xf32>
  // expected-error @below {{asks for a sharding of argument #0 different from the first annotate_for_users one, and the argument has no sharding of its own; annotate it once without annotate_for_users}}
  %1 = shard.shard %a to %t annotate_for_users : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @unannotated_argument(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %m: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<8x4xf32>
  %m1 = shard.shard %m to %s : tensor<8x4xf32>
  // expected-error @below {{'muon.step' op takes argument #1 as its gradient of parameter #0, which has no shard annotation; annotate it with shard.shard so the import knows its layout}}
  %r:2 = muon.step params(%p1 : tensor<8x4xf32>) grads(%g : tensor<8x4xf32>) momenta(%m1 : tensor<8x4xf32>) {lr = 0.1 : f64}
  return
}

// -----

shard.grid @g(shape = 2)
func.func @unannotated_value(%p: tensor<8x4xf32>, %m: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<8x4xf32>
  %m1 = shard.shard %m to %s : tensor<8x4xf32>
  %g = arith.constant dense<1.0> : tensor<8x4xf32>
  // expected-error @below {{'muon.step' op takes as its gradient of parameter #0 a value with no shard annotation; annotate it with shard.shard so the import knows its layout}}
  %r:2 = muon.step params(%p1 : tensor<8x4xf32>) grads(%g : tensor<8x4xf32>) momenta(%m1 : tensor<8x4xf32>) {lr = 0.1 : f64}
  return
}

// -----

shard.grid @g(shape = 2)
func.func @annotated_computation() {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %g = arith.constant dense<1.0> : tensor<8x4xf32>
  // expected-error @below {{annotates a value defined by 'arith.constant'; the import gives layouts to function arguments, global-view muon.step results and annotations of those}}
  %0 = shard.shard %g to %s : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @step_result_resharded(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %m: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @g split_axes = [[]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<8x4xf32>
  %g1 = shard.shard %g to %s : tensor<8x4xf32>
  %m1 = shard.shard %m to %s : tensor<8x4xf32>
  %r:2 = muon.step params(%p1 : tensor<8x4xf32>) grads(%g1 : tensor<8x4xf32>) momenta(%m1 : tensor<8x4xf32>) {lr = 0.1 : f64}
  // expected-error @below {{gives its value a sharding different from the layout it already has, #dist.layout<@g, [shard<0>]> (the shard dialect leaves this undefined); add annotate_for_users to redistribute it for this annotation's users}}
  %x = shard.shard %r#0 to %t : tensor<8x4xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @users_of_users(%a: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @g split_axes = [[]] : !shard.sharding
  %u = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  %1 = shard.shard %0 to %t annotate_for_users : tensor<8x4xf32>
  // expected-error @below {{annotates for its users a value that an annotate_for_users annotation produced, with a different sharding (the shard dialect leaves this undefined)}}
  %2 = shard.shard %1 to %u annotate_for_users : tensor<8x4xf32>
  return
}

// -----

// The same when the first annotate_for_users is of an argument it gives
// its layout (found by an independent check written from the docs).
shard.grid @g(shape = 4)
func.func @users_of_users_argument(%p: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @g split_axes = [[]] : !shard.sharding
  %p1 = shard.shard %p to %s annotate_for_users : tensor<8x4xf32>
  // expected-error @below {{annotates for its users a value that an annotate_for_users annotation produced, with a different sharding}}
  %p2 = shard.shard %p1 to %t annotate_for_users : tensor<8x4xf32>
  return %p2 : tensor<8x4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @argument_computed_on(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  // expected-error @below {{'arith.addf' op uses argument #0, which the import gives a !dist.tensor type; only shard.shard, a global-view muon.step and func.return may use an annotated value}}
  %1 = arith.addf %a, %a : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @annotation_computed_on(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  // expected-error @below {{'arith.addf' op uses an annotated value, which the import gives a !dist.tensor type}}
  %1 = arith.addf %0, %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @collective(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{'shard.all_reduce' op has no counterpart in dist; convert-shard-to-dist imports shard.grid, shard.sharding and shard.shard (the annotations), not shard's collectives or queries}}
  %0 = shard.all_reduce %a on @g grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @nested(%a: tensor<8x4xf32>, %c: i1) {
  scf.if %c {
    // expected-error @below {{'shard.sharding' op sits in 'scf.if'; convert-shard-to-dist imports annotations and steps in a function's body block}}
    %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
    %0 = shard.shard %a to %s : tensor<8x4xf32>
  }
  return
}

// -----

shard.grid @g(shape = 2)
func.func @sharding_value() -> !shard.sharding {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'func.return' op uses a !shard.sharding value; the import turns shardings into layouts and keeps no sharding values}}
  return %s : !shard.sharding
}

// -----

shard.grid @g(shape = 2)
// expected-error @below {{'func.func' op holds shard annotations or a global-view muon.step and is called; the import changes its signature and does not rewrite calls, so import a function no other function calls}}
func.func @callee(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %a to %s : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
func.func @caller(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = func.call @callee(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// The step's own rules apply to the imported layouts.
shard.grid @g(shape = 2)
func.func @step_rules(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %m: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %t = shard.sharding @g split_axes = [[]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<8x4xf32>
  %g1 = shard.shard %g to %s : tensor<8x4xf32>
  %m1 = shard.shard %m to %t : tensor<8x4xf32>
  // expected-error @below {{'muon.step' op momentum buffer of parameter #0 has layout #dist.layout<@g, [replicate]> but the parameter has #dist.layout<@g, [shard<0>]>; they must match}}
  %r:2 = muon.step params(%p1 : tensor<8x4xf32>) grads(%g1 : tensor<8x4xf32>) momenta(%m1 : tensor<8x4xf32>) {lr = 0.1 : f64}
  return
}

// -----

shard.grid @g(shape = 3)
func.func @owner_outside(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %m: tensor<8x4xf32>) {
  %s = shard.sharding @g split_axes = [[]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<8x4xf32>
  %g1 = shard.shard %g to %s : tensor<8x4xf32>
  %m1 = shard.shard %m to %s : tensor<8x4xf32>
  // expected-error @below {{'muon.step' op cannot give parameter #0 to rank 5: rank 5 is outside the mesh (3 ranks)}}
  %r:2 = muon.step params(%p1 : tensor<8x4xf32>) grads(%g1 : tensor<8x4xf32>) momenta(%m1 : tensor<8x4xf32>) {lr = 0.1 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 5>}
  return
}

// -----

// Too few sharded_dims_offsets for a dim split over two grid axes: the
// message says how many the split dims need.
shard.grid @g(shape = 2x3)
func.func @few_offsets(%a: tensor<12x4xf32>) {
  %s = shard.sharding @g split_axes = [[0, 1]] sharded_dims_offsets = [0, 2, 4, 6, 8, 12] : !shard.sharding
  // expected-error @below {{'shard.shard' op has a sharding with 6 sharded_dims_offsets; its split dims need 7 (the shard count + 1 for each)}}
  %0 = shard.shard %a to %s : tensor<12x4xf32>
  return
}

// -----

// A tensor past the layout limits has no dist layout.
shard.grid @g(shape = 2)
func.func @huge(%a: tensor<2147483648x2147483648x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @below {{has a sharding with no dist layout: the tensor has more than 2^62 elements}}
  %0 = shard.shard %a to %s : tensor<2147483648x2147483648x4xf32>
  return
}

// -----

// MLIR's own verifier reads a split over several axes as (sum of sizes) + 1
// offsets: with a size-1 axis the product's 4 + 1 are too few for it.
shard.grid @g(shape = 1x4)
func.func @size_one_axis_offsets(%a: tensor<10x4xf32>) {
  // expected-error @below {{sharded dims offsets has wrong size.}}
  %s = shard.sharding @g split_axes = [[0, 1]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %0 = shard.shard %a to %s : tensor<10x4xf32>
  return
}
