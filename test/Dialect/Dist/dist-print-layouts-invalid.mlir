// RUN: muon-opt --dist-print-layouts -o /dev/null -verify-diagnostics %s | FileCheck %s --allow-empty
// CHECK-NOT: rank 0

// A bad layout that no op verifies (a bare function argument) is reported.
dist.mesh @m [dp = 4]
// expected-error @+1 {{cannot print layout of '!dist.tensor<8xf32, @m, [shard<1>]>': placement shard<1> on mesh axis 'dp': cannot shard along a dimension that doesn't exist}}
func.func @bad(%a: !dist.tensor<8xf32, @m, [shard<1>]>) {
  return
}
