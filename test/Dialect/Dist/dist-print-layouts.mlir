// RUN: muon-opt --dist-print-layouts -o /dev/null %s | FileCheck %s

// A flat group: tensors of 16, 8, 6, 4 elements (34 in all) split 9, 9,
// 9, 7 over 4 ranks; a tensor may span ranks.
dist.mesh @m [dp = 4]
dist.flat_group @g on @m[dp] numel [16, 8, 6, 4]

// CHECK-LABEL: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 0>>
// CHECK-NEXT: rank 0 (dp=0): elements [0, 9) of the flattened tensor
// CHECK-NEXT: rank 1 (dp=1): elements [9, 16) of the flattened tensor
// CHECK-NEXT: rank 2 (dp=2): elements [16, 16) of the flattened tensor (empty)
// CHECK-NEXT: rank 3 (dp=3): elements [16, 16) of the flattened tensor (empty)
// CHECK-LABEL: !dist.tensor<2x4xf32, @m, [replicate], storage = flat<@g, 1>>
// CHECK-NEXT: rank 0 (dp=0): elements [0, 0) of the flattened tensor (empty)
// CHECK-NEXT: rank 1 (dp=1): elements [0, 2) of the flattened tensor
// CHECK-NEXT: rank 2 (dp=2): elements [2, 8) of the flattened tensor
// CHECK-NEXT: rank 3 (dp=3): elements [8, 8) of the flattened tensor (empty)
// CHECK-LABEL: !dist.tensor<3x2xf32, @m, [replicate], storage = flat<@g, 2>>
// CHECK-NEXT: rank 0 (dp=0): elements [0, 0)
// CHECK-NEXT: rank 1 (dp=1): elements [0, 0)
// CHECK-NEXT: rank 2 (dp=2): elements [0, 3) of the flattened tensor
// CHECK-NEXT: rank 3 (dp=3): elements [3, 6) of the flattened tensor
// CHECK-LABEL: !dist.tensor<2x2xf32, @m, [replicate], storage = flat<@g, 3>>
// CHECK-NEXT: rank 0 (dp=0): elements [0, 0)
// CHECK-NEXT: rank 1 (dp=1): elements [0, 0)
// CHECK-NEXT: rank 2 (dp=2): elements [0, 0)
// CHECK-NEXT: rank 3 (dp=3): elements [0, 4) of the flattened tensor
func.func @flat(%t0: !dist.tensor<4x4xf32, @m, [replicate], storage = flat<@g, 0>>,
                %t1: !dist.tensor<2x4xf32, @m, [replicate], storage = flat<@g, 1>>,
                %t2: !dist.tensor<3x2xf32, @m, [replicate], storage = flat<@g, 2>>,
                %t3: !dist.tensor<2x2xf32, @m, [replicate], storage = flat<@g, 3>>) {
  return
}

// 10 rows over 4 ranks: 3, 3, 3, 1.
// CHECK-LABEL: !dist.tensor<10x8xf32, @m, [shard<0>]>
// CHECK-NEXT: rank 0 (dp=0): local 3x8 at offset [0, 0]
// CHECK-NEXT: rank 1 (dp=1): local 3x8 at offset [3, 0]
// CHECK-NEXT: rank 2 (dp=2): local 3x8 at offset [6, 0]
// CHECK-NEXT: rank 3 (dp=3): local 1x8 at offset [9, 0]
func.func @rows(%a: !dist.tensor<10x8xf32, @m, [shard<0>]>) {
  return
}


// A rank-0 tensor: every rank holds the scalar.
// CHECK-LABEL: !dist.tensor<f32, @m, [replicate]>
// CHECK-NEXT: rank 0 (dp=0): local scalar (rank 0)
// CHECK: rank 3 (dp=3): local scalar (rank 0)
func.func @scalar(%a: !dist.tensor<f32, @m, [replicate]>) {
  return
}
