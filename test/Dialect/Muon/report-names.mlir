// muon-report's text tables escape what would break a row in a name
// (control characters, quotes, backslashes, non-ASCII bytes), as MLIR
// strings write them; JSON keeps the name as it is.
// RUN: muon-opt %s --muon-assign-owners --muon-report -o /dev/null | FileCheck %s
// RUN: muon-opt %s --muon-assign-owners --muon-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

dist.mesh @m [dp = 2]
!t = !dist.tensor<16x8xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t, %p2: !t, %g2: !t, %m2: !t) -> (!t, !t, !t, !t) {
  %r:4 = muon.step params(%p, %p2 : !t, !t) grads(%g, %g2 : !t, !t) momenta(%m, %m2 : !t, !t) {lr = 0.02 : f64, param_info = [#muon.param<"a\"b\\c\0Ad\09e">, #muon.param<"\C3\A9 x">]}
  return %r#0, %r#1, %r#2, %r#3 : !t, !t, !t, !t
}
// CHECK: {{^}}0     a\22b\\c\0Ad\09e             16x8
// CHECK-NEXT: {{^}}1     \C3\A9 x                     16x8
// JSON: "name": "a\"b\\c\nd\te",
