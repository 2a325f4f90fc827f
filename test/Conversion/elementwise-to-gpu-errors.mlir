// muon-elementwise-to-gpu rejects what no kernel of target=cuda computes,
// and heap buffers host code could not read, with a diagnostic at the op.

// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-elementwise-to-gpu

func.func @reduction(%a: memref<4x8xf32>, %b: memref<4xf32>) {
  // expected-error @below {{muon-elementwise-to-gpu: this op has a reduction loop, which no GPU kernel of target=cuda computes}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<4x8xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

func.func @not_a_permutation(%a: memref<8xf32>, %b: memref<4xf32>) {
  // expected-error @below {{muon-elementwise-to-gpu: this op indexes an operand by (d0) -> (d0 * 2), which no GPU kernel of target=cuda computes}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 * 2)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<8xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

func.func @loop_indices(%b: memref<4xf32>) {
  // expected-error @below {{muon-elementwise-to-gpu: this op reads its loop indices (linalg.index), which no GPU kernel of target=cuda computes}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%b : memref<4xf32>) {
  ^bb0(%y: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  return
}

// -----

func.func @unranked_copy(%a: memref<*xf32>, %b: memref<*xf32>) {
  // expected-error @below {{muon-elementwise-to-gpu: a copy of unranked buffers cannot run as a GPU kernel}}
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}

// -----

module {
  module @inner {
    func.func @nested(%a: memref<4xf32>, %b: memref<4xf32>) {
      // expected-error @below {{muon-elementwise-to-gpu: target=cuda compiles steps of the top-level module only; this op is in a nested module}}
      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
      ^bb0(%x: f32, %y: f32):
        linalg.yield %x : f32
      }
      return
    }
  }
}

// -----

func.func @table_on_heap() {
  // expected-error @below {{muon-elementwise-to-gpu: target=cuda allocates every heap buffer of a step in device memory, which host code cannot read; this one holds 'i64'}}
  %t = memref.alloc() : memref<4xi64>
  memref.dealloc %t : memref<4xi64>
  return
}
