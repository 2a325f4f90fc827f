// RUN: muon-opt %s -split-input-file -verify-diagnostics

// Every verifier and parser message of the dist dialect.

//===----------------------------------------------------------------------===//
// dist.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{duplicate mesh axis 'dp'}}
dist.mesh @m [dp = 2, dp = 4]

// -----

// expected-error @+1 {{mesh axis 'tp' has non-positive size 0}}
dist.mesh @m [dp = 2, tp = 0]

// -----

// expected-error @+1 {{mesh axis 'dp' has non-positive size -2}}
dist.mesh @m [dp = -2]

// -----

// expected-error @+1 {{needs at least one axis}}
dist.mesh @m []

// -----

// expected-error @+1 {{has 2 axis names but 1 sizes}}
"dist.mesh"() {sym_name = "m", axis_names = ["a", "b"], shape = array<i64: 2>} : () -> ()

// -----

// expected-error @+1 {{lists 3 device ids but the mesh has 4 ranks}}
dist.mesh @m [x = 2, y = 2] devices = [0, 1, 2]

// -----

// expected-error @+1 {{device id -1 is negative}}
dist.mesh @m [x = 2] devices = [0, -1]

// -----

// expected-error @+1 {{device id 1 is listed twice}}
dist.mesh @m [x = 2] devices = [1, 1]

//===----------------------------------------------------------------------===//
// dist.flat_group
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{needs at least one member}}
dist.flat_group @g on @m[dp] numel []

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{member 1 has non-positive element count 0}}
dist.flat_group @g on @m[dp] numel [4, 0]

// -----

// The members are one buffer: a total that would wrap its offsets.
dist.mesh @m [dp = 2]
// expected-error @+1 {{members hold more than 2^62 elements in all (from member 1 on)}}
dist.flat_group @g on @m[dp] numel [4611686018427387903, 4611686018427387903, 4]

// -----

// expected-error @+1 {{unknown mesh @nope: no dist.mesh with that name is visible here}}
dist.flat_group @g on @nope[dp] numel [4]

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{mesh @m has no axis 'tp'}}
dist.flat_group @g on @m[tp] numel [4]

// -----

dist.mesh @m [dp = 2, tp = 2]
// expected-error @+1 {{a flat group lives on one mesh axis; for storage over several axes use a dim or block split, or a mesh whose one axis spans those ranks}}
dist.flat_group @g on @m[dp, tp] numel [4]

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{flat group over mesh axis 'dp' has 3 weights but the axis has 4 ranks}}
dist.flat_group @g on @m[dp] numel [4] weights [1, 2, 1]

// -----

dist.mesh @m [dp = 2]
// expected-error @+1 {{flat group over mesh axis 'dp' has non-positive weight -1; weights must be positive}}
dist.flat_group @g on @m[dp] numel [4] weights [1, -1]

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{'dist.flat_group' op 'weights' needs one positive weight per rank of mesh axis 'dp', got none (leave it out for an even split)}}
dist.flat_group @g on @m[dp] numel [4] weights []

//===----------------------------------------------------------------------===//
// Placements, layouts and !dist.tensor (checked where an op uses the type)
//===----------------------------------------------------------------------===//

// -----

func.func @f(%a: !dist.tensor<4x4xf32, @nope, [replicate]>) {
  // expected-error @+1 {{unknown mesh @nope: no dist.mesh with that name is visible here}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @nope, [replicate]> -> tensor<4x4xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{expected 2 placements (one per mesh axis), got 1}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [shard<0>]> -> tensor<1x4xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate, shard<2>]>) {
  // expected-error @+1 {{placement shard<2> on mesh axis 'tp': cannot shard along a dimension that doesn't exist (the tensor has rank 2)}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [replicate, shard<2>]> -> tensor<4x2xf32>
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, ep]}>) {
  // expected-error @+1 {{mesh @m has no axis 'ep'}}
  %0 = dist.to_local %a : !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, ep]}> -> tensor<2xf32>
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {1 = [tp, dp]}>) {
  // expected-error @+1 {{shard order names dimension 1, which doesn't exist (the tensor has rank 1)}}
  %0 = dist.to_local %a : !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {1 = [tp, dp]}> -> tensor<2xf32>
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, tp]}>) {
  // expected-error @+1 {{shard order of dimension 0 names a mesh axis twice}}
  %0 = dist.to_local %a : !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, tp]}> -> tensor<2xf32>
  return
}

