// dist-verify-reduced: every message at the dist.from_local whose declared
// layout contradicts its value, and a clean case.
// RUN: muon-opt %s --split-input-file --dist-verify-reduced -verify-diagnostics -o /dev/null
// dist-lower-redistribute's slices by rank tables pass (a shard over dp,
// replicate over tp).
// RUN: muon-opt %S/Inputs/replicate-to-shard.mlir --dist-lower-redistribute --dist-verify-reduced -o /dev/null
// The step muon-expand-step emits passes under both rules (every layout of
// the generator, partial gradients and blocked Newton-Schulz included).
// RUN: %python %S/../../Run/Inputs/gen_step.py --mesh dp=2,tp=2 | muon-opt --muon-assign-owners --muon-expand-step --dist-verify-reduced -o /dev/null
// RUN: %python %S/../../Run/Inputs/gen_step.py --mesh dp=2,tp=2 | muon-opt --muon-assign-owners --muon-expand-step --dist-verify-reduced=rule=intersection -o /dev/null

// The obligation: a reduced value declared replicate.
dist.mesh @m [dp = 4]
!w_shard = !dist.tensor<16x8xf32, @m, [shard<0>]>
!w_rep = !dist.tensor<16x8xf32, @m, [replicate]>
func.func @drops(%w: !w_shard) -> !w_rep {
  %ws = dist.to_local %w : !w_shard -> tensor<4x8xf32>
  %wf = dist.all_gather %ws on @m axes [dp] dim 0 reduced : tensor<4x8xf32> -> tensor<16x8xf32>
  %d = arith.mulf %wf, %wf : tensor<16x8xf32>
  // expected-error @+1 {{result is reduced over mesh axis 'dp' (its gradient is partial there, to be summed) but its type declares replicate: the gradient would leave unreduced; declare it reduced (dist-propagate-reduced does) or reach replicate with dist.redistribute}}
  %W = dist.from_local %d : tensor<16x8xf32> -> !w_rep
  return %W : !w_rep
}

// -----

