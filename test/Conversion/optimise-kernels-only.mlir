// muon-optimise-kernels-only: every LLVM function with a body but the
// kernels (muon.kernel, the marker dropped) is optnone and noinline;
// declarations are left alone.
// RUN: muon-opt %s --muon-optimise-kernels-only | FileCheck %s

// CHECK: llvm.func @runtime_call(i64)
// CHECK-NOT: optimize_none
llvm.func @runtime_call(i64)
// CHECK: llvm.func @glue(%{{.*}}: i64) attributes {no_inline, optimize_none}
llvm.func @glue(%x: i64) {
  llvm.call @runtime_call(%x) : (i64) -> ()
  llvm.return
}
// CHECK: llvm.func @kernel(%{{.*}}: f32) -> f32 {
llvm.func @kernel(%x: f32) -> f32 attributes {muon.kernel} {
  llvm.return %x : f32
}
