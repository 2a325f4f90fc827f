// DDP over dp (partial<avg>) and context parallelism over cp (partial<sum>)
// on a replicated parameter: the gradient is the mean over dp of the sum
// over cp. One all-reduce over both axes sums everything, then the sum is
// divided by |dp| = 2 (instead of one whole all-reduce per kind).
// test/Run/mixed-partial.test runs it against the reference.

// RUN: muon-opt %s --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s
// RUN: muon-opt %s --muon-expand-step --dist-verify-spmd -o /dev/null
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// Lowered, the division is a kernel of its own beside the momentum and the
// update (kernels are optimised; the rest of the step's code is not).
// RUN: muon-opt %s --muon-to-llvm | FileCheck %s --check-prefix=KERNELS
// KERNELS-COUNT-3: llvm.call @__muon_kernel
// KERNELS-NOT: llvm.call @__muon_kernel
// bf16 gradients over dp = 3: the division by 3 is formed in f32 and rounded
// once (1/3 as a bf16 constant would be 0.2% off).
// RUN: sed 's/dp = 2, cp = 2/dp = 3, cp = 2/; s/16x12xf32/16x12xbf16/g' %s | muon-opt --muon-expand-step --dist-specialize-rank=rank=0 | FileCheck %s --check-prefix=BF16
// BF16: %[[THIRD:.*]] = arith.constant 0.333333343 : f32
// BF16: %[[SUM:.*]] = dist.all_reduce %{{.*}} on @m axes [dp, cp] reduce sum : tensor<16x12xbf16>
// BF16: %[[G:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<16x12xbf16>)
// BF16: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// BF16: %[[P:.*]] = arith.mulf %[[W]], %[[THIRD]] : f32
// BF16: arith.truncf %[[P]] : f32 to bf16
// BF16: muon.momentum_update %{{.*}}, %[[G]]

dist.mesh @m [dp = 2, cp = 2]
!p = !dist.tensor<16x12xf32, @m, [replicate, replicate]>
!g = !dist.tensor<16x12xf32, @m, [partial<avg>, partial<sum>]>

// CHECK-LABEL: func.func @step
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[SUM:.*]] = dist.all_reduce %{{.*}} on @m axes [dp, cp] reduce sum : tensor<16x12xf32> -> tensor<16x12xf32>
// CHECK-NOT: dist.all_reduce
// The division is one elementwise pass (a generic, which the lowering
// outlines into an optimised kernel).
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<16x12xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf %{{.*}}, %[[HALF]] : f32
// CHECK: muon.momentum_update %{{.*}}, %[[G]]
// One all-reduce's volume: what the plan moves equals the baseline.
// REPORT: 0     w                            16x12          0               63360            0         2304         4608         4608  bcast dp,cp
func.func @step(%p0: !p, %g0: !g, %m0: !p) -> (!p, !p) {
  %r:2 = muon.step params(%p0 : !p) grads(%g0 : !g) momenta(%m0 : !p)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>, owners = array<i64: 0>,
       param_info = [#muon.param<"w">]}
  return %r#0, %r#1 : !p, !p
}