// -----

// One order per dimension: two would contradict each other.
dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, dp], 0 = [dp, tp]}>) {
  // expected-error @+1 {{shard order names dimension 0 twice}}
  %0 = dist.to_local %a : !dist.tensor<8xf32, @m, [shard<0>, shard<0>], order = {0 = [tp, dp], 0 = [dp, tp]}> -> tensor<2xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{'weights' needs one positive weight per rank of mesh axis 'dp', got none}}
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate], storage = dim<0 on dp weights []>>) {
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8xf32, @m, [shard<0>, replicate], order = {0 = [tp, dp]}>) {
  // expected-error @+1 {{shard order of dimension 0 must list exactly the mesh axes whose placement is shard<0>}}
  %0 = dist.to_local %a : !dist.tensor<8xf32, @m, [shard<0>, replicate], order = {0 = [tp, dp]}> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [shard<0>, replicate], storage = dim<1 on dp>>) {
  // expected-error @+1 {{storage sharding on mesh axis 'dp' whose compute placement is shard<0>; storage sharding needs a replicate or reduced axis}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [shard<0>, replicate], storage = dim<1 on dp>> -> tensor<2x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate, partial<sum>], storage = dim<0 on tp>>) {
  // expected-error @+1 {{storage sharding on mesh axis 'tp' whose compute placement is partial; storage sharding needs a replicate or reduced axis}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate, partial<sum>], storage = dim<0 on tp>> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate, replicate], storage = dim<0 on pp>>) {
  // expected-error @+1 {{mesh @m has no axis 'pp'}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate, replicate], storage = dim<0 on pp>> -> tensor<2x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate, replicate], storage = block<0 on dp, 1 on dp>>) {
  // expected-error @+1 {{storage sharding uses mesh axis 'dp' twice}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate, replicate], storage = block<0 on dp, 1 on dp>> -> tensor<2x2xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate, replicate], storage = block<0 on dp, 0 on tp>>) {
  // expected-error @+1 {{block storage must split two different dimensions}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate, replicate], storage = block<0 on dp, 0 on tp>> -> tensor<1x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate], storage = dim<2 on dp>>) {
  // expected-error @+1 {{storage split of dimension 2: the dimension doesn't exist (the tensor has rank 2)}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate], storage = dim<2 on dp>> -> tensor<8x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate], storage = dim<0 on dp weights [1, 2]>>) {
  // expected-error @+1 {{storage split over mesh axis 'dp' has 2 weights but the axis has 4 ranks}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate], storage = dim<0 on dp weights [1, 2]>> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [replicate], storage = dim<0 on dp weights [0, 2]>>) {
  // expected-error @+1 {{storage split over mesh axis 'dp' has non-positive weight 0; weights must be positive}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [replicate], storage = dim<0 on dp weights [0, 2]>> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
dist.flat_group @g on @m[dp] numel [16, 8]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 2>>) {
  // expected-error @+1 {{flat storage member index 2 is out of range: the group has 2 members}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 2>> -> tensor<?xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
dist.flat_group @g on @m[dp] numel [16, 8]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 1>>) {
  // expected-error @+1 {{bad group membership: member 1 of the flat group has 8 elements but the tensor's compute-local block has 16}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 1>> -> tensor<?xf32>
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2]
dist.flat_group @g on @m[dp] numel [3]
func.func @f(%a: !dist.tensor<5xf32, @m, [replicate, shard<0>], storage = flat<@g, 0>>) {
  // An uneven TP split gives blocks of 3 and 2 elements: not one member size.
  // expected-error @+1 {{bad group membership: member 0 of the flat group has 3 elements but the tensor's compute-local block has 2}}
  %0 = dist.to_local %a : !dist.tensor<5xf32, @m, [replicate, shard<0>], storage = flat<@g, 0>> -> tensor<?xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@nope, 0>>) {
  // expected-error @+1 {{bad group membership: @nope does not name a dist.flat_group}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@nope, 0>> -> tensor<?xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
dist.mesh @other [dp = 4]
dist.flat_group @g on @other[dp] numel [16]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 0>>) {
  // expected-error @+1 {{bad group membership: flat group @g is on mesh @other but the tensor is on mesh @m}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 0>> -> tensor<?xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate], storage = whole<on dp owner 4>>) {
  // expected-error @+1 {{whole storage owner 4 is out of range for mesh axis 'dp' of size 4}}
  %0 = dist.to_local %a : !dist.tensor<4x4xf32, @m, [replicate], storage = whole<on dp owner 4>> -> tensor<?x4xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<f32, @m, [replicate], storage = whole<on dp owner 0>>) {
  // expected-error @+1 {{whole storage needs a tensor of rank >= 1}}
  %0 = dist.to_local %a : !dist.tensor<f32, @m, [replicate], storage = whole<on dp owner 0>> -> tensor<f32>
  return
}

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{flat storage member index must be non-negative}}
func.func @f(%a: !dist.tensor<4xf32, @m, [replicate], storage = flat<@g, -1>>)

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{!dist.tensor element type must be an integer, index or float type, got 'vector<4xf32>'}}
func.func @f(%a: !dist.tensor<4xvector<4xf32>, @m, [replicate]>)

