// The to_local verifier reasons over the axes that split a tensor, not over
// every rank: a 2^31-rank mesh whose tensors are split over 8 ranks parses
// and verifies at once (it used to enumerate every rank and run out of
// memory).
// RUN: muon-opt %s | FileCheck %s
// A tensor split over more than 2^22 combinations of coordinates (here both
// axes of a 2^31-rank mesh) is not compared rank by rank: each dim a split
// cuts is dynamic (it took minutes and 23 GB).
// RUN: muon-opt %S/Inputs/split-over-2-31.mlir -verify-diagnostics -o /dev/null

// CHECK: dist.to_local {{.*}} -> tensor<8x24xf32>
// CHECK: dist.to_local {{.*}} -> tensor<?x24xf32>
dist.mesh @m [dp = 8, rep = 268435456]
func.func @f(%x: !dist.tensor<64x24xf32, @m, [shard<0>, replicate]>,
             %y: !dist.tensor<60x24xf32, @m, [shard<0>, replicate]>) -> (tensor<8x24xf32>, tensor<?x24xf32>) {
  %l = dist.to_local %x : !dist.tensor<64x24xf32, @m, [shard<0>, replicate]> -> tensor<8x24xf32>
  %k = dist.to_local %y : !dist.tensor<60x24xf32, @m, [shard<0>, replicate]> -> tensor<?x24xf32>
  return %l, %k : tensor<8x24xf32>, tensor<?x24xf32>
}
