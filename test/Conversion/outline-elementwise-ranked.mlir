// muon-outline-elementwise passes buffers as unranked memrefs except where
// that would cost a stack slot per call or miss a diagnostic: see below.
// RUN: muon-opt %s --muon-outline-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Ops that may run more than once per call (in a loop, or in a block on a
// cycle) pass their buffers ranked: a descriptor slot per call there would
// grow the stack per iteration. So does a memory space that is not an
// address space.
// CHECK-LABEL: func.func @repeated
// CHECK: scf.for
// CHECK: %[[R1:.*]] = memref.cast %{{.*}} : memref<4x8xf32> to memref<?x?xf32>
// CHECK: call @[[RANKED:__muon_kernel[_0-9]*]](%[[R1]], %{{.*}}) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
// CHECK: ^bb1:
// CHECK: call @[[RANKED]](%{{.*}}, %{{.*}}) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
// CHECK: cf.cond_br
// Once, after the loop: unranked again.
// CHECK: ^bb2:
// CHECK: call @{{__muon_kernel[_0-9]*}}(%{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>) -> ()
// CHECK: call @{{__muon_kernel[_0-9]*}}(%{{.*}}, %{{.*}}) : (memref<?xf32, "foo">, memref<?xf32, "foo">) -> ()
// CHECK: func.func private @[[RANKED]](%{{.*}}: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>)
func.func @repeated(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %n: index,
                    %c: i1, %f: memref<4xf32, "foo">, %g: memref<4xf32, "foo">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.subf %in, %out : f32
      linalg.yield %m : f32
    }
  }
  cf.br ^bb1
^bb1:
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.subf %in, %out : f32
    linalg.yield %m : f32
  }
  cf.cond_br %c, ^bb1, ^bb2
^bb2:
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.subf %in, %out : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%f : memref<4xf32, "foo">) outs(%g : memref<4xf32, "foo">) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.subf %in, %out : f32
    linalg.yield %m : f32
  }
  return
}
