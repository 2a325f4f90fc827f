// muon-bufferize analyses a function only where the in-place analysis can
// save a copy: it skips an entry whose writes all go to fresh destinations,
// and analyses one that writes into a tensor with contents, a callee, and
// one whose loop carries a tensor or that calls with tensors. Either way
// no copy is made that the analysis would avoid.
// RUN: muon-opt %s --split-input-file --muon-bufferize=remarks=true -verify-diagnostics | FileCheck %s
// The expectations are for the default; with always-analyse they would not
// hold, so that run reads the file without them.
// RUN: sed 's/expected-remark/remark-without-always-analyse/' %s | muon-opt --split-input-file --muon-bufferize="always-analyse=true remarks=true" 2>&1 | FileCheck %s --check-prefix=ALWAYS

#id = affine_map<(d0) -> (d0)>

// Every write goes to a fresh destination whose old contents nothing
// reads: one allocation per write, no copy, as with the analysis.
// CHECK-LABEL: func.func @fresh(
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<4xf32>) outs(%[[D]] : memref<4xf32>)
// CHECK-NOT:     memref.copy
// CHECK:         return %[[D]]
// With always-analyse, every function is analysed.
// ALWAYS-NOT: without the in-place analysis
// ALWAYS-COUNT-7: remark: bufferized with the in-place analysis
// ALWAYS-NOT: without the in-place analysis
// expected-remark @below {{bufferized without the in-place analysis (no write it could save a copy of)}}
func.func @fresh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = bufferization.alloc_tensor() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A piece inserted into an assembled tensor: the analysis writes it in
// place; without it (upstream's copy-before-write) the whole destination
// would be copied first.
// CHECK-LABEL: func.func @assemble(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         linalg.fill {{.*}} outs(%[[D]] : memref<8xf32>)
// CHECK-NOT:     memref.copy %{{.*}}, %{{.*}} : memref<8xf32> to memref<8xf32>
// CHECK:         %[[S:.*]] = memref.subview %[[D]][4] [4] [1]
// CHECK:         memref.copy %{{.*}}, %[[S]]
// CHECK:         return %[[D]]
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @assemble(%piece: tensor<4xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = bufferization.alloc_tensor() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = tensor.insert_slice %piece into %z[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A callee keeps the analysis (its callers learn from it), although its
// own writes all go to fresh destinations; so does its caller, whose call
// passes a tensor.
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = bufferization.alloc_tensor() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// expected-remark @below {{bufferized with the in-place analysis}}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A loop carrying a tensor keeps the analysis.
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @loop(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<4xf32> {
    scf.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// One module, each function bufferized its own way.
// CHECK-LABEL: func.func @fresh_beside(
// CHECK:         memref.alloc()
// CHECK-NOT:     memref.copy
// CHECK:         return
// expected-remark @below {{bufferized without the in-place analysis (no write it could save a copy of)}}
func.func @fresh_beside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = bufferization.alloc_tensor() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// CHECK-LABEL: func.func @assemble_beside(
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK-NOT:     memref.copy %{{.*}}, %{{.*}} : memref<8xf32> to memref<8xf32>
// CHECK:         %[[S:.*]] = memref.subview %[[D]][0] [4] [1]
// CHECK:         memref.copy %{{.*}}, %[[S]]
// CHECK:         return %[[D]]
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @assemble_beside(%piece: tensor<4xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = bufferization.alloc_tensor() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = tensor.insert_slice %piece into %z[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}
