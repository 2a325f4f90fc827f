// muon-bufferize runs the in-place analysis only where it has something to
// decide: it skips an entry whose writes all go to fresh destinations, and
// analyses one that writes into a tensor with contents (a piece of an
// assembled tensor, an argument, another op's result), reads a fresh
// destination it writes, writes one in a loop below it, is a callee,
// carries a tensor through a loop or calls with tensors. Either way the
// buffers are those the analysis gives.
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
// ALWAYS-COUNT-11: remark: bufferized with the in-place analysis
// ALWAYS-NOT: without the in-place analysis
// expected-remark @below {{bufferized without the in-place analysis (every written tensor is a fresh destination)}}
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

// A write into an argument: the analysis writes in place into its buffer,
// where the other mode would allocate a new one.
// CHECK-LABEL: func.func @into_argument(
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.fill {{.*}} outs(%[[X]] : memref<4xf32>)
// CHECK:         return %[[X]]
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @into_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// A piece inserted into a fresh tensor: the insert reads its destination
// (the rest of it), so without the analysis its undefined contents would
// be copied into a new buffer first.
// CHECK-LABEL: func.func @partial_insert(
// CHECK:         memref.alloc()
// CHECK-NOT:     memref.alloc()
// CHECK-NOT:     memref.copy %{{.*}}, %{{.*}} : memref<8xf32> to memref<8xf32>
// CHECK:         return
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @partial_insert(%piece: tensor<4xf32>) -> tensor<8xf32> {
  %e = bufferization.alloc_tensor() : tensor<8xf32>
  %r = tensor.insert_slice %piece into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A fresh destination written in a loop below it: without the analysis
// the loop would allocate on every iteration.
// CHECK-LABEL: func.func @fill_in_loop(
// CHECK:         memref.alloc()
// CHECK:         scf.for
// CHECK-NOT:     memref.alloc()
// CHECK:         return
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @fill_in_loop(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %e = bufferization.alloc_tensor() : tensor<1024xf32>
  scf.for %i = %c0 to %n step %c1 {
    %f = linalg.fill ins(%one : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
    %v = tensor.extract %f[%i] : tensor<1024xf32>
    memref.store %v, %out[%i] : memref<?xf32>
  }
  return
}

// -----

#id2 = affine_map<(d0) -> (d0)>

// A write-only op into the result of another: the analysis writes it in
// place, where the other mode would allocate again.
// CHECK-LABEL: func.func @fill_then_overwrite(
// CHECK:         memref.alloc()
// CHECK-NOT:     memref.alloc()
// CHECK:         return
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @fill_then_overwrite(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = bufferization.alloc_tensor() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
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

// A loop whose body yields a new tensor (not its iteration argument's
// buffer): each iteration yields its own allocation, which the
// deallocation passes free (upstream's allow-return-allocs-from-loops);
// without it bufferization stopped at "Yield operand #0 is not equivalent
// to the corresponding iter bbArg".
// CHECK-LABEL: func.func @loop_yields_new(
// CHECK:         scf.for {{.*}} iter_args(%[[T:.*]] = %{{.*}}) -> (memref<4xf32>)
// CHECK:           %[[N:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK:           linalg.generic {{.*}} ins(%[[T]] : memref<4xf32>) outs(%[[N]] : memref<4xf32>)
// CHECK:           scf.yield %[[N]] : memref<4xf32>
#id3 = affine_map<(d0) -> (d0)>
// expected-remark @below {{bufferized with the in-place analysis}}
func.func @loop_yields_new(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<4xf32> {
    %e = bufferization.alloc_tensor() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel"]}
        ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.mulf %a, %a : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// One module, each function bufferized its own way.
// CHECK-LABEL: func.func @fresh_beside(
// CHECK:         memref.alloc()
// CHECK-NOT:     memref.copy
// CHECK:         return
// expected-remark @below {{bufferized without the in-place analysis (every written tensor is a fresh destination)}}
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