// -----

// Partial reductions that do not commute: the value would depend on the
// order the axes are reduced in.
dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [partial<max>, partial<sum>]>) {
  // expected-error @+1 {{partial<max> on mesh axis 'dp' and partial<sum> on mesh axis 'tp' do not commute: the value would depend on the order the axes are reduced in; a tensor's partial axes must all be sum or avg, all max, or all min}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [partial<max>, partial<sum>]> -> tensor<8x8xf32>
  return
}

// -----

dist.mesh @m [dp = 2, tp = 2, pp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [partial<min>, replicate, partial<max>]>) {
  // expected-error @+1 {{partial<min> on mesh axis 'dp' and partial<max> on mesh axis 'pp' do not commute}}
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [partial<min>, replicate, partial<max>]> -> tensor<8x8xf32>
  return
}

// -----

// Sum and avg commute (the mean is a scaled sum), as do max with max.
dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<8x8xf32, @m, [partial<avg>, partial<sum>]>,
             %b: !dist.tensor<8x8xf32, @m, [partial<max>, partial<max>]>) {
  %0 = dist.to_local %a : !dist.tensor<8x8xf32, @m, [partial<avg>, partial<sum>]> -> tensor<8x8xf32>
  %1 = dist.to_local %b : !dist.tensor<8x8xf32, @m, [partial<max>, partial<max>]> -> tensor<8x8xf32>
  return
}

// -----

// expected-error @+1 {{unknown placement 'sharded'; expected shard<d>, replicate, partial<op> or reduced}}
func.func @f(%a: !dist.tensor<4xf32, @m, [sharded<0>]>)

// -----

// expected-error @+1 {{unknown reduction 'prod'; expected sum, avg, max or min}}
func.func @f(%a: !dist.tensor<4xf32, @m, [partial<prod>]>)

// -----

// expected-error @+1 {{unknown storage sharding 'rows'; expected dim, block, flat or whole}}
func.func @f(%a: !dist.tensor<4xf32, @m, [replicate], storage = rows<0 on dp>>)

// -----

// expected-error @+1 {{dim storage takes 1 split (D on AXIS), got 2}}
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate, replicate], storage = dim<0 on dp, 1 on tp>>)

// -----

// expected-error @+1 {{block storage takes 2 splits (outer, inner), got 1}}
func.func @f(%a: !dist.tensor<4x4xf32, @m, [replicate, replicate], storage = block<0 on dp>>)

// -----

// expected-error @+1 {{block storage takes 2 splits (outer, inner), got 3}}
func.func @f(%a: !dist.tensor<4x4x4xf32, @m, [replicate, replicate, replicate], storage = block<0 on dp, 1 on tp, 2 on pp>>)

// -----

// expected-error @+1 {{whole storage takes no weights: the owner keeps the whole tensor}}
func.func @f(%a: !dist.tensor<4xf32, @m, [replicate], storage = whole<on dp owner 1 weights [1, 3]>>)

// -----

// expected-error @+1 {{unknown layout field 'shards'; expected order or storage}}
func.func @f(%a: !dist.tensor<4xf32, @m, [replicate], shards = 2>)

// -----

// expected-error @+1 {{expected a mesh symbol like @mesh}}
func.func @f(%a: !dist.tensor<4xf32, @m::@n, [replicate]>)

// -----

