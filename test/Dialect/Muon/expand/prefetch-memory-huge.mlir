// max-prefetch-bytes near 2^63: rank 0 owns two 2^30 x 2^30 f32 matrices,
// so prefetching one round ahead holds 2^63 bytes at once, one more than
// the largest bound; the peak is compared with the bound as integers
// (converted to a double, 2^63 - 1 rounds to 2^63 and the peak fitted)
// and printed in full (it had come out as -2^63).

// RUN: muon-opt %s --muon-expand-step=max-prefetch-bytes=9223372036854775807 -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAX
// RUN: muon-opt %s --muon-expand-step=max-prefetch-bytes=9000000000000000000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NINE
// RUN: muon-opt %s --muon-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// The JSON report keeps every digit of a byte count (as a double, 2^61
// came out as 2.305843009213694e+18).
// RUN: muon-opt %s --muon-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON: "gather_bytes": 2305843009213693952,
// JSON: "peak_bytes": 9223372036854775808,

// MAX: remark: prefetch_count 1 lowered to 0 by max-prefetch-bytes = 9223372036854775807: 1 round(s) ahead would hold 9223372036854775808 bytes of gathered matrices on rank 0 at once, 0 hold(s) at most 4611686018427387904
// NINE: remark: prefetch_count 1 lowered to 0 by max-prefetch-bytes = 9000000000000000000: 1 round(s) ahead would hold 9223372036854775808 bytes
// REPORT: 9223372036854775808

dist.mesh @m [dp = 2]
!t = !dist.tensor<1073741824x1073741824xf32, @m, [shard<0>]>
func.func @step(%p0: !t, %p1: !t, %g0: !t, %g1: !t, %m0: !t, %m1: !t) {
  %r:4 = muon.step params(%p0, %p1 : !t, !t) grads(%g0, %g1 : !t, !t) momenta(%m0, %m1 : !t, !t)
      {lr = 0.02 : f64, owners = array<i64: 0, 0>, prefetch_count = 1 : i64,
       param_info = [#muon.param<"p0">, #muon.param<"p1">]}
  return
}
