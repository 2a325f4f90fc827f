// An unknown cuda-chip is one error at the module, naming the option as
// written, before LLVM warns about the processor and ptxas fails; a known
// one passes the check. muon-to-llvm checks its options before any pass
// runs; the kernel pass checks its own `chip` when run alone.
// RUN: not muon-opt %s "--muon-to-llvm=target=cuda cuda-chip=sm_xx" -o /dev/null 2>&1 | FileCheck %s
// RUN: not muon-opt %s "--muon-to-llvm=target=cuda cuda-chip=" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not muon-opt %s --muon-elementwise-to-gpu=chip=sm_xx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: muon-opt %s --muon-elementwise-to-gpu=chip=sm_90a -o /dev/null
// The chip is only read for target=cuda.
// RUN: muon-opt %s "--muon-to-llvm=target=cpu cuda-chip=sm_xx" -o /dev/null
// CHECK: cuda-chip-errors.mlir:0:0: error: muon-to-llvm: cuda-chip 'sm_xx' is not a GPU architecture LLVM's NVPTX backend knows (e.g. sm_90, sm_90a)
// CHECK-NOT: recognized processor
// CHECK-NOT: ptxas
// CHECK-NOT: see current operation
// EMPTY: cuda-chip-errors.mlir:0:0: error: muon-to-llvm: target=cuda needs a cuda-chip (e.g. sm_90); it is empty
// PASS: cuda-chip-errors.mlir:0:0: error: muon-elementwise-to-gpu: chip 'sm_xx' is not a GPU architecture LLVM's NVPTX backend knows (e.g. sm_90, sm_90a)

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}