// expected-error @+1 {{!dist.tensor needs a static global shape; dimension 0 is dynamic}}
func.func @f(%a: !dist.tensor<?x4xf32, @m, [replicate]>)

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown mesh @nope: no dist.mesh with that name is visible here}}
  %0 = dist.all_gather %x on @nope axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{mesh @m has no axis 'ep'}}
  %0 = dist.all_reduce %x on @m axes [ep] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{mesh axis 'dp' is listed twice}}
  %0 = dist.all_gather %x on @m axes [dp, dp] dim 0 : tensor<4x8xf32> -> tensor<64x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{needs at least one mesh axis}}
  %0 = dist.all_reduce %x on @m axes [] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result dimension 0 has size 8, but gathering 4 from each of 4 ranks gives 16}}
  %0 = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

// k times the operand is checked without wrapping: 4 x 2^62 is not 0.
dist.mesh @m [dp = 4]
func.func @f(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{result dimension 0: gathering 4611686018427387904 from each of 4 ranks gives a size past 2^63 - 1}}
  %0 = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4611686018427387904xf32> -> tensor<0xf32>
  return
}

// -----

dist.mesh @m [dp = 2, tp = 4]
func.func @f(%x: tensor<2305843009213693952xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: result dimension 0: gathering 2305843009213693952 from each of 8 ranks gives a size past 2^63 - 1}}
  %0 = dist.gather_batch %x on @m axes [dp, tp] dims [0] roots [0] : (tensor<2305843009213693952xf32>) -> (tensor<0xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result dimension 1 has size 4 but the operand has 8}}
  %0 = dist.all_gather %x on @m axes [dp] dim 0 : tensor<4x8xf32> -> tensor<16x4xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for a rank-2 tensor}}
  %0 = dist.all_gather %x on @m axes [dp] dim 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the operand's 'f32'}}
  %0 = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf16>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result rank 1 differs from the operand rank 2}}
  %0 = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4x8xf32> -> tensor<32xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<10x8xf32>) {
  // expected-error @+1 {{result dimension 0 is static (3) but 10 does not split evenly over 4 ranks; use a dynamic size for uneven chunks}}
  %0 = dist.reduce_scatter %x on @m axes [dp] reduce sum dim 0 : tensor<10x8xf32> -> tensor<3x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{result dimension 0 has size 8, but splitting 16 over 4 ranks gives 4}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 : tensor<16x8xf32> -> tensor<8x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{result dimension 0 is static (4) but the operand size is dynamic; make it dynamic too}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 : tensor<?x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{root 4 is out of range for a group of 4 ranks}}
  %0 = dist.broadcast %x on @m axes [dp] root 4 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{root -1 is out of range for a group of 8 ranks}}
  %0 = dist.gather %x on @m axes [dp, tp] dim 0 root -1 : tensor<4x8xf32> -> tensor<32x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{root 2 is out of range for a group of 2 ranks}}
  %0 = dist.scatter %x on @m axes [tp] dim 0 root 2 : tensor<16x8xf32> -> tensor<8x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{result dimension 1 has size 8, but gathering 8 from each of 4 ranks gives 32}}
  %0 = dist.all_to_all %x on @m axes [dp] split 0 concat 1 : tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown reduction 'prod'; expected sum, avg, max or min}}
  %0 = dist.all_reduce %x on @m axes [tp] reduce prod : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  %0, %t = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>, !dist.token
  // expected-error @+1 {{token waited twice: operand 1 repeats an earlier operand}}
  dist.wait %t, %t
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  %0, %t = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4x8xf32> -> tensor<4x8xf32>, !dist.token
  // expected-error @+1 {{token waited twice: it has 2 dist.wait uses; a token is consumed by one wait}}
  dist.wait %t
  dist.wait %t
  return
}

//===----------------------------------------------------------------------===//
// Global and local views
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{cannot change the global shape}}
  %0 = dist.redistribute %a : !dist.tensor<16x8xf32, @m, [shard<0>]> -> !dist.tensor<8x16xf32, @m, [replicate]>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{cannot change the element type}}
  %0 = dist.redistribute %a : !dist.tensor<16x8xf32, @m, [shard<0>]> -> !dist.tensor<16x8xbf16, @m, [replicate]>
  return
}

// -----

