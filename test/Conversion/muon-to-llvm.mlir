// The muon-to-llvm pipeline takes a muon.step module to the LLVM dialect:
// the entry becomes its C interface, _mlir_ciface_<name>, taking one
// descriptor per local shard and per result out-buffer; the runtime is
// called through its _mlir_ciface_ entry points.

// RUN: muon-opt %s --muon-to-llvm | FileCheck %s
// RUN: muon-opt %s --muon-to-llvm="target=cpu assign-owners=false" | FileCheck %s
// RUN: not muon-opt %s --muon-to-llvm="target=gpu" 2>&1 | FileCheck %s --check-prefix=TARGET

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>

// CHECK-NOT: dist.
// CHECK-NOT: muon.
// CHECK-DAG: llvm.func @_mlir_ciface_muon_rt_check_arg(i64, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_muon_rt_comm(!llvm.ptr, !llvm.ptr) -> i64
// CHECK-DAG: llvm.func @_mlir_ciface_muon_rt_newton_schulz(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, f64, i64)
// CHECK-DAG: llvm.func @_mlir_ciface_muon_rt_gather(
// CHECK-DAG: llvm.func @_mlir_ciface_muon_rt_scatter(
// The momentum and the update are calls to shared kernels, the only
// functions LLVM optimises; the step's glue is optnone.
// The entry is its C interface alone (one descriptor pointer per buffer),
// with the step's body.
// CHECK-NOT: llvm.func @step(
// CHECK: llvm.func @_mlir_ciface_step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface, no_inline, optimize_none}
// CHECK-COUNT-2: llvm.call @__muon_kernel
// CHECK: llvm.func @__muon_kernel(
// CHECK-NOT: optimize_none
// CHECK-SAME: {
// CHECK: llvm.func @__muon_kernel_0(
// CHECK-NOT: optimize_none
// CHECK-SAME: {
// TARGET: for the --target option: Cannot find option named 'gpu'!
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 1>}
  return %r#0, %r#1 : !t, !t
}
