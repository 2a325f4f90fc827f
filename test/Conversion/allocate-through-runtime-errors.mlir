// muon-allocate-through-runtime declares its runtime functions from the
// runtime's table: a module declaring one with another type is reported
// there, and the pass fails.
// RUN: muon-opt %s --split-input-file --verify-diagnostics --muon-allocate-through-runtime

// expected-error @below {{'func.func' op declares runtime function @muon_rt_buffers_alloc with type '(i64) -> ()', but the runtime's function table says '(!llvm.ptr, !llvm.ptr, i64) -> ()'}}
func.func private @muon_rt_buffers_alloc(i64)
func.func private @use(memref<*xf32>)
func.func @conflict() {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %v = memref.cast %a : memref<4xf32> to memref<*xf32>
  call @use(%v) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// The name taken by another kind of symbol.
// expected-error @below {{'llvm.func' op takes the name of runtime function @muon_rt_buffers_alloc, which the lowering declares as a func.func of type '(!llvm.ptr, !llvm.ptr, i64) -> ()'}}
llvm.func @muon_rt_buffers_alloc(!llvm.ptr, !llvm.ptr, i64)
func.func private @use(memref<*xf32>)
func.func @taken() {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %v = memref.cast %a : memref<4xf32> to memref<*xf32>
  call @use(%v) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4xf32>
  return
}
