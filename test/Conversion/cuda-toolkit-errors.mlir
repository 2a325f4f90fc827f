// A CUDA toolkit without libdevice is one error at the module, naming the
// toolkit and the variables that choose it. Before, upstream's
// gpu-module-to-binary reported "CUDA path: ... does not exist" (with the
// whole gpu.module printed after it), compiled with another toolkit, and
// the pipeline succeeded.
// RUN: rm -rf %t.fake && mkdir -p %t.fake/nvvm/libdevice && touch %t.fake/nvvm/libdevice/libdevice.10.bc
// RUN: env MUON_CUDA_PATH=%t.none not muon-opt %s --muon-to-llvm=target=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=MUONPATH
// MUONPATH: cuda-toolkit-errors.mlir:0:0: error: muon-elementwise-to-gpu: the CUDA toolkit '{{.*}}.none' has no nvvm/libdevice/libdevice.10.bc (target=cuda links the kernels with it): point $MUON_CUDA_PATH (or $CUDA_HOME, $CUDA_PATH) at the toolkit's directory
// MUONPATH-NOT: CUDA path:
// MUONPATH-NOT: see current operation

// Without MUON_CUDA_PATH, CUDA_HOME names the toolkit.
// RUN: env -u MUON_CUDA_PATH CUDA_HOME=%t.home not muon-opt %s --muon-to-llvm=target=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOME
// HOME: error: muon-elementwise-to-gpu: the CUDA toolkit '{{.*}}.home' has no nvvm/libdevice/libdevice.10.bc

// The pass's own option, on bufferized functions with kernels to make: a
// toolkit with libdevice passes the check.
// RUN: not muon-opt %S/elementwise-to-gpu.mlir --split-input-file --muon-elementwise-to-gpu=cuda-path=%t.none -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: muon-elementwise-to-gpu: the CUDA toolkit '{{.*}}.none' has no
// RUN: muon-opt %S/elementwise-to-gpu.mlir --split-input-file --muon-elementwise-to-gpu=cuda-path=%t.fake -o /dev/null

// A module without kernels to make needs no toolkit.
// RUN: echo 'func.func @f() { return }' | env MUON_CUDA_PATH=%t.none muon-opt --muon-to-llvm=target=cuda -o /dev/null

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64}
  return %r#0, %r#1 : !t, !t
}
