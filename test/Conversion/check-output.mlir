// muon-check-output verifies the module once for the passes named in
// generated-by, which muon-to-llvm runs with check-output=false when
// check-output-once is set. A module
// that verifies passes through unchanged; one that does not is an internal
// error naming those passes, at the op the verifier names, with its message
// as a note. (The module is parsed without verification, as a pass would
// have left it.)
// RUN: muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --muon-check-output="generated-by={pass-a, pass-b or pass-c}" -verify-diagnostics | FileCheck %s
// RUN: not muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --muon-check-output 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: muon-opt /dev/null --muon-to-llvm=check-output-once=true --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: muon-opt /dev/null --muon-to-llvm --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=EACH
// A conversion run on its own checks its output; check-output=false turns
// that off (the broken op is none of its business: the check is of the
// whole module).
// RUN: not muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false --convert-muon-to-linalg 2>&1 | FileCheck %s --check-prefix=OWN
// RUN: muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false --convert-muon-to-linalg=check-output=false -o /dev/null
// RUN: not muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false --convert-muon-to-runtime 2>&1 | FileCheck %s --check-prefix=OWN-NS
// RUN: muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false --convert-muon-to-runtime=check-output=false -o /dev/null
// RUN: not muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false --convert-dist-to-runtime 2>&1 | FileCheck %s --check-prefix=OWN-DIST
// RUN: muon-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false --convert-dist-to-runtime=check-output=false -o /dev/null

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

// OWN: error: internal error: convert-muon-to-linalg generated IR that does not verify
// OWN-NS: error: internal error: convert-muon-to-runtime generated IR that does not verify
// OWN-DIST: error: internal error: convert-dist-to-runtime generated IR that does not verify

// muon-to-llvm with check-output-once: the three conversions to runtime
// calls without their own checks, then one check naming them.
// PIPELINE: convert-muon-to-linalg{check-output=false}
// PIPELINE: convert-muon-to-runtime{check-output=false
// PIPELINE: convert-dist-to-runtime{check-output=false
// PIPELINE-NEXT: muon-check-output{generated-by={convert-muon-to-linalg, convert-muon-to-runtime or convert-dist-to-runtime}}

// By default each checks itself, and nothing checks them again.
// EACH: convert-muon-to-linalg{check-output=true}
// EACH: convert-muon-to-runtime{check-output=true
// EACH: convert-dist-to-runtime{check-output=true
// EACH-NOT: muon-check-output
