// Input of large-mesh.mlir: a tensor split over both axes of a 2^31-rank
// mesh; its local dim 0 may only be declared dynamic.
dist.mesh @m [dp = 65536, tp = 32768]
func.func @f(%x: !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>]>) -> tensor<?x8xf32> {
  %l = dist.to_local %x : !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>]> -> tensor<?x8xf32>
  return %l : tensor<?x8xf32>
}
func.func @g(%x: !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>]>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'dist.to_local' op local dimension 0 must be dynamic: the tensor is split over 2147483648 combinations of mesh coordinates, more than the 4194304 whose local shapes the verifier compares; got 1}}
  %l = dist.to_local %x : !dist.tensor<16x8xf32, @m, [shard<0>, shard<0>]> -> tensor<1x8xf32>
  return %l : tensor<1x8xf32>
}