// A partial value never reduced, declared replicate (and one never
// gathered, declared reduced).
dist.mesh @m [dp = 2, tp = 2]
!g_t = !dist.tensor<8x8xf32, @m, [partial<sum>, replicate]>
!rep = !dist.tensor<8x8xf32, @m, [replicate, replicate]>
!w_t = !dist.tensor<8x8xf32, @m, [replicate, shard<0>]>
!red = !dist.tensor<8x8xf32, @m, [replicate, reduced]>
func.func @varies(%g: !g_t, %w: !w_t) -> (!rep, !red) {
  %gl = dist.to_local %g : !g_t -> tensor<8x8xf32>
  %sq = arith.mulf %gl, %gl : tensor<8x8xf32>
  // expected-error @+1 {{result differs between the ranks of mesh axis 'dp' (a shard, a partial value or a storage piece not gathered or reduced over it) but its type declares it the same on every rank}}
  %G = dist.from_local %sq : tensor<8x8xf32> -> !rep
  %wl = dist.to_local %w : !w_t -> tensor<4x8xf32>
  %pad = tensor.pad %wl low[0, 0] high[4, 0] {
  ^bb0(%i: index, %j: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<4x8xf32> to tensor<8x8xf32>
  // expected-error @+1 {{result differs between the ranks of mesh axis 'tp'}}
  %W = dist.from_local %pad : tensor<8x8xf32> -> !red
  return %G, %W : !rep, !red
}

// -----

// Declared reduced where no reduced value reaches.
dist.mesh @m [dp = 2]
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
!red = !dist.tensor<8x8xf32, @m, [reduced]>
func.func @not_reduced(%x: !rep) -> !red {
  %l = dist.to_local %x : !rep -> tensor<8x8xf32>
  // expected-error @+1 {{result type declares reduced on mesh axis 'dp' but no reduced value reaches it over that axis: its gradient would be summed over ranks that already hold all of it}}
  %R = dist.from_local %l : tensor<8x8xf32> -> !red
  return %R : !red
}

// -----

// Clean: gathered to reduced and declared so, a partial value all-reduced
// and declared replicate, a reduced value reduce-scattered into a shard,
// and an explicit redistribute from reduced to replicate.
dist.mesh @m [dp = 2]
!s_t = !dist.tensor<8x8xf32, @m, [shard<0>]>
!red = !dist.tensor<8x8xf32, @m, [reduced]>
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
!p_t = !dist.tensor<8x8xf32, @m, [partial<sum>]>
func.func @clean(%s: !s_t, %p: !p_t) -> (!red, !rep, !s_t, !rep) {
  %sl = dist.to_local %s : !s_t -> tensor<4x8xf32>
  %g = dist.all_gather %sl on @m axes [dp] dim 0 reduced : tensor<4x8xf32> -> tensor<8x8xf32>
  %R = dist.from_local %g : tensor<8x8xf32> -> !red
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  %a = dist.all_reduce %pl on @m axes [dp] reduce sum : tensor<8x8xf32> -> tensor<8x8xf32>
  %A = dist.from_local %a : tensor<8x8xf32> -> !rep
  %rs = dist.reduce_scatter %g on @m axes [dp] reduce sum dim 0 : tensor<8x8xf32> -> tensor<4x8xf32>
  %S = dist.from_local %rs : tensor<4x8xf32> -> !s_t
  %X = dist.redistribute %R : !red -> !rep
  return %R, %A, %S, %X : !red, !rep, !s_t, !rep
}

// -----

// Partial on one axis and reduced on another (docs/reduced.md): the value
// varies over dp until the all-reduce, and stays reduced over tp.
dist.mesh @m [dp = 2, tp = 2]
!pr = !dist.tensor<8x8xf32, @m, [partial<sum>, reduced]>
!rr = !dist.tensor<8x8xf32, @m, [replicate, reduced]>
func.func @partial_and_reduced(%x: !pr) -> !rr {
  %l = dist.to_local %x : !pr -> tensor<8x8xf32>
  %a = dist.all_reduce %l on @m axes [dp] reduce sum : tensor<8x8xf32> -> tensor<8x8xf32>
  %R = dist.from_local %a : tensor<8x8xf32> -> !rr
  return %R : !rr
}

// -----

dist.mesh @m [dp = 2, tp = 2]
!pr = !dist.tensor<8x8xf32, @m, [partial<sum>, reduced]>
!rr = !dist.tensor<8x8xf32, @m, [replicate, reduced]>
func.func @partial_and_reduced_unreduced(%x: !pr) -> !rr {
  %l = dist.to_local %x : !pr -> tensor<8x8xf32>
  // expected-error @+1 {{result differs between the ranks of mesh axis 'dp'}}
  %R = dist.from_local %l : tensor<8x8xf32> -> !rr
  return %R : !rr
}

// -----

// Through regions: a result takes the facts of what its regions yield (and
// of a loop's initial value).
dist.mesh @m [dp = 2]
!p_t = !dist.tensor<8x8xf32, @m, [partial<sum>]>
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
func.func @through_if(%p: !p_t, %x: !rep, %c: i1) -> !rep {
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %r = scf.if %c -> tensor<8x8xf32> {
    scf.yield %pl : tensor<8x8xf32>
  } else {
    scf.yield %xl : tensor<8x8xf32>
  }
  // expected-error @+1 {{result differs between the ranks of mesh axis 'dp'}}
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}
func.func @through_loop(%p: !p_t, %x: !rep) -> !rep {
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %xl) -> tensor<8x8xf32> {
    %s = arith.addf %acc, %pl : tensor<8x8xf32>
    scf.yield %s : tensor<8x8xf32>
  }
  // expected-error @+1 {{result differs between the ranks of mesh axis 'dp'}}
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}
func.func @loop_reduces(%p: !p_t) -> !rep {
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = dist.all_reduce %pl on @m axes [dp] reduce sum : tensor<8x8xf32> -> tensor<8x8xf32>
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %a) -> tensor<8x8xf32> {
    %s = arith.mulf %acc, %acc : tensor<8x8xf32>
    scf.yield %s : tensor<8x8xf32>
  }
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}

// -----

