dist.mesh @m [dp = 4]
func.func @f(%a: !dist.tensor<8xf32, @m, [shard<1>]>) {
  %0 = dist.to_local %a : !dist.tensor<8xf32, @m, [shard<1>]> -> tensor<2xf32>
  return
}
