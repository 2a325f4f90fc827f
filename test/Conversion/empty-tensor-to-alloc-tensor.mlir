// muon-empty-tensor-to-alloc-tensor: every tensor.empty, nested ones too,
// becomes a bufferization.alloc_tensor with the same sizes, in one walk;
// nothing else is touched (the foldable addition stays).
// RUN: muon-opt %s --muon-empty-tensor-to-alloc-tensor | FileCheck %s

// CHECK-LABEL: func.func @placeholders(%arg0: index, %arg1: i1)
// CHECK-NOT: tensor.empty
// CHECK: %[[A:.*]] = bufferization.alloc_tensor() : tensor<4x8xf32>
// CHECK: %[[B:.*]] = bufferization.alloc_tensor(%arg0) : tensor<?x8xf32>
// CHECK: %[[S:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: scf.if %arg1
// CHECK-NEXT: bufferization.alloc_tensor() : tensor<2xf32>
// CHECK: return %[[A]], %[[B]], %[[S]],
func.func @placeholders(%n: index, %c: i1)
    -> (tensor<4x8xf32>, tensor<?x8xf32>, index, tensor<2xf32>) {
  %a = tensor.empty() : tensor<4x8xf32>
  %b = tensor.empty(%n) : tensor<?x8xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = arith.addi %c1, %c2 : index
  %r = scf.if %c -> tensor<2xf32> {
    %e = tensor.empty() : tensor<2xf32>
    scf.yield %e : tensor<2xf32>
  } else {
    %z = arith.constant dense<0.0> : tensor<2xf32>
    scf.yield %z : tensor<2xf32>
  }
  return %a, %b, %s, %r : tensor<4x8xf32>, tensor<?x8xf32>, index, tensor<2xf32>
}