// A rank query makes what it indexes differ between ranks: over every axis
// for dist.rank, over its own axes for dist.coord.
dist.mesh @m [dp = 2, tp = 2]
!rep = !dist.tensor<8x8xf32, @m, [replicate, replicate]>
!rep4 = !dist.tensor<4x8xf32, @m, [replicate, replicate]>
!rep4_s = !dist.tensor<8x8xf32, @m, [replicate, shard<0>]>
func.func @by_rank(%x: !rep) -> !rep4 {
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %r = dist.rank @m
  %c1 = arith.constant 1 : index
  %off = arith.andi %r, %c1 : index
  %s = tensor.extract_slice %xl[%off, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  // expected-error @+2 {{result differs between the ranks of mesh axis 'dp'}}
  // expected-error @+1 {{result differs between the ranks of mesh axis 'tp'}}
  %S = dist.from_local %s : tensor<4x8xf32> -> !rep4
  return %S : !rep4
}
func.func @by_tp_coord(%x: !rep) -> !rep4_s {
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %t = dist.coord @m axes [tp]
  %c4 = arith.constant 4 : index
  %off = arith.muli %t, %c4 : index
  %s = tensor.extract_slice %xl[%off, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %S = dist.from_local %s : tensor<4x8xf32> -> !rep4_s
  return %S : !rep4_s
}

// -----

// A call's results are what the callee returns when its body runs with the
// facts of the call's operands: a callee that all-reduces its argument
// returns the same data on every rank, one that adds to it keeps it partial,
// one that passes a reduced value on keeps the obligation.
dist.mesh @m [dp = 2]
!p_t = !dist.tensor<8x8xf32, @m, [partial<sum>]>
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
!red = !dist.tensor<8x8xf32, @m, [reduced]>
func.func @via_call(%p: !p_t) -> !rep {
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  %r = func.call @reduce(%pl) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}
func.func private @reduce(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = dist.all_reduce %x on @m axes [dp] reduce sum : tensor<8x8xf32> -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}
func.func @partial_via_call(%p: !p_t) -> !rep {
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  %r = func.call @twice(%pl) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{result differs between the ranks of mesh axis 'dp'}}
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}
func.func private @twice(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = arith.addf %x, %x : tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
func.func @reduced_via_call(%w: !red) -> !rep {
  %wl = dist.to_local %w : !red -> tensor<8x8xf32>
  %r = func.call @twice(%wl) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{result is reduced over mesh axis 'dp'}}
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}
func.func @call_returns_partial(%p: !p_t) -> !rep {
  %r = func.call @local_of(%p) : (!p_t) -> tensor<8x8xf32>
  // expected-error @+1 {{result differs between the ranks of mesh axis 'dp'}}
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}
func.func private @local_of(%p: !p_t) -> tensor<8x8xf32> {
  %pl = dist.to_local %p : !p_t -> tensor<8x8xf32>
  return %pl : tensor<8x8xf32>
}

// -----

// A scalar takes facts only from scalars: the size of an evenly sharded
// tensor (tensor.dim) is the same on every rank.
dist.mesh @m [dp = 2]
!xs = !dist.tensor<8x4xf32, @m, [shard<0>]>
!gr = !dist.tensor<4xf32, @m, [replicate]>
func.func @mean_by_local_batch(%x: !xs, %g: !gr) -> !gr {
  %xl = dist.to_local %x : !xs -> tensor<4x4xf32>
  %gl = dist.to_local %g : !gr -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %xl, %c0 : tensor<4x4xf32>
  %ni = arith.index_cast %n : index to i32
  %nf = arith.sitofp %ni : i32 to f32
  %s = tensor.splat %nf : tensor<4xf32>
  %y = arith.divf %gl, %s : tensor<4xf32>
  %R = dist.from_local %y : tensor<4xf32> -> !gr
  return %R : !gr
}

// -----

// arith.select chooses like scf.if: its condition is left out (so
// canonicalising one into the other does not change the verdict).
dist.mesh @m [dp = 2]
!rep = !dist.tensor<8x8xf32, @m, [replicate]>
func.func @select_by_coord(%x: !rep, %y: !rep) -> !rep {
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %yl = dist.to_local %y : !rep -> tensor<8x8xf32>
  %d = dist.coord @m axes [dp]
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %d, %c0 : index
  %r = arith.select %first, %xl, %yl : tensor<8x8xf32>
  %R = dist.from_local %r : tensor<8x8xf32> -> !rep
  return %R : !rep
}

// -----

// A constant table indexed by dist.rank (dist-lower-redistribute's per-rank
// offsets) varies only over the axes along which its entries differ.
dist.mesh @m [dp = 2, tp = 2]
!rep = !dist.tensor<8x8xf32, @m, [replicate, replicate]>
!s_dp = !dist.tensor<8x8xf32, @m, [shard<0>, replicate]>
func.func @table_over_dp(%x: !rep) -> !s_dp {
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %r = dist.rank @m
  %t = arith.constant dense<[0, 0, 4, 4]> : tensor<4xindex>
  %o = tensor.extract %t[%r] : tensor<4xindex>
  %s = tensor.extract_slice %xl[%o, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %S = dist.from_local %s : tensor<4x8xf32> -> !s_dp
  return %S : !s_dp
}
func.func @table_over_tp(%x: !rep) -> !s_dp {
  %xl = dist.to_local %x : !rep -> tensor<8x8xf32>
  %r = dist.rank @m
  %t = arith.constant dense<[0, 4, 0, 4]> : tensor<4xindex>
  %o = tensor.extract %t[%r] : tensor<4xindex>
  %s = tensor.extract_slice %xl[%o, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  // expected-error @+1 {{result differs between the ranks of mesh axis 'tp'}}
  %S = dist.from_local %s : tensor<4x8xf32> -> !s_dp
  return %S : !s_dp
}
