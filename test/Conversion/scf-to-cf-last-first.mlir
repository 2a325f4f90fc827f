// muon-scf-to-cf applies MLIR's scf-to-cf patterns to a block's SCF ops
// last to first (each split then moves only the ops up to the next one, so
// the time is linear in the block's length). The IR it produces is the
// same as convert-scf-to-cf's, nested and loop-carried values included.

// RUN: muon-opt %s --convert-scf-to-cf > %t.upstream
// RUN: muon-opt %s --pass-pipeline='builtin.module(func.func(muon-scf-to-cf))' > %t.ours
// RUN: diff %t.upstream %t.ours
// RUN: FileCheck %s < %t.ours

// CHECK-LABEL: func.func @g
// CHECK-NOT:   scf.
// CHECK:       cf.cond_br
// CHECK:       return
func.func private @f(i32) -> i32
func.func @g(%c: i1, %d: i1, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = arith.constant 1 : i32
  %a = scf.if %c -> i32 {
    %y = func.call @f(%x) : (i32) -> i32
    scf.yield %y : i32
  } else {
    scf.yield %x : i32
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> i32 {
    %z = func.call @f(%acc) : (i32) -> i32
    scf.yield %z : i32
  }
  %e = scf.if %d -> i32 {
    %w = scf.if %c -> i32 {
      scf.yield %b : i32
    } else {
      scf.yield %a : i32
    }
    scf.yield %w : i32
  } else {
    scf.yield %x : i32
  }
  %r = func.call @f(%e) : (i32) -> i32
  return %r : i32
}
