// Functions in nested modules are lowered like top-level ones (each gets
// its communicators), and private functions publish no role table.
// RUN: muon-opt %s --muon-expand-step --convert-muon-to-linalg --convert-muon-to-runtime --convert-dist-to-runtime | FileCheck %s

// CHECK-NOT: @__muon_roles_inner
// CHECK: module @nested
// CHECK: func.func private @inner
// CHECK: call @muon_rt_comm(
// CHECK: call @muon_rt_comm_rank(
module @nested {
  dist.mesh @m [dp = 2]
  func.func private @inner(%x: tensor<4xf32>) -> index {
    %c = dist.coord @m axes [dp]
    return %c : index
  }
}
