// An argument that is partial<max>: muon-redistribute-check builds an
// argument's value as the sum of its terms, so it refuses the pair.
dist.mesh @m [dp = 2]
!a = !dist.tensor<4x4xf32, @m, [partial<max>]>
!b = !dist.tensor<4x4xf32, @m, [replicate]>
func.func @check(%x: !a) -> !b {
  %r = dist.redistribute %x : !a -> !b
  return %r : !b
}
