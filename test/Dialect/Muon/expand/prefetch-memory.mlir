// max-prefetch-bytes bounds the gathered matrices one rank holds at once.
// Three rounds (owners alternate 0, 1); each leaves one 8x4 f32 matrix
// (128 B) on its owner. prefetch_count = 2 holds three rounds (384 B):
// with a bound of 300 B the pass prefetches one round (256 B); with 100 B
// none (128 B, a round's own matrix, cannot be avoided); 384 B is enough.

// RUN: muon-opt %s --muon-expand-step=max-prefetch-bytes=300 -verify-diagnostics -o /dev/null
// RUN: muon-opt %s --muon-expand-step=max-prefetch-bytes=300 --dist-specialize-rank=rank=0 2>/dev/null | FileCheck %s --check-prefix=ONE
// RUN: sed 's/lowered to 1/lowered to 0/; s/= 300:/= 100:/; s/1 hold(s) at most 256/0 hold(s) at most 128, still more than the bound: without prefetching a rank holds the gathered matrices of its current round, which the bound does not limit/' %s | muon-opt --muon-expand-step=max-prefetch-bytes=100 -verify-diagnostics -o /dev/null
// RUN: muon-opt %s --muon-expand-step=max-prefetch-bytes=100 --dist-specialize-rank=rank=0 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: muon-opt %s --muon-expand-step=max-prefetch-bytes=384 --dist-specialize-rank=rank=0 2>&1 | FileCheck %s --check-prefix=TWO
// A prefetch_count far beyond the rounds (10^12 here, 3 rounds) costs no
// more than the rounds: it fits 384 bytes as given (every round in flight)
// and is lowered to 1 for 300.
// RUN: sed '/expected-remark/d; s/prefetch_count = 2}/prefetch_count = 1000000000000}/' %s | muon-opt --muon-expand-step=max-prefetch-bytes=384 -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE-FITS --allow-empty
// RUN: sed '/expected-remark/d; s/prefetch_count = 2}/prefetch_count = 1000000000000}/' %s | muon-opt --muon-expand-step=max-prefetch-bytes=300 -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE-FITS-NOT: remark
// The report names a count past the last round (prefetch k keeps k + 1 of
// the 3 rounds in flight: 2 is all of them already, 3 is past it).
// RUN: sed '/expected-remark/d' %s | muon-opt --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT2
// RUN: sed '/expected-remark/d; s/prefetch_count = 2}/prefetch_count = 3}/' %s | muon-opt --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT3
// REPORT2: schedule: rounds, 3 rounds, prefetch 2; at most
// REPORT3: schedule: rounds, 3 rounds, prefetch 3 (past the last round: every round in flight); at most
// HUGE: remark: prefetch_count 1000000000000 lowered to 1 by max-prefetch-bytes = 300: all 3 rounds in flight would hold 384 bytes of gathered matrices on rank 0 at once, 1 hold(s) at most 256

// A negative bound is refused, by the pass and through muon-to-llvm.
// RUN: not muon-opt %s --muon-expand-step=max-prefetch-bytes=-1 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not muon-opt %s --muon-to-llvm=max-prefetch-bytes=-7 2>&1 | FileCheck %s --check-prefix=NEG7
// NEG: error: muon-expand-step: max-prefetch-bytes = -1 must be 0 (no bound) or a byte count
// NEG-NOT: func.func
// NEG7: error: muon-to-llvm: max-prefetch-bytes = -7 must be 0 (no bound) or a byte count
// NEG7-NOT: muon-expand-step

// Prefetch 1: two gathers before the first Newton-Schulz, the third after.
// ONE: dist.gather_batch
// ONE: dist.gather_batch
// ONE-NOT: dist.gather_batch
// ONE: muon.newton_schulz
// ONE: dist.gather_batch

// Prefetch 0: blocking calls, each round's gather right before its NS.
// NONE-NOT: !dist.token
// NONE: dist.gather_batch
// NONE-NOT: dist.gather_batch
// NONE: muon.newton_schulz

// TWO-NOT: remark
// TWO: dist.gather_batch
// TWO: dist.gather_batch
// TWO: dist.gather_batch
// TWO: muon.newton_schulz

dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @bounded(%p0: !t, %p1: !t, %p2: !t, %p3: !t, %p4: !t, %p5: !t,
                   %g0: !t, %g1: !t, %g2: !t, %g3: !t, %g4: !t, %g5: !t,
                   %m0: !t, %m1: !t, %m2: !t, %m3: !t, %m4: !t, %m5: !t)
    -> (!t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t) {
  // expected-remark @+1 {{prefetch_count 2 lowered to 1 by max-prefetch-bytes = 300: 2 round(s) ahead would hold 384 bytes of gathered matrices on rank 0 at once, 1 hold(s) at most 256}}
  %r:12 = muon.step params(%p0, %p1, %p2, %p3, %p4, %p5 : !t, !t, !t, !t, !t, !t)
      grads(%g0, %g1, %g2, %g3, %g4, %g5 : !t, !t, !t, !t, !t, !t)
      momenta(%m0, %m1, %m2, %m3, %m4, %m5 : !t, !t, !t, !t, !t, !t)
      {lr = 0.02 : f64, strategy = #muon.strategy<explicit>,
       owners = array<i64: 0, 1, 0, 1, 0, 1>, prefetch_count = 2}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11
      : !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t, !t
}
