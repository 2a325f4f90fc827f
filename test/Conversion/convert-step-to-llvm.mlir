// muon-convert-step-to-llvm is convert-func-to-llvm, finalize-memref-to-llvm,
// convert-arith-to-llvm, convert-index-to-llvm and convert-cf-to-llvm in one
// conversion: with the same allocation options its output is the passes'
// output, line for line, except that the declarations of the functions it
// calls (allocation, abort, ...) may come in another order; C interface
// wrappers, generic aligned allocation, arith, index, branches and
// cf.assert included.
// RUN: muon-opt %s --muon-convert-step-to-llvm="use-generic-functions=1 use-aligned-alloc=1" --reconcile-unrealized-casts > %t.one
// RUN: muon-opt %s --convert-func-to-llvm --finalize-memref-to-llvm="use-generic-functions=1 use-aligned-alloc=1" --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts > %t.five
// RUN: grep -v '^  llvm.func .*)$' %t.one > %t.one.bodies
// RUN: grep -v '^  llvm.func .*)$' %t.five > %t.five.bodies
// RUN: diff %t.one.bodies %t.five.bodies
// RUN: grep '^  llvm.func .*)$' %t.one | sort > %t.one.decls
// RUN: grep '^  llvm.func .*)$' %t.five | sort > %t.five.decls
// RUN: diff %t.one.decls %t.five.decls
// RUN: FileCheck %s < %t.one
// Without options, plain malloc and free.
// RUN: muon-opt %s --muon-convert-step-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=MALLOC

// CHECK-LABEL: llvm.func @step(
// CHECK: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK: llvm.fadd
// CHECK: llvm.cond_br
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: llvm.call @abort
// CHECK-LABEL: llvm.func @_mlir_ciface_step(
// CHECK: llvm.call @step(
// CHECK-NOT: func.func
// CHECK-NOT: memref.
// CHECK-NOT: arith.
// CHECK-NOT: index.
// CHECK-NOT: cf.
// MALLOC: llvm.call @malloc
// MALLOC: llvm.call @free
func.func @step(%a: memref<4xf32>, %n: index, %flag: i1)
    attributes {llvm.emit_c_interface} {
  %buf = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = index.constant 1
  %i = index.add %n, %c1
  %x = memref.load %a[%c0] : memref<4xf32>
  %y = arith.addf %x, %x : f32
  cf.cond_br %flag, ^store, ^done
^store:
  memref.store %y, %buf[%c0] : memref<4xf32>
  cf.assert %flag, "flag must hold"
  cf.br ^done
^done:
  memref.dealloc %buf : memref<4xf32>
  return
}
