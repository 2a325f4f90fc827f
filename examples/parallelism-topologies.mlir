// Common parallelism topologies (FSDP, TP, DDP, HSDP, TP + FSDP nested both
// ways, EP, CP, 3-D dp x fsdp x tp, uneven splits) as dist layouts. Every
// dist.to_local states the local block each rank holds; muon-opt's verifier
// recomputes it with the layout API and rejects any wrong shape.
//
//   muon-opt examples/parallelism-topologies.mlir

// FSDP over 4 ranks: parameters sharded on dim 0.
dist.mesh @fsdp_mesh [dp = 4]
// CHECK-LABEL: func.func @fsdp
func.func @fsdp(%w: !dist.tensor<1024x512xf32, @fsdp_mesh, [shard<0>]>) {
  // CHECK: -> tensor<256x512xf32>
  %l = dist.to_local %w : !dist.tensor<1024x512xf32, @fsdp_mesh, [shard<0>]> -> tensor<256x512xf32>
  return
}

// TP over 2 ranks, the TP dim chosen per parameter. A weight is stored as
// (out_features, in_features), as in PyTorch's nn.Linear: column-parallel
// layers split the output dim 0 (shard<0>), row-parallel the input dim 1
// (shard<1>).
dist.mesh @tp_mesh [tp = 2]
// CHECK-LABEL: func.func @tp_col_row
func.func @tp_col_row(%q: !dist.tensor<1024x512xf32, @tp_mesh, [shard<0>]>,
                      %o: !dist.tensor<512x1024xf32, @tp_mesh, [shard<1>]>) {
  // CHECK: -> tensor<512x512xf32>
  %lq = dist.to_local %q : !dist.tensor<1024x512xf32, @tp_mesh, [shard<0>]> -> tensor<512x512xf32>
  // CHECK: -> tensor<512x512xf32>
  %lo = dist.to_local %o : !dist.tensor<512x1024xf32, @tp_mesh, [shard<1>]> -> tensor<512x512xf32>
  return
}

// DDP: parameters replicated; a `reduced` parameter's gradient is partial.
dist.mesh @ddp_mesh [dp = 4]
// CHECK-LABEL: func.func @ddp
func.func @ddp(%w: !dist.tensor<256x256xf32, @ddp_mesh, [reduced]>,
               %g: !dist.tensor<256x256xf32, @ddp_mesh, [partial<sum>]>) {
  %lg = dist.to_local %g : !dist.tensor<256x256xf32, @ddp_mesh, [partial<sum>]> -> tensor<256x256xf32>
  // CHECK: dist.all_reduce %{{.*}} on @ddp_mesh axes [dp] reduce sum
  %sum = dist.all_reduce %lg on @ddp_mesh axes [dp] reduce sum : tensor<256x256xf32> -> tensor<256x256xf32>
  return
}

// HSDP: 2 replicas of a 4-way FSDP shard group.
dist.mesh @hsdp_mesh [replica = 2, shard = 4]
// CHECK-LABEL: func.func @hsdp
func.func @hsdp(%w: !dist.tensor<1024x512xf32, @hsdp_mesh, [replicate, shard<0>]>) {
  // CHECK: -> tensor<256x512xf32>
  %l = dist.to_local %w : !dist.tensor<1024x512xf32, @hsdp_mesh, [replicate, shard<0>]> -> tensor<256x512xf32>
  return
}

// TP + FSDP, FSDP outer (so the gather undoes TP first, then FSDP). Same dim:
// dp splits 1024 rows into 512, tp splits those into 256.
dist.mesh @fsdp_tp_mesh [dp = 2, tp = 2]
// CHECK-LABEL: func.func @fsdp_outer_tp_inner
func.func @fsdp_outer_tp_inner(
    %same: !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [shard<0>, shard<0>]>,
    %cross: !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [shard<0>, shard<1>]>) {
  // CHECK: -> tensor<256x512xf32>
  %a = dist.to_local %same : !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [shard<0>, shard<0>]> -> tensor<256x512xf32>
  // CHECK: -> tensor<512x256xf32>
  %b = dist.to_local %cross : !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [shard<0>, shard<1>]> -> tensor<512x256xf32>
  // Gather the inner split (tp) first, then the outer (dp).
  %t = dist.all_gather %a on @fsdp_tp_mesh axes [tp] dim 0 : tensor<256x512xf32> -> tensor<512x512xf32>
  %f = dist.all_gather %t on @fsdp_tp_mesh axes [dp] dim 0 : tensor<512x512xf32> -> tensor<1024x512xf32>
  return
}

