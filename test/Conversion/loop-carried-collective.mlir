// A loop that carries a tensor through a collective: the collective's
// result is a new buffer, not the iteration argument's, so each iteration
// yields its own allocation and the buffer of the one before is freed
// when it has been read (MLIR's ownership-based deallocation, which takes
// a function with a loop carrying a buffer). Before, bufferization stopped
// at "Yield operand #0 is not equivalent to the corresponding iter bbArg".

// RUN: muon-opt %s --muon-to-llvm --mlir-print-ir-after=muon-place-deallocations -o %t.ll.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=LLVM < %t.ll.mlir

dist.mesh @m [dp = 2]

// CHECK-LABEL: func.func @repeat(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<4xf32>, %[[N:[a-z0-9]+]]: index
// CHECK:         %[[L:.*]]:2 = scf.for {{.*}} to %[[N]] {{.*}} iter_args(%[[T:.*]] = %[[X]], %[[OWN:.*]] = %false) -> (memref<4xf32>, i1)
// CHECK:           %[[R:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK:           call @muon_rt_all_reduce
// CHECK:           %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[T]]
// CHECK:           scf.if %[[OWN]] {
// CHECK-NEXT:        memref.dealloc %[[BASE]]
// CHECK:           scf.yield %[[R]], %true
// CHECK:         memref.copy %[[L]]#0
// CHECK:         scf.if %[[L]]#1 {
// CHECK-NEXT:      memref.dealloc
// LLVM: llvm.func @_mlir_ciface_repeat(
// LLVM: llvm.call @muon_rt_all_reduce
func.func @repeat(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<4xf32> {
    %s = dist.all_reduce %t on @m axes [dp] reduce sum : tensor<4xf32> -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// A gather whose pieces have rank-dependent lengths finds them at run time
// into a table of one entry per member: a stack slot at the top of the
// function, which every iteration refills (a slot in the loop would grow
// the stack on each one; a heap buffer would be device memory on
// target=cuda, where the runtime cannot write it).
// CHECK-LABEL: func.func @regather(
// CHECK:         %[[TABLE:.*]] = memref.alloca() : memref<2xi64>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloca
// CHECK:           %[[T:.*]] = memref.cast %[[TABLE]]
// CHECK:           call @muon_rt_member_dims({{.*}}, %[[T]])
// CHECK:           call @muon_rt_all_gather({{.*}}, %[[T]], %{{.*}})
// CHECK-NOT:       memref.dealloc %[[TABLE]]
// CHECK:           scf.yield
// CHECK:         return
func.func @regather(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<0x4xf32>
  %acc0 = tensor.cast %e : tensor<0x4xf32> to tensor<?x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %acc0) -> tensor<?x4xf32> {
    %g = dist.all_gather %x on @m axes [dp] dim 0 : tensor<?x4xf32> -> tensor<?x4xf32>
    scf.yield %g : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}
