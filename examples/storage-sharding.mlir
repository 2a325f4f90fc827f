// Memory-only storage sharding, as dist IR: six use cases (FSDP2 per-tensor
// dim, BSDP 2-D blocks and a weighted split, FSDP1 flat groups, Muon's whole
// tensors on one owner, veScale's weighted element split, FSDP storage on TP
// shards). Storage sharding splits only memory: the tensor is replicated for
// compute, each rank stores a part, and the full tensor is gathered when
// needed. Every dist.to_local states the local shape the layout gives;
// muon-opt's verifier recomputes it with the layout API and rejects the file
// if any of them is wrong.
//
//   muon-opt examples/storage-sharding.mlir

dist.mesh @dp8 [dp = 8]
dist.mesh @blocks [dp_row = 4, dp_col = 2]
dist.mesh @fsdp_tp [dp = 4, tp = 2]

// Use case 1 - FSDP2: every tensor split on dim 0 over dp=8.
// CHECK-LABEL: func.func @fsdp2
func.func @fsdp2(
    %w0: !dist.tensor<16x8xf32, @dp8, [replicate], storage = dim<0 on dp>>,
    %w1: !dist.tensor<32x4xf32, @dp8, [replicate], storage = dim<0 on dp>>,
    %w2: !dist.tensor<8x16xf32, @dp8, [replicate], storage = dim<0 on dp>>,
    %w3: !dist.tensor<24x12xf32, @dp8, [replicate], storage = dim<0 on dp>>)
    -> tensor<16x8xf32> {
  // CHECK: -> tensor<2x8xf32>
  %l0 = dist.to_local %w0 : !dist.tensor<16x8xf32, @dp8, [replicate], storage = dim<0 on dp>> -> tensor<2x8xf32>
  // CHECK: -> tensor<4x4xf32>
  %l1 = dist.to_local %w1 : !dist.tensor<32x4xf32, @dp8, [replicate], storage = dim<0 on dp>> -> tensor<4x4xf32>
  // CHECK: -> tensor<1x16xf32>
  %l2 = dist.to_local %w2 : !dist.tensor<8x16xf32, @dp8, [replicate], storage = dim<0 on dp>> -> tensor<1x16xf32>
  // CHECK: -> tensor<3x12xf32>
  %l3 = dist.to_local %w3 : !dist.tensor<24x12xf32, @dp8, [replicate], storage = dim<0 on dp>> -> tensor<3x12xf32>
  // Unshard: one all-gather on dim 0.
  // CHECK: dist.all_gather %{{.*}} on @dp8 axes [dp] dim 0
  %full = dist.all_gather %l0 on @dp8 axes [dp] dim 0 : tensor<2x8xf32> -> tensor<16x8xf32>
  return %full : tensor<16x8xf32>
}

// Use case 2 - BSDP: (16, 8) in (4, 4) blocks over (dp_row=4, dp_col=2).
// CHECK-LABEL: func.func @bsdp
func.func @bsdp(%w: !dist.tensor<16x8xf32, @blocks, [replicate, replicate], storage = block<0 on dp_row, 1 on dp_col>>) -> tensor<16x8xf32> {
  // CHECK: -> tensor<4x4xf32>
  %l = dist.to_local %w : !dist.tensor<16x8xf32, @blocks, [replicate, replicate], storage = block<0 on dp_row, 1 on dp_col>> -> tensor<4x4xf32>
  // Unshard: two all-gathers, the inner split (dim 1) first.
  %rows = dist.all_gather %l on @blocks axes [dp_col] dim 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  %full = dist.all_gather %rows on @blocks axes [dp_row] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  return %full : tensor<16x8xf32>
}

// Use case 2b - weighted: 16 rows over 3 ranks with weights [1, 2, 1] is
// 4, 8, 4 rows, so the local row count is dynamic.
dist.mesh @dp3 [dp = 3]
// CHECK-LABEL: func.func @weighted
func.func @weighted(%w: !dist.tensor<16x8xf32, @dp3, [replicate], storage = dim<0 on dp weights [1, 2, 1]>>) {
  // CHECK: -> tensor<?x8xf32>
  %l = dist.to_local %w : !dist.tensor<16x8xf32, @dp3, [replicate], storage = dim<0 on dp weights [1, 2, 1]>> -> tensor<?x8xf32>
  return
}

