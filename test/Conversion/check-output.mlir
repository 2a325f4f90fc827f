// muon-check-output verifies the module once for the passes named in
// generated-by, which muon-to-llvm runs with check-output=false. A module
// that verifies passes through unchanged; one that does not is an internal
// error naming those passes, at the op the verifier names, with its message
// as a note. (The module is parsed without verification, as a pass would
// have left it.)
// RUN: muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --muon-check-output="generated-by={pass-a, pass-b or pass-c}" -verify-diagnostics | FileCheck %s
// RUN: not muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --muon-check-output 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: muon-opt /dev/null --muon-to-llvm --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE

// CHECK-LABEL: func.func @fine(
// CHECK:         arith.addi %{{.*}}, %{{.*}} : i32
func.func @fine(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

// -----

func.func @broken(%a: i32, %b: i64) -> i32 {
  // expected-error @below {{internal error: pass-a, pass-b or pass-c generated IR that does not verify (a compiler bug, not a problem with this input; please report it with the input)}}
  // expected-note @below {{the verifier said: 'arith.addi' op requires the same type for all operands and results}}
  %0 = "arith.addi"(%a, %b) : (i32, i64) -> i32
  return %0 : i32
}

// Without generated-by the error names the passes by position.
// DEFAULT: error: internal error: the passes before muon-check-output generated IR that does not verify

// muon-to-llvm: the three conversions to runtime calls without their own
// checks, then one check naming them.
// PIPELINE: convert-muon-to-linalg{check-output=false}
// PIPELINE: convert-muon-to-runtime{check-output=false
// PIPELINE: convert-dist-to-runtime{check-output=false
// PIPELINE-NEXT: muon-check-output{generated-by={convert-muon-to-linalg, convert-muon-to-runtime or convert-dist-to-runtime}}
