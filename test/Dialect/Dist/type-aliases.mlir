// Printed IR names each distinct !dist.tensor type once, at the top: the
// shape and one code per mesh axis (sD shard<D>, r replicate, p partial,
// d reduced). Types that differ only in storage, order or element type get
// a numeric suffix (after an underscore when the name ends in a digit). The
// aliases parse back to the same types.
// RUN: muon-opt %s | FileCheck %s
// RUN: muon-opt %s | muon-opt --mlir-print-local-scope | FileCheck %s --check-prefix=FULL

// CHECK-DAG: !t16x8_s0r = !dist.tensor<16x8xf32, @m, [shard<0>, replicate]>
// CHECK-DAG: !t16x8_s0r1 = !dist.tensor<16x8xf32, @m, [shard<0>, replicate], storage = dim<1 on tp>>
// CHECK-DAG: !t16x8_pd = !dist.tensor<16x8xf32, @m, [partial<avg>, reduced]>
// CHECK-DAG: !t4x16x8_s0s1 = !dist.tensor<4x16x8xf32, @m, [shard<0>, shard<1>]>
// CHECK: func.func @f(%{{.*}}: !t16x8_s0r, %{{.*}}: !t16x8_s0r1, %{{.*}}: !t16x8_pd, %{{.*}}: !t4x16x8_s0s1)
// FULL: func.func @f(%{{.*}}: !dist.tensor<16x8xf32, @m, [shard<0>, replicate]>, %{{.*}}: !dist.tensor<16x8xf32, @m, [shard<0>, replicate], storage = dim<1 on tp>>, %{{.*}}: !dist.tensor<16x8xf32, @m, [partial<avg>, reduced]>, %{{.*}}: !dist.tensor<4x16x8xf32, @m, [shard<0>, shard<1>]>)
dist.mesh @m [dp = 2, tp = 2]
func.func @f(%a: !dist.tensor<16x8xf32, @m, [shard<0>, replicate]>,
             %b: !dist.tensor<16x8xf32, @m, [shard<0>, replicate], storage = dim<1 on tp>>,
             %c: !dist.tensor<16x8xf32, @m, [partial<avg>, reduced]>,
             %d: !dist.tensor<4x16x8xf32, @m, [shard<0>, shard<1>]>) {
  return
}