// Use case 3 - FSDP1: the four tensors (672 elements) flattened and split by
// elements, 84 per rank; a tensor may span ranks.
dist.flat_group @fsdp1_group on @dp8[dp] numel [128, 128, 128, 288]
// CHECK-LABEL: func.func @fsdp1
func.func @fsdp1(
    %w0: !dist.tensor<16x8xf32, @dp8, [replicate], storage = flat<@fsdp1_group, 0>>,
    %w3: !dist.tensor<24x12xf32, @dp8, [replicate], storage = flat<@fsdp1_group, 3>>) {
  // Member 0 (elements 0..127): 84 on rank 0, 44 on rank 1, none elsewhere.
  // CHECK: -> tensor<?xf32>
  %l0 = dist.to_local %w0 : !dist.tensor<16x8xf32, @dp8, [replicate], storage = flat<@fsdp1_group, 0>> -> tensor<?xf32>
  %l3 = dist.to_local %w3 : !dist.tensor<24x12xf32, @dp8, [replicate], storage = flat<@fsdp1_group, 3>> -> tensor<?xf32>
  return
}

// Use case 4 - Muon: whole tensors, one per rank (round-robin over 4 of 8).
// CHECK-LABEL: func.func @muon_whole
func.func @muon_whole(
    %w0: !dist.tensor<16x8xf32, @dp8, [replicate], storage = whole<on dp owner 0>>,
    %w1: !dist.tensor<32x4xf32, @dp8, [replicate], storage = whole<on dp owner 1>>,
    %w2: !dist.tensor<8x16xf32, @dp8, [replicate], storage = whole<on dp owner 2>>,
    %w3: !dist.tensor<24x12xf32, @dp8, [replicate], storage = whole<on dp owner 3>>) -> tensor<16x8xf32> {
  // The owner holds 16 rows, the others none.
  // CHECK: -> tensor<?x8xf32>
  %l0 = dist.to_local %w0 : !dist.tensor<16x8xf32, @dp8, [replicate], storage = whole<on dp owner 0>> -> tensor<?x8xf32>
  // Unshard: broadcast from the owner.
  %buf = tensor.empty() : tensor<16x8xf32>
  // CHECK: dist.broadcast %{{.*}} on @dp8 axes [dp] root 0
  %full = dist.broadcast %buf on @dp8 axes [dp] root 0 : tensor<16x8xf32> -> tensor<16x8xf32>
  return %full : tensor<16x8xf32>
}

// Use case 5 - veScale: weighted element split, rank 1 holds twice as much.
dist.flat_group @vescale_group on @dp8[dp] numel [810] weights [1, 2, 1, 1, 1, 1, 1, 1]
// CHECK-LABEL: func.func @vescale
func.func @vescale(%w: !dist.tensor<27x30xf32, @dp8, [replicate], storage = flat<@vescale_group, 0>>) {
  // 90, 180, 90, ... elements.
  // CHECK: -> tensor<?xf32>
  %l = dist.to_local %w : !dist.tensor<27x30xf32, @dp8, [replicate], storage = flat<@vescale_group, 0>> -> tensor<?xf32>
  return
}

// Use case 6 - FSDP storage on top of TP shards, mesh (dp=4, tp=2).
// TP is the outer split; storage splits the TP-local block.
// CHECK-LABEL: func.func @fsdp_on_tp
func.func @fsdp_on_tp(
    %w0: !dist.tensor<16x8xf32, @fsdp_tp, [replicate, shard<1>], storage = dim<0 on dp>>,
    %w1: !dist.tensor<32x4xf32, @fsdp_tp, [replicate, shard<0>], storage = dim<0 on dp>>,
    %w2: !dist.tensor<8x16xf32, @fsdp_tp, [replicate, shard<1>], storage = dim<0 on dp>>,
    %w3: !dist.tensor<24x12xf32, @fsdp_tp, [replicate, shard<0>], storage = dim<0 on dp>>) {
  // CHECK: -> tensor<4x4xf32>
  %l0 = dist.to_local %w0 : !dist.tensor<16x8xf32, @fsdp_tp, [replicate, shard<1>], storage = dim<0 on dp>> -> tensor<4x4xf32>
  // CHECK: -> tensor<4x4xf32>
  %l1 = dist.to_local %w1 : !dist.tensor<32x4xf32, @fsdp_tp, [replicate, shard<0>], storage = dim<0 on dp>> -> tensor<4x4xf32>
  // CHECK: -> tensor<2x8xf32>
  %l2 = dist.to_local %w2 : !dist.tensor<8x16xf32, @fsdp_tp, [replicate, shard<1>], storage = dim<0 on dp>> -> tensor<2x8xf32>
  // CHECK: -> tensor<3x12xf32>
  %l3 = dist.to_local %w3 : !dist.tensor<24x12xf32, @fsdp_tp, [replicate, shard<0>], storage = dim<0 on dp>> -> tensor<3x12xf32>
  // Unshard: storage first (inner, dp), then TP (outer).
  %tp_shard = dist.all_gather %l3 on @fsdp_tp axes [dp] dim 0 : tensor<3x12xf32> -> tensor<12x12xf32>
  %full = dist.all_gather %tp_shard on @fsdp_tp axes [tp] dim 0 : tensor<12x12xf32> -> tensor<24x12xf32>
  return
}
