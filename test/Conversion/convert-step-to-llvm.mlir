// muon-convert-step-to-llvm is convert-func-to-llvm, finalize-memref-to-llvm,
// convert-arith-to-llvm, convert-index-to-llvm and convert-cf-to-llvm in one
// conversion: with the same allocation options its output is the passes'
// output, line for line, except that the declarations of the functions it
// calls (allocation, abort, ...) may come in another order (so may the
// unpacking of an entry's memref arguments when there are several; this
// function has one); C interface
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

// Cases the one conversion must handle as the five passes do (each with
// no options, plain malloc and free), in their own modules.
// RUN: muon-opt %s --split-input-file --muon-convert-step-to-llvm --reconcile-unrealized-casts 2>&1 | FileCheck %s --check-prefix=EDGE

// -----

// An unranked result is copied to the heap with malloc and free, declared
// by the func patterns, and a dealloc frees with the same free: one
// declaration of each.
// EDGE-LABEL: llvm.func @unranked_result
// EDGE-NOT: redefinition
func.func private @ext() -> memref<*xf32>
func.func @unranked_result(%m: memref<4xf32>) {
  %r = func.call @ext() : () -> memref<*xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  return
}

// -----

// A function the patterns call (abort, malloc) declared as a func.func
// after its first use: the patterns find that declaration.
// EDGE-LABEL: llvm.func @declared_later
// EDGE: llvm.call @malloc(
// EDGE: llvm.call @abort()
// EDGE-NOT: @malloc_0
// EDGE-NOT: @abort_0
func.func @declared_later(%c: i1, %n: index) {
  %m = memref.alloc(%n) : memref<?xf32>
  cf.assert %c, "c must hold"
  func.call @abort() : () -> ()
  return
}
func.func private @abort()
func.func private @malloc(i64) -> !llvm.ptr

// -----

// Ceil and floor divisions are expanded, as convert-arith-to-llvm does.
// EDGE-LABEL: llvm.func @divisions
// EDGE-NOT: arith.
// EDGE: llvm.return
func.func @divisions(%a: i32, %b: i32, %x: index, %y: index) -> (i32, i32, i32, index) {
  %0 = arith.ceildivsi %a, %b : i32
  %1 = arith.floordivsi %a, %b : i32
  %2 = arith.ceildivui %a, %b : i32
  %3 = arith.floordivsi %x, %y : index
  return %0, %1, %2, %3 : i32, i32, i32, index
}

// -----

// The module's LLVM data layout sizes what a C interface copies: a 32-bit
// pointer makes an unranked descriptor 4 + 4 bytes.
// EDGE-LABEL: llvm.func @layout
// EDGE: llvm.mlir.constant(4 : index) : i64
// EDGE: "llvm.intr.memcpy"
module attributes {llvm.data_layout = "e-p:32:32"} {
  func.func @layout(%m: memref<*xf32>) -> memref<*xf32> {
    return %m : memref<*xf32>
  }
}
