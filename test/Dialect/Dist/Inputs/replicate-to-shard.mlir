// Redistributions dist-lower-redistribute lowers to slices at per-rank
// offsets (a table indexed by dist.rank) and to a value kept on coordinate 0
// (verify-reduced.mlir runs dist-verify-reduced on the result).
dist.mesh @m [dp = 4, tp = 2]
!s0 = !dist.tensor<16x8xf32, @m, [shard<0>, replicate]>
!r = !dist.tensor<16x8xf32, @m, [replicate, replicate]>
!p = !dist.tensor<16x8xf32, @m, [partial<sum>, replicate]>
!s1 = !dist.tensor<16x8xf32, @m, [replicate, shard<1>]>
func.func @slice(%x: !r) -> !s0 {
  %y = dist.redistribute %x : !r -> !s0
  return %y : !s0
}
func.func @slice_over_tp(%x: !r) -> !s1 {
  %y = dist.redistribute %x : !r -> !s1
  return %y : !s1
}
func.func @to_partial(%x: !r) -> !p {
  %y = dist.redistribute %x : !r -> !p
  return %y : !p
}
