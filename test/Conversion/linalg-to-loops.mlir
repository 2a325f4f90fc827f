// muon-linalg-to-loops: upstream's convert-linalg-to-loops on a function
// that holds a linalg op; a function without one is left as it is
// (upstream's driver would have folded its addition).
// RUN: muon-opt %s --pass-pipeline='builtin.module(func.func(muon-linalg-to-loops))' | FileCheck %s
// RUN: muon-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-loops))' | FileCheck %s --check-prefix=UPSTREAM

#map = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @kernel(
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: memref.store
func.func @kernel(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  return
}

// CHECK-LABEL: func.func @glue(
// CHECK: arith.addi
// UPSTREAM-LABEL: func.func @glue(
// UPSTREAM-NOT: arith.addi
func.func @glue() -> index {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = arith.addi %c1, %c2 : index
  return %s : index
}
