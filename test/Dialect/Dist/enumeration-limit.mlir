// Passes that visit every rank refuse meshes over 2^20 ranks with an error
// at the op instead of running for hours (a 2^31-rank mesh used to hang
// each of them). Here: 8 x 131073 = 1048584 ranks.
// RUN: not muon-opt %s --muon-assign-owners -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASSIGN
// RUN: not muon-opt %s --muon-expand-step -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPAND
// RUN: not muon-opt %s --muon-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not muon-opt %s --convert-dist-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not muon-opt %s --dist-verify-spmd -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPMD
// RUN: not muon-opt %s --dist-print-layouts -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: not muon-opt %s --muon-to-llvm -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASSIGN

dist.mesh @m [dp = 8, rep = 131073]
!t = !dist.tensor<64x24xf32, @m, [shard<0>, replicate]>

// LOWER: enumeration-limit.mlir:[[# @LINE + 5]]:1: error: convert-dist-to-runtime visits every rank of mesh @m, which has 1048584 ranks; at most 1048576 are supported
// SPMD: enumeration-limit.mlir:[[# @LINE + 4]]:1: error: dist-verify-spmd visits every rank of mesh @m, which has 1048584 ranks; at most 1048576 are supported
// PRINT: enumeration-limit.mlir:[[# @LINE + 4]]:8: error: dist-print-layouts visits every rank of mesh @m, which has 1048584 ranks; at most 1048576 are supported
// PRINT-NOT: rank 0
// LOWER-NOT: error
func.func @lowered(%x: !t) -> !t {
  %l = dist.to_local %x : !t -> tensor<8x24xf32>
  %s = dist.all_reduce %l on @m axes [rep] reduce sum : tensor<8x24xf32> -> tensor<8x24xf32>
  %y = dist.from_local %s : tensor<8x24xf32> -> !t
  return %y : !t
}

// ASSIGN: enumeration-limit.mlir:[[# @LINE + 4]]:10: error: muon-assign-owners visits every rank of mesh @m, which has 1048584 ranks; at most 1048576 are supported
// EXPAND: enumeration-limit.mlir:[[# @LINE + 3]]:10: error: muon-expand-step visits every rank of mesh @m, which has 1048584 ranks; at most 1048576 are supported
// REPORT: enumeration-limit.mlir:[[# @LINE + 2]]:10: error: muon-report visits every rank of mesh @m, which has 1048584 ranks; at most 1048576 are supported
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0>}
  return %r#0, %r#1 : !t, !t
}
