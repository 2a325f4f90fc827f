// muon-bufferize-entry-arguments: a function that nothing refers to gets,
// for each ranked tensor argument, the memref one-shot bufferization would
// give it (identity layout) and reads it back with a restrict to_tensor,
// writable unless the argument says otherwise. Called functions, and
// arguments with an encoding or a requested layout, are left to one-shot
// bufferization. Bufferized afterwards, the module is the one one-shot
// bufferization makes of the original (the second and third RUN lines).

// RUN: muon-opt %s --muon-bufferize-entry-arguments | FileCheck %s
// RUN: muon-opt %s --pass-pipeline="builtin.module(muon-bufferize-entry-arguments,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map unknown-type-conversion=identity-layout-map})" -o %t.ours
// RUN: muon-opt %s --pass-pipeline="builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map unknown-type-conversion=identity-layout-map})" -o %t.upstream
// RUN: diff %t.ours %t.upstream

#map = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[P:.*]]: memref<4xf32>, %[[G:.*]]: memref<4xf32>,
// CHECK-SAME: %[[M:.*]]: memref<4xf32> {bufferization.writable = false},
// CHECK-SAME: %[[N:.*]]: index)
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %[[TP:.*]] = bufferization.to_tensor %[[P]] restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT: %[[TG:.*]] = bufferization.to_tensor %[[G]] restrict writable
// CHECK-NEXT: %[[TM:.*]] = bufferization.to_tensor %[[M]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK: ins(%[[TP]], %[[TG]] : {{.*}}) outs(%{{.*}} :
// CHECK: ins(%[[TG]] : {{.*}}) outs(%[[TM]] :
// CHECK: outs(%[[TP]] :
// CHECK: call @inner(%[[TG]])
// CHECK: return {{.*}}, %[[TG]] :
func.func @step(%p: tensor<4xf32>, %g: tensor<4xf32>,
                %m: tensor<4xf32> {bufferization.writable = false},
                %n: index)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = bufferization.alloc_tensor() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // Not writable: bufferized into a copy.
  %w = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%g : tensor<4xf32>) outs(%m : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  // Writable and not read after: written in place.
  %i = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%p : tensor<4xf32>) {
  ^bb0(%o: f32):
    %h = arith.addf %o, %o : f32
    linalg.yield %h : f32
  } -> tensor<4xf32>
  %c = call @inner(%g) : (tensor<4xf32>) -> tensor<4xf32>
  return %d, %w, %i, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Called: its arguments stay tensors for the function-boundary analysis.
// CHECK-LABEL: func.func private @inner(
// CHECK-SAME: %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @inner(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// Dynamic sizes keep their shape; an argument with a requested layout is
// left alone.
// CHECK-LABEL: func.func @shapes(
// CHECK-SAME: %[[A:.*]]: memref<?x8xf32>,
// CHECK-SAME: %{{.*}}: tensor<4xf32> {bufferization.buffer_layout = {{.*}}})
// CHECK-NEXT: bufferization.to_tensor %[[A]] restrict writable : memref<?x8xf32> to tensor<?x8xf32>
// CHECK-NOT: bufferization.to_tensor
func.func @shapes(%a: tensor<?x8xf32>,
                  %b: tensor<4xf32> {bufferization.buffer_layout = affine_map<(d0) -> (d0)>})
    -> (tensor<?x8xf32>, tensor<4xf32>) {
  return %a, %b : tensor<?x8xf32>, tensor<4xf32>
}

// An unranked argument is left alone (its buffer is one-shot's choice).
// CHECK-LABEL: func.func @unranked(
// CHECK-SAME: %{{.*}}: tensor<*xf32>) -> tensor<*xf32>
func.func @unranked(%u: tensor<*xf32>) -> tensor<*xf32> {
  return %u : tensor<*xf32>
}

// A declaration has no body to read the buffers in.
// CHECK-LABEL: func.func private @declared(tensor<4xf32>)
func.func private @declared(tensor<4xf32>)
