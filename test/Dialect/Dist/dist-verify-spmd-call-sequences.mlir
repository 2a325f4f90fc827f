// dist-verify-spmd's simulation runs a callee's collectives where the call
// is, in order, with the caller's control flow around it.
// RUN: muon-opt %s -split-input-file --dist-verify-spmd=print-sequences -o /dev/null | FileCheck %s

// A condition on dp is uniform over the callee's tp communicators: the
// caller issues the callee's all_reduce on the dp = 0 ranks' communicator
// only (ranks 0 and 1). The callee is private and only called: it runs
// where it is called, and is not simulated as an entry point of its own.
dist.mesh @m [dp = 2, tp = 2]
func.func @by_dp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = dist.coord @m axes [dp]
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %d, %c0 : index
  %y = scf.if %first -> tensor<4xf32> {
    %a = func.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
// CHECK: communicator @m [tp] ranks {0, 1}: 1 collectives
// CHECK-NEXT: dist.all_reduce axes [tp]
// CHECK-NOT: communicator

// -----

// The same callee, public: an entry point too, simulated on its own on
// both tp communicators after the caller's.
dist.mesh @m [dp = 2, tp = 2]
func.func @by_dp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = dist.coord @m axes [dp]
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %d, %c0 : index
  %y = scf.if %first -> tensor<4xf32> {
    %a = func.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
func.func @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [tp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
// CHECK: communicator @m [tp] ranks {0, 1}: 1 collectives
// CHECK-NEXT: dist.all_reduce axes [tp]
// CHECK-NEXT: communicator @m [tp] ranks {0, 1}: 1 collectives
// CHECK-NEXT: dist.all_reduce axes [tp]
// CHECK-NEXT: communicator @m [tp] ranks {2, 3}: 1 collectives

// -----

// In order: the callee's all_reduce, then the caller's own two.
dist.mesh @m [dp = 2]
func.func @in_order(%x: tensor<4xf32>) -> tensor<8xf32> {
  %a = func.call @reduce(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = dist.all_gather %a on @m axes [dp] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %c = dist.all_reduce %b on @m axes [dp] reduce max : tensor<8xf32> -> tensor<8xf32>
  return %c : tensor<8xf32>
}
func.func private @reduce(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
// CHECK: communicator @m [dp] ranks {0, 1}: 3 collectives
// CHECK-NEXT: dist.all_reduce axes [dp] {{.*}}sum
// CHECK-NEXT: dist.all_gather axes [dp]
// CHECK-NEXT: dist.all_reduce axes [dp] {{.*}}max
