// The timeline is JSON whatever bytes a parameter's name holds: quotes,
// backslashes and control characters are escaped, and bytes that are not
// UTF-8 become U+FFFD (as in muon-report's JSON); well-formed multi-byte
// characters are kept.
// RUN: muon-opt %s --muon-assign-owners --muon-timeline=output=%t.json -o /dev/null
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1], encoding='utf-8')); print(ascii(sorted({e['name'] for e in d['traceEvents'] if e['ph'] == 'X'})))" %t.json | FileCheck %s
// CHECK: 'gather dp dim 0 root 0 a\x00b\n"\\\ufffd\ufffd\xe9'

dist.mesh @m [dp = 4]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) {lr = 0.02 : f64, param_info = [#muon.param<"a\00b\0A\22\5C\FF\FE\C3\A9">]}
  return %r#0, %r#1 : !t, !t
}