// TP + FSDP, TP outer: the same placements with the nesting stated, and
// FSDP storage on TP shards (memory-only storage splitting the TP-local
// block; see storage-sharding.mlir, use case 6).
// CHECK-LABEL: func.func @tp_outer_fsdp_inner
func.func @tp_outer_fsdp_inner(
    %ordered: !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [shard<0>, shard<0>], order = {0 = [tp, dp]}>,
    %storage: !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [replicate, shard<0>], storage = dim<0 on dp>>) {
  // CHECK: order = {0 = [tp, dp]}> -> tensor<256x512xf32>
  %a = dist.to_local %ordered : !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [shard<0>, shard<0>], order = {0 = [tp, dp]}> -> tensor<256x512xf32>
  // CHECK: storage = dim<0 on dp>> -> tensor<256x512xf32>
  %b = dist.to_local %storage : !dist.tensor<1024x512xf32, @fsdp_tp_mesh, [replicate, shard<0>], storage = dim<0 on dp>> -> tensor<256x512xf32>
  // Gather the inner split (dp) first, then the outer (tp).
  %t = dist.all_gather %a on @fsdp_tp_mesh axes [dp] dim 0 : tensor<256x512xf32> -> tensor<512x512xf32>
  %f = dist.all_gather %t on @fsdp_tp_mesh axes [tp] dim 0 : tensor<512x512xf32> -> tensor<1024x512xf32>
  return
}

// EP: 8 experts over 4 expert-parallel ranks (2 each); dense weights replicate.
dist.mesh @ep_mesh [ep = 4]
// CHECK-LABEL: func.func @expert_parallel
func.func @expert_parallel(%experts: !dist.tensor<8x512x256xf32, @ep_mesh, [shard<0>]>,
                           %router: !dist.tensor<8x512xf32, @ep_mesh, [replicate]>) {
  // CHECK: -> tensor<2x512x256xf32>
  %l = dist.to_local %experts : !dist.tensor<8x512x256xf32, @ep_mesh, [shard<0>]> -> tensor<2x512x256xf32>
  // CHECK: -> tensor<8x512xf32>
  %r = dist.to_local %router : !dist.tensor<8x512xf32, @ep_mesh, [replicate]> -> tensor<8x512xf32>
  return
}

// CP: parameters replicate over the context-parallel axis, FSDP over dp.
dist.mesh @cp_mesh [cp = 2, dp = 2]
// CHECK-LABEL: func.func @context_parallel
func.func @context_parallel(%w: !dist.tensor<512x512xf32, @cp_mesh, [replicate, shard<0>]>) {
  // CHECK: -> tensor<256x512xf32>
  %l = dist.to_local %w : !dist.tensor<512x512xf32, @cp_mesh, [replicate, shard<0>]> -> tensor<256x512xf32>
  return
}

// 3-D: data-parallel replicas x FSDP x TP (mesh dp x fsdp x tp).
dist.mesh @three_d_mesh [dp = 2, fsdp = 2, tp = 2]
// CHECK-LABEL: func.func @three_d
func.func @three_d(%col: !dist.tensor<1024x512xf32, @three_d_mesh, [replicate, shard<0>, shard<0>]>,
                   %row: !dist.tensor<512x1024xf32, @three_d_mesh, [replicate, shard<0>, shard<1>]>) {
  // CHECK: -> tensor<256x512xf32>
  %a = dist.to_local %col : !dist.tensor<1024x512xf32, @three_d_mesh, [replicate, shard<0>, shard<0>]> -> tensor<256x512xf32>
  // CHECK: -> tensor<256x512xf32>
  %b = dist.to_local %row : !dist.tensor<512x1024xf32, @three_d_mesh, [replicate, shard<0>, shard<1>]> -> tensor<256x512xf32>
  return
}

// Uneven: 1000x999 over 8 ranks, 7x5 over 4, and 2 rows over 4 (empty shards).
dist.mesh @eight_mesh [dp = 8]
dist.mesh @four_mesh [dp = 4]
// CHECK-LABEL: func.func @uneven
func.func @uneven(%a: !dist.tensor<1000x999xf32, @eight_mesh, [shard<1>]>,
                  %b: !dist.tensor<7x5xf32, @four_mesh, [shard<0>]>,
                  %c: !dist.tensor<2x5xf32, @four_mesh, [shard<0>]>) {
  // ceil(999/8) = 125: seven ranks hold 125 columns, the last 124.
  // CHECK: -> tensor<1000x?xf32>
  %la = dist.to_local %a : !dist.tensor<1000x999xf32, @eight_mesh, [shard<1>]> -> tensor<1000x?xf32>
  // CHECK: -> tensor<?x5xf32>
  %lb = dist.to_local %b : !dist.tensor<7x5xf32, @four_mesh, [shard<0>]> -> tensor<?x5xf32>
  // CHECK: -> tensor<?x5xf32>
  %lc = dist.to_local %c : !dist.tensor<2x5xf32, @four_mesh, [shard<0>]> -> tensor<?x5xf32>
  return
}