dist.mesh @m [dp = 4]
dist.mesh @n [dp = 4]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{cannot move a tensor to another mesh (@m to @n)}}
  %0 = dist.redistribute %a : !dist.tensor<16x8xf32, @m, [shard<0>]> -> !dist.tensor<16x8xf32, @n, [replicate]>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{placement shard<2> on mesh axis 'dp': cannot shard along a dimension that doesn't exist}}
  %0 = dist.redistribute %a : !dist.tensor<16x8xf32, @m, [shard<0>]> -> !dist.tensor<16x8xf32, @m, [shard<2>]>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<10x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{local dimension 0 differs between ranks and must be dynamic, got 3}}
  %0 = dist.to_local %a : !dist.tensor<10x8xf32, @m, [shard<0>]> -> tensor<3x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{local dimension 0 is 4 on every rank, got 16}}
  %0 = dist.to_local %a : !dist.tensor<16x8xf32, @m, [shard<0>]> -> tensor<16x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>]>) {
  // expected-error @+1 {{local tensor must have rank 2 ('tensor<4x8xf32>'), got 1}}
  %0 = dist.to_local %a : !dist.tensor<16x8xf32, @m, [shard<0>]> -> tensor<32xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%l: tensor<4x8xf16>) {
  // expected-error @+1 {{local element type 'f16' differs from the global 'f32'}}
  %0 = dist.from_local %l : tensor<4x8xf16> -> !dist.tensor<16x8xf32, @m, [shard<0>]>
  return
}

//===----------------------------------------------------------------------===//
// Rank queries
//===----------------------------------------------------------------------===//

// -----

func.func @f() -> index {
  // expected-error @+1 {{unknown mesh @nope: no dist.mesh with that name is visible here}}
  %0 = dist.rank @nope
  return %0 : index
}

// -----

dist.mesh @m [dp = 4]
func.func @f() -> index {
  // expected-error @+1 {{mesh @m has no axis 'tp'}}
  %0 = dist.coord @m axes [tp]
  return %0 : index
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{has 3 sizes for a group of 4 ranks}}
  %0 = dist.gather %x on @m axes [dp] dim 0 root 0 sizes [4, 4, 8] : tensor<?x8xf32> -> tensor<16x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{sizes add up to 15 but the full tensor has 16 along dimension 0}}
  %0 = dist.gather %x on @m axes [dp] dim 0 root 0 sizes [4, 4, 4, 3] : tensor<?x8xf32> -> tensor<16x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{sizes must be non-negative, got -1}}
  %0 = dist.gather %x on @m axes [dp] dim 0 root 0 sizes [9, 8, 0, -1] : tensor<?x8xf32> -> tensor<16x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{piece dimension 0 is static (4) but the sizes give the ranks different pieces (9, 7, 0, 0); make it dynamic}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 sizes [9, 7, 0, 0] : tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{piece dimension 0 is static (5) but the sizes give every rank 4}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 sizes [4, 4, 4, 4] : tensor<16x8xf32> -> tensor<5x8xf32>
  return
}

// -----

// Weighted pieces (2, 2, 2, 10 of 16 rows) are checked as sizes are: a
// static piece must be every rank's.
dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.scatter' op piece dimension 0 is static (2) but the weights give the ranks different pieces (2, 2, 2, 10); make it dynamic}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 weights [1, 1, 1, 5] : tensor<16x8xf32> -> tensor<2x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'dist.gather' op piece dimension 0 is static (2) but the weights give the ranks different pieces (2, 2, 2, 10); make it dynamic}}
  %0 = dist.gather %x on @m axes [dp] dim 0 root 0 weights [1, 1, 1, 5] : tensor<2x8xf32> -> tensor<16x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op piece dimension 0 is static (2) but the weights give the ranks different pieces (2, 2, 2, 10); make it dynamic}}
  %0 = dist.reduce_scatter %x on @m axes [dp] reduce sum dim 0 weights [1, 1, 1, 5] : tensor<16x8xf32> -> tensor<2x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{piece dimension 0 is static (3) but the weights give every rank 4}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 weights [3, 3, 3, 3] : tensor<16x8xf32> -> tensor<3x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{`weights` has weights summing past 2^31; weights are proportions, scale them down}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 weights [1073741824, 1073741824, 1, 1] : tensor<16x8xf32> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{sizes add up to more than 2^62}}
  %0 = dist.gather %x on @m axes [dp] dim 0 root 0 sizes [4611686018427387904, 4611686018427387904, 0, 0] : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{weights must be positive, got 0}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 weights [1, 0, 1, 1] : tensor<16x8xf32> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{takes `sizes` or `weights`, not both}}
  %0 = dist.scatter %x on @m axes [dp] dim 0 root 0 sizes [4, 4, 4, 4] weights [1, 1, 1, 1] : tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// Rank counts are products of axis sizes: a mesh past 2^31 ranks is refused
