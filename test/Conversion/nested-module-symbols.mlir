// A module nested in another: the runtime functions a nested function calls
// are declared in the nested module, where its calls resolve, and the outer
// step's constant tables and kernels stay in the outer one (found by the
// fuzzer: the declarations went into the outer module, and the nested
// module did not verify).
// RUN: muon-opt %s --muon-expand-step --convert-muon-to-linalg --convert-muon-to-runtime --convert-dist-to-runtime | FileCheck %s
// RUN: muon-opt %s --muon-to-llvm -o /dev/null

// CHECK: module {
// CHECK-DAG: memref.global "private" constant @__muon_table_{{[0-9]+}} : memref<15xi64> = dense<[-1, 4, 2, 0, 2, 8, 1, 4, 8, 2, 6, 8, 3, 4, 8]>
// CHECK-DAG: func.func private @muon_rt_gather(
// CHECK-DAG: func.func @outer(
// CHECK: module @nested {
// CHECK-DAG: func.func private @muon_rt_comm(
// CHECK-DAG: func.func private @muon_rt_comm_rank(
// CHECK-DAG: memref.global "private" constant @__muon_table_{{[0-9]+}} : memref<1xi64>
// CHECK-DAG: func.func private @inner(
// CHECK-NOT: muon_rt_gather
// CHECK: }
dist.mesh @m [dp = 4]
!wtd = !dist.tensor<16x8xf32, @m, [replicate], storage = dim<0 on dp weights [1, 2, 3, 2]>>
func.func @outer(%p: !wtd, %g: !wtd, %m: !wtd) -> (!wtd, !wtd) {
  %r:2 = muon.step params(%p : !wtd) grads(%g : !wtd) momenta(%m : !wtd)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 1>}
  return %r#0, %r#1 : !wtd, !wtd
}
module @nested {
  dist.mesh @m [dp = 2]
  func.func private @inner(%x: tensor<4xf32>) -> index {
    %c = dist.coord @m axes [dp]
    return %c : index
  }
}
