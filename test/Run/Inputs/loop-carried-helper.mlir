// A helper beside a step, appended to a step on @m: a loop that carries a
// tensor through a collective yields a new buffer each iteration, which
// muon-place-deallocations leaves to MLIR's ownership-based pipeline.
func.func @repeat(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<4xf32> {
    %s = dist.all_reduce %t on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