// before any of them can overflow.
// expected-error @+1 {{'dist.mesh' op has more than 2^31 ranks (the product of its axis sizes); the largest supported mesh has 2^31}}
dist.mesh @huge [a = 65536, b = 65536, c = 2]

//===----------------------------------------------------------------------===//
// dist.gather_batch / dist.scatter_batch
//===----------------------------------------------------------------------===//

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f() {
  // expected-error @+1 {{'dist.gather_batch' op has no items}}
  "dist.gather_batch"() <{axes = ["dp"], dims = array<i64>, mesh = @m, roots = array<i64>, resultSegmentSizes = array<i32: 0, 0>}> : () -> ()
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op has 2 operands but 1 results}}
  %0 = dist.gather_batch %x, %x on @m axes [dp] dims [0, 0] roots [0, 1] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op has 2 items but 1 dims and 2 roots}}
  %0:2 = dist.gather_batch %x, %x on @m axes [dp] dims [0] roots [0, 1] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 1: dimension 2 is out of range for a rank-2 tensor}}
  %0:2 = dist.scatter_batch %x, %x on @m axes [tp] dims [0, 2] roots [0, 1] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<4x4xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: result element type 'f16' differs from the operand's 'f32'}}
  %0 = dist.gather_batch %x on @m axes [dp] dims [0] roots [0] : (tensor<4x8xf32>) -> (tensor<16x8xf16>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: result rank 1 differs from the operand rank 2}}
  %0 = dist.gather_batch %x on @m axes [dp] dims [0] roots [0] : (tensor<4x8xf32>) -> (tensor<16xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 1: root 4 is out of range for a group of 4 ranks}}
  %0:2 = dist.gather_batch %x, %x on @m axes [dp] dims [0, 0] roots [3, 4] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op has 1 arrays of sizes for 2 items (one per item; an empty one for the chunk rule)}}
  %0:2 = dist.gather_batch %x, %x on @m axes [dp] dims [0, 0] roots [0, 1] sizes [array<i64: 4, 4, 4, 4>] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op has 3 arrays of weights for 2 items (one per item; an empty one for the chunk rule)}}
  %0:2 = dist.scatter_batch %f, %f on @m axes [dp] dims [0, 0] roots [0, 1] weights [array<i64>, array<i64>, array<i64>] : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 1: takes `sizes` or `weights`, not both}}
  %0:2 = dist.gather_batch %x, %x on @m axes [dp] dims [0, 0] roots [0, 1] sizes [array<i64>, array<i64: 4, 4, 4, 4>] weights [array<i64>, array<i64: 1, 1, 1, 1>] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: has 3 sizes for a group of 4 ranks}}
  %0 = dist.gather_batch %x on @m axes [dp] dims [0] roots [0] sizes [array<i64: 4, 4, 8>] : (tensor<4x8xf32>) -> (tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: sizes add up to 15 but the full tensor has 16 along dimension 0}}
  %0 = dist.gather_batch %u on @m axes [dp] dims [0] roots [0] sizes [array<i64: 4, 4, 4, 3>] : (tensor<?x8xf32>) -> (tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: sizes must be non-negative, got -1}}
  %0 = dist.gather_batch %u on @m axes [dp] dims [0] roots [0] sizes [array<i64: 9, 8, 0, -1>] : (tensor<?x8xf32>) -> (tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 1: weights must be positive, got 0}}
  %0:2 = dist.scatter_batch %f, %f on @m axes [dp] dims [0, 0] roots [0, 1] weights [array<i64>, array<i64: 1, 0, 1, 1>] : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<?x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 0: piece dimension 0 is static (4) but the weights give the ranks different pieces (2, 6, 4, 4); make it dynamic}}
  %0 = dist.scatter_batch %f on @m axes [dp] dims [0] roots [0] weights [array<i64: 1, 3, 2, 2>] : (tensor<16x8xf32>) -> (tensor<4x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: result dimension 1 has size 9 but the operand has 8}}
  %0 = dist.gather_batch %u on @m axes [dp] dims [0] roots [0] sizes [array<i64: 4, 4, 4, 4>] : (tensor<?x8xf32>) -> (tensor<16x9xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 0: result dimension 0 is static (4) but the operand size is dynamic; make it dynamic too}}
  %0 = dist.scatter_batch %u on @m axes [dp] dims [0] roots [0] weights [array<i64: 1, 3, 2, 2>] : (tensor<?x8xf32>) -> (tensor<4x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{'dist.scatter' op result dimension 0 is static (4) but the operand size is dynamic; make it dynamic too}}
  %0 = dist.scatter %u on @m axes [dp] dim 0 root 0 weights [1, 1, 1, 1] : tensor<?x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 1: has 2 weights for a group of 4 ranks}}
  %0:2 = dist.scatter_batch %f, %f on @m axes [dp] dims [0, 0] roots [0, 1] weights [array<i64>, array<i64: 1, 3>] : (tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<?x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: piece dimension 0 is static (3) but the sizes give every rank 4}}
  %0 = dist.gather_batch %y on @m axes [dp] dims [0] roots [0] sizes [array<i64: 4, 4, 4, 4>] : (tensor<3x8xf32>) -> (tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>, %u: tensor<?x8xf32>, %f: tensor<16x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 0: sizes add up to more than 2^62}}
  %0 = dist.gather_batch %u on @m axes [dp] dims [0] roots [0] sizes [array<i64: 4611686018427387904, 1, 0, 0>] : (tensor<?x8xf32>) -> (tensor<?x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%f: tensor<16x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 0: `weights` has weights summing past 2^31; weights are proportions, scale them down}}
  %0 = dist.scatter_batch %f on @m axes [dp] dims [0] roots [0] weights [array<i64: 2147483647, 1, 1, 1>] : (tensor<16x8xf32>) -> (tensor<?x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op item 1: result dimension 1 has size 17, but gathering 8 from each of 2 ranks gives 16}}
  %0:2 = dist.gather_batch %x, %x on @m axes [tp] dims [0, 1] roots [0, 1] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<4x17xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%y: tensor<6x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 0: result dimension 0 is static (1) but 6 does not split evenly over 4 ranks; use a dynamic size for uneven chunks}}
  %0 = dist.scatter_batch %y on @m axes [dp] dims [0] roots [0] : (tensor<6x8xf32>) -> (tensor<1x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.scatter_batch' op item 0: result dimension 1 has size 4 but the operand has 8}}
  %0 = dist.scatter_batch %x on @m axes [dp] dims [0] roots [0] : (tensor<4x8xf32>) -> (tensor<1x4xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.gather_batch' op mesh @m has no axis 'ep'}}
  %0 = dist.gather_batch %x on @m axes [ep] dims [0] roots [0] : (tensor<4x8xf32>) -> (tensor<16x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.broadcast_batch' op has 2 items but 1 roots}}
  %0:2 = dist.broadcast_batch %x, %x on @m axes [dp] roots [0] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.broadcast_batch' op item 1: result dimension 1 has size 4 but the operand has 8}}
  %0:2 = dist.broadcast_batch %x, %x on @m axes [dp] roots [0, 1] : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.broadcast_batch' op item 0: root 2 is out of range for a group of 2 ranks}}
  %0 = dist.broadcast_batch %x on @m axes [tp] roots [2] : (tensor<4x8xf32>) -> (tensor<4x8xf32>)
  return
}

// -----

dist.mesh @m [dp = 4, tp = 2]
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.broadcast_batch' op item 0: result rank 1 differs from the operand rank 2}}
  %0 = dist.broadcast_batch %x on @m axes [tp] roots [1] : (tensor<4x8xf32>) -> (tensor<32xf32>)
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{has 2 weights for a group of 4 ranks}}
  %0 = dist.reduce_scatter %x on @m axes [dp] reduce sum dim 0 weights [1, 3] : tensor<16x8xf32> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
func.func @f(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{sizes add up to 12 but the full tensor has 16 along dimension 0}}
  %0 = dist.reduce_scatter %x on @m axes [dp] reduce sum dim 0 sizes [0, 12, 0, 0] : tensor<16x8xf32> -> tensor<?x8xf32>
  return
}

// -----

dist.mesh @m [dp = 4]
// expected-error @+1 {{flat storage needs a flat symbol (@group)}}
func.func @nested_group_symbol(%a: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@a::@g, 0>>) {
  return
}
