// dist-propagate-reduced on the examples of docs/reduced.md, under both
// rules: the uniform rule (prefix UNI; an op's result is reduced on an axis
// when any operand is) and the intersection rule (prefix INT; when every
// operand is).

// RUN: muon-opt %s --split-input-file --dist-propagate-reduced | FileCheck %s --check-prefixes=CHECK,UNI
// RUN: muon-opt %s --split-input-file --dist-propagate-reduced=rule=intersection | FileCheck %s --check-prefixes=CHECK,INT
// RUN: muon-opt %s --split-input-file --dist-propagate-reduced | muon-opt --split-input-file --dist-verify-reduced -o /dev/null
// RUN: not muon-opt %s --split-input-file --dist-propagate-reduced=rule=any -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: for the --rule option: Cannot find option named 'any'!

// The FSDP case: weights gathered to reduced, the input replicated. The
// gathered weight is reduced under both rules; y = x @ w only under the
// uniform rule (the inputs disagree).
dist.mesh @m [dp = 4]
!w_shard = !dist.tensor<16x8xf32, @m, [shard<0>]>
!x_t = !dist.tensor<4x16xf32, @m, [replicate]>
!w_rep = !dist.tensor<16x8xf32, @m, [replicate]>
!y_t = !dist.tensor<4x8xf32, @m, [replicate]>
// UNI-LABEL: func.func @fsdp(%{{.*}}: !t16x8_s0, %{{.*}}: !t4x16_r) -> (!t16x8_d, !t4x8_d)
// INT-LABEL: func.func @fsdp(%{{.*}}: !t16x8_s0, %{{.*}}: !t4x16_r) -> (!t16x8_d, !t4x8_r)
// CHECK: dist.from_local %{{.*}} : tensor<16x8xf32> -> !t16x8_d
// UNI: dist.from_local %{{.*}} : tensor<4x8xf32> -> !t4x8_d
// INT: dist.from_local %{{.*}} : tensor<4x8xf32> -> !t4x8_r
func.func @fsdp(%w: !w_shard, %x: !x_t) -> (!w_rep, !y_t) {
  %ws = dist.to_local %w : !w_shard -> tensor<4x8xf32>
  %wf = dist.all_gather %ws on @m axes [dp] dim 0 reduced : tensor<4x8xf32> -> tensor<16x8xf32>
  %xl = dist.to_local %x : !x_t -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.matmul ins(%xl, %wf : tensor<4x16xf32>, tensor<16x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %W = dist.from_local %wf : tensor<16x8xf32> -> !w_rep
  %Y = dist.from_local %y : tensor<4x8xf32> -> !y_t
  return %W, %Y : !w_rep, !y_t
}

// -----

// A matmul of two reduced inputs is reduced under both rules.
dist.mesh @m [dp = 2, tp = 2]
!a_t = !dist.tensor<8x8xf32, @m, [reduced, replicate]>
!o_t = !dist.tensor<8x8xf32, @m, [replicate, replicate]>
// CHECK-LABEL: func.func @both_reduced
// CHECK-SAME: -> !t8x8_dr
func.func @both_reduced(%a: !a_t, %b: !a_t) -> !o_t {
  %al = dist.to_local %a : !a_t -> tensor<8x8xf32>
  %bl = dist.to_local %b : !a_t -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %y = linalg.matmul ins(%al, %bl : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %Y = dist.from_local %y : tensor<8x8xf32> -> !o_t
  return %Y : !o_t
}

// -----

// Reduced and varying exclude each other on an axis: adding a tp shard to
// a value reduced over dp and tp leaves it reduced over dp only (uniform)
// or over neither (intersection: the shard is not reduced). A reduce-scatter
// over tp ends reduced there (dp stays); an all-reduce over both ends it on
// both.
dist.mesh @m [dp = 2, tp = 2]
!r_t = !dist.tensor<8x8xf32, @m, [reduced, reduced]>
!s_t = !dist.tensor<8x8xf32, @m, [replicate, shard<1>]>
!out = !dist.tensor<8x8xf32, @m, [replicate, shard<1>]>
!rep = !dist.tensor<8x8xf32, @m, [replicate, replicate]>
// CHECK-LABEL: func.func @exclusive
// UNI-SAME: -> (!t8x8_ds1, !t8x8_ds1, !t8x8_rr)
// INT-SAME: -> (!t8x8_rs1, !t8x8_ds1, !t8x8_rr)
func.func @exclusive(%r: !r_t, %s: !s_t) -> (!out, !out, !rep) {
  %rl = dist.to_local %r : !r_t -> tensor<8x8xf32>
  %sl = dist.to_local %s : !s_t -> tensor<8x4xf32>
  %part = tensor.extract_slice %rl[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %sum = arith.addf %part, %sl : tensor<8x4xf32>
  %S = dist.from_local %sum : tensor<8x4xf32> -> !out
  %rs = dist.reduce_scatter %rl on @m axes [tp] reduce sum dim 1 : tensor<8x8xf32> -> tensor<8x4xf32>
  %RS = dist.from_local %rs : tensor<8x4xf32> -> !out
  %ar = dist.all_reduce %rl on @m axes [dp, tp] reduce sum : tensor<8x8xf32> -> tensor<8x8xf32>
  %AR = dist.from_local %ar : tensor<8x8xf32> -> !rep
  return %S, %RS, %AR : !out, !out, !rep
}

// -----

// A function the module calls keeps its signature: the reduced value
// reaches the declared replicate explicitly, through dist.redistribute;
// so does any use that needs the declared type.
dist.mesh @m [dp = 2]
!red = !dist.tensor<8x8xf32, @m, [reduced]>
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
// CHECK-LABEL: func.func @callee(%{{.*}}: !t8x8_d) -> !t8x8_r
// CHECK: %[[F:.*]] = dist.from_local %{{.*}} : tensor<8x8xf32> -> !t8x8_d
// CHECK: %[[R:.*]] = dist.redistribute %[[F]] : !t8x8_d -> !t8x8_r
// CHECK: return %[[R]] : !t8x8_r
func.func @callee(%a: !red) -> !rep {
  %l = dist.to_local %a : !red -> tensor<8x8xf32>
  %d = arith.addf %l, %l : tensor<8x8xf32>
  %D = dist.from_local %d : tensor<8x8xf32> -> !rep
  return %D : !rep
}
// CHECK-LABEL: func.func @caller
// CHECK: call @callee
func.func @caller(%a: !red) -> !rep {
  %r = call @callee(%a) : (!red) -> !rep
  return %r : !rep
}

// -----

// A function with two returns takes the new result type only where both
// return it; here one returns a replicate argument, so the result keeps
// its declared type and the reduced value reaches it explicitly.
dist.mesh @m [dp = 2]
!red = !dist.tensor<8x8xf32, @m, [reduced]>
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
// CHECK-LABEL: func.func @two_returns(
// CHECK-SAME: %{{.*}}: !t8x8_d, %[[B:.*]]: !t8x8_r, %{{.*}}: i1) -> !t8x8_r
// CHECK: %[[F:.*]] = dist.from_local %{{.*}} : tensor<8x8xf32> -> !t8x8_d
// CHECK: %[[R:.*]] = dist.redistribute %[[F]] : !t8x8_d -> !t8x8_r
// CHECK: return %[[R]] : !t8x8_r
// CHECK: return %[[B]] : !t8x8_r
func.func @two_returns(%a: !red, %b: !rep, %c: i1) -> !rep {
  %l = dist.to_local %a : !red -> tensor<8x8xf32>
  %D = dist.from_local %l : tensor<8x8xf32> -> !rep
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %D : !rep
^bb2:
  return %b : !rep
}
