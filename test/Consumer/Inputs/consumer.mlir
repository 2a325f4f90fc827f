dist.mesh @m [dp = 4, tp = 2]
func.func @f(%a: !dist.tensor<24x12xf32, @m, [replicate, shard<0>], storage = dim<0 on dp>>,
             %b: !dist.tensor<10x8xf32, @m, [shard<0>, replicate]>) {
  %0 = dist.to_local %a : !dist.tensor<24x12xf32, @m, [replicate, shard<0>], storage = dim<0 on dp>> -> tensor<3x12xf32>
  %1 = dist.to_local %b : !dist.tensor<10x8xf32, @m, [shard<0>, replicate]> -> tensor<?x8xf32>
  return
}
