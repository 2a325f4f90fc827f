// target=cuda through the whole muon-to-llvm pipeline: the step's
// elementwise work is kernels of one gpu.module, compiled through NVVM and
// ptxas to a cubin for sm_90 (an ELF image embedded as a gpu.binary); the
// host code brackets the step with muon_rt_cuda_step_begin/end, launches
// each kernel on the stream begin returns, and calls Newton-Schulz through
// the GPU entry. The translation to LLVM IR loads the image through the
// runtime's mgpuModuleLoad and launches with mgpuLaunchKernel on that
// stream (no stream of its own, no synchronisation per launch).
// REQUIRES: cuda

// RUN: muon-opt %s --muon-to-llvm="target=cuda" | FileCheck %s --implicit-check-not="muon_rt_newton_schulz(" --implicit-check-not="memref." --implicit-check-not="linalg." --implicit-check-not="func.call @__muon_kernel" --implicit-check-not="TimeInMs"
// The same text every time (no compile times in the objects), which
// muon-run's compile-once object and its cache depend on.
// RUN: muon-opt %s --muon-to-llvm="target=cuda" -o %t.first
// RUN: muon-opt %s --muon-to-llvm="target=cuda" -o %t.second
// RUN: diff %t.first %t.second
// RUN: muon-opt %s --muon-to-llvm="target=cuda" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: muon-opt %s --muon-to-llvm="target=cuda cuda-chip=sm_80" | FileCheck %s --check-prefix=CHIP

// CHECK-DAG: llvm.func @_mlir_ciface_muon_rt_newton_schulz_cuda(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, f64, i64)
// CHECK-DAG: llvm.func @muon_rt_cuda_step_begin() -> !llvm.ptr
// CHECK-DAG: llvm.func @muon_rt_cuda_step_end()
// CHECK: %[[STREAM:.*]] = llvm.call @muon_rt_cuda_step_begin()
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @muon_kernels::@elementwise
// CHECK: llvm.call @muon_rt_newton_schulz_cuda_by_reference(
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @muon_kernels::@elementwise
// CHECK: llvm.call @muon_rt_cuda_step_end()
// CHECK-NEXT: llvm.return
// CHECK: gpu.binary @muon_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF

// IR: @llvm.global_ctors = {{.*}} @muon_kernels_load
// IR: %[[S:.*]] = call ptr @muon_rt_cuda_step_begin()
// IR: call void @mgpuLaunchKernel(ptr %{{.*}}, i64 %{{.*}}, i64 1, i64 1, i64 256, i64 1, i64 1, i32 0, ptr %[[S]],
// IR-NOT: mgpuStreamCreate
// IR-NOT: mgpuStreamSynchronize
// IR: call ptr @mgpuModuleLoad(ptr @muon_kernels_binary

// CHIP: #nvvm.target<O = 3, chip = "sm_80">

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>

func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 1>}
  return %r#0, %r#1 : !t, !t
}
