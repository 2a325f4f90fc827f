// A !dist.tensor that no dist op touches (a function signature) is verified
// by every pass that reads layouts, before it reads them: a diagnostic at the
// function, never a crash.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --convert-dist-to-runtime
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-assign-owners
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-expand-step
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-report
// RUN: muon-opt %s --split-input-file --verify-diagnostics --dist-verify-spmd
// RUN: muon-opt %s --split-input-file --verify-diagnostics --dist-specialize-rank=rank=0
// RUN: muon-opt %s --split-input-file --verify-diagnostics --dist-lower-redistribute
// RUN: muon-opt %s --split-input-file --verify-diagnostics --dist-propagate-reduced
// RUN: muon-opt %s --split-input-file --verify-diagnostics --dist-verify-reduced
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-timeline=output=%t.json

// expected-error @below {{'func.func' op argument type '!dist.tensor<8x4xf32, @nomesh, [shard<0>]>': unknown mesh @nomesh: no dist.mesh with that name is visible here}}
func.func @unknown_mesh(%x: !dist.tensor<8x4xf32, @nomesh, [shard<0>]>) {
  return
}

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op result type '!dist.tensor<8x4xf32, @m, [shard<3>]>': placement shard<3> on mesh axis 'dp': cannot shard along a dimension that doesn't exist (the tensor has rank 2)}}
func.func private @shard_dim(tensor<4x4xf32>) -> !dist.tensor<8x4xf32, @m, [shard<3>]>

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{storage split over mesh axis 'dp' has non-positive weight 0; weights must be positive}}
func.func @zero_weights(%x: !dist.tensor<8x4xf32, @m, [replicate], storage = dim<0 on dp weights [0, 0]>>) {
  return
}

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{storage split over mesh axis 'dp' has weights summing past 2^31; weights are proportions, scale them down}}
func.func @huge_weights(%x: !dist.tensor<8x4xf32, @m, [replicate], storage = dim<0 on dp weights [4611686018427387904, 4611686018427387904]>>) {
  return
}

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{mesh @m has no axis 'tp'}}
func.func @unknown_axis(%x: !dist.tensor<8x4xf32, @m, [replicate], storage = dim<0 on tp>>) {
  return
}

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{@nogrp does not name a dist.flat_group}}
func.func @unknown_group(%x: !dist.tensor<3x4xf32, @m, [replicate], storage = flat<@nogrp, 0>>) {
  return
}

// -----

dist.mesh @m [dp = 2]
dist.flat_group @g on @m[dp] numel [12, 8]
// expected-error @below {{'func.func' op argument type}}
func.func @group_member(%x: !dist.tensor<3x4xf32, @m, [replicate], storage = flat<@g, 5>>) {
  return
}

// -----

dist.mesh @m [dp = 2]
// expected-error @below {{the tensor has more than 2^62 elements}}
func.func @huge_tensor(%x: !dist.tensor<4294967296x4294967296x4xf32, @m, [shard<0>, replicate]>) {
  return
}

// -----

// Nested in another type (a tuple's element).
// expected-error @below {{'func.func' op argument type 'tuple<!dist.tensor<8x4xf32, @nomesh, [shard<0>]>>': unknown mesh @nomesh: no dist.mesh with that name is visible here}}
func.func @in_tuple(%x: tuple<!dist.tensor<8x4xf32, @nomesh, [shard<0>]>>) {
  return
}

// -----

// Held by an attribute.
dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op attribute 't' holds a type '!dist.tensor<8x4xf32, @m, [shard<7>]>': placement shard<7> on mesh axis 'dp': cannot shard along a dimension that doesn't exist (the tensor has rank 2)}}
func.func @in_attribute() attributes {t = !dist.tensor<8x4xf32, @m, [shard<7>]>} {
  return
}

// -----

// Held by a string attribute as its type.
dist.mesh @m [dp = 2]
// expected-error @below {{'func.func' op attribute 's' holds a type '!dist.tensor<8x4xf32, @m, [shard<7>]>': placement shard<7> on mesh axis 'dp': cannot shard along a dimension that doesn't exist (the tensor has rank 2)}}
func.func @in_string() attributes {s = "x" : !dist.tensor<8x4xf32, @m, [shard<7>]>} {
  return
}
