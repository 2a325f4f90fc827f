// muon-split-entry-block leaves the entry block with a branch to a block
// holding the body, so that the signature conversion to LLVM (a cast per
// argument in the entry block) does not renumber the whole body each time.
// RUN: muon-opt %s --pass-pipeline='builtin.module(func.func(muon-split-entry-block))' | FileCheck %s

// CHECK-LABEL: func.func @f(%{{.*}}: i32) -> i32
// CHECK-NEXT:    cf.br ^[[BODY:.*]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %[[R:.*]] = arith.addi
// CHECK-NEXT:    return %[[R]]
func.func @f(%x: i32) -> i32 {
  %r = arith.addi %x, %x : i32
  return %r : i32
}

// Declarations have no body.
// CHECK: func.func private @g(i32)
func.func private @g(i32)
