// muon-allocate-through-runtime: buffers only viewed unranked and freed are
// allocated by runtime calls that write their descriptors into stack
// slots, several buffers per call where nothing between their allocations
// frees or allocates, and freed several per call where nothing between
// their frees allocates; every other allocation is left to the
// conversion.
// RUN: muon-opt %s --split-input-file --muon-allocate-through-runtime | FileCheck %s
// (allocate-through-runtime-llvm.mlir converts the result to LLVM.)

// One table per distinct list of layouts {rank, bytes, alignment, sizes,
// strides}, a group's one after the other.
// CHECK-DAG: llvm.mlir.global private constant @[[T2D:__muon_buffer_layout_[0-9]+]](dense<[2, 96, 64, 4, 6, 6, 1, 2, 96, 64, 4, 6, 6, 1]> : tensor<14xi64>)
// CHECK-DAG: llvm.mlir.global private constant @[[T1D:__muon_buffer_layout_[0-9]+]](dense<[1, 16, 128, 8, 1]> : tensor<5xi64>)
// CHECK-DAG: llvm.mlir.global private constant @[[T0D:__muon_buffer_layout_[0-9]+]](dense<[0, 8, 16]> : tensor<3xi64>)
// CHECK-DAG: func.func private @muon_rt_buffers_alloc(!llvm.ptr, !llvm.ptr, i64)
// CHECK-DAG: func.func private @muon_rt_buffers_free(!llvm.ptr, !llvm.ptr, i64)

// Slots, their members, the tables' addresses at the top of the entry
// block; a group's allocation where its first buffer was, each view there.
// CHECK-LABEL: func.func @viewed
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// A group's slot is an array of 64-bit words, its descriptors one after
// the other (a 2-D one is 7 words); the first is the slot itself.
// CHECK-NEXT: %[[G:.*]] = llvm.alloca %[[ONE]] x !llvm.array<14 x i64> : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[A2D:.*]] = llvm.mlir.addressof @[[T2D]] : !llvm.ptr
// CHECK-NEXT: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[S2:.*]] = llvm.getelementptr %[[G]][7] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[L2:.*]] = llvm.getelementptr %[[A2D]][7] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: %[[S3:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %[[A1D:.*]] = llvm.mlir.addressof @[[T1D]] : !llvm.ptr
// CHECK-NEXT: %[[S4:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64)>
// CHECK-NEXT: %[[A0D:.*]] = llvm.mlir.addressof @[[T0D]] : !llvm.ptr
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: cf.br ^bb1
// CHECK: ^bb1:
// CHECK-NEXT: call @muon_rt_buffers_alloc(%[[G]], %[[A2D]], %[[TWO]])
// CHECK-NEXT: %[[P:.*]] = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
// CHECK-NEXT: %[[R:.*]] = llvm.insertvalue %[[TWO]], %[[P]][0]
// CHECK-NEXT: %[[D:.*]] = llvm.insertvalue %[[G]], %[[R]][1]
// CHECK-NEXT: %[[V1:.*]] = builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(i64, ptr)> to memref<*xf32>
// CHECK: %[[V2:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(i64, ptr)> to memref<*xf32>
// Two casts of one buffer share its view.
// CHECK: call @use2(%[[V1]], %[[V1]])
// CHECK-NEXT: call @muon_rt_buffers_free(%[[G]], %[[A2D]], %[[ONE]])
// CHECK-NEXT: call @use(%[[V2]])
// CHECK-NEXT: call @muon_rt_buffers_free(%[[S2]], %[[L2]], %[[ONE]])
// CHECK-NEXT: call @muon_rt_buffers_alloc(%[[S3]], %[[A1D]], %[[ONE]])
// CHECK: call @muon_rt_buffers_free(%[[S3]], %[[A1D]], %[[ONE]])
// CHECK-NEXT: call @muon_rt_buffers_alloc(%[[S4]], %[[A0D]], %[[ONE]])
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return

func.func private @use(memref<*xf32>)
func.func private @use2(memref<*xf32>, memref<*xf32>)
func.func private @use_i16(memref<*xi16>)
func.func private @use_f64(memref<*xf64>)
func.func @viewed() {
  cf.br ^bb1
^bb1:
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x6xf32>
  %va = memref.cast %a : memref<4x6xf32> to memref<*xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<4x6xf32>
  %vb = memref.cast %b : memref<4x6xf32> to memref<*xf32>
  %va2 = memref.cast %a : memref<4x6xf32> to memref<*xf32>
  call @use2(%va, %va2) : (memref<*xf32>, memref<*xf32>) -> ()
  memref.dealloc %a : memref<4x6xf32>
  call @use(%vb) : (memref<*xf32>) -> ()
  memref.dealloc %b : memref<4x6xf32>
  %c = memref.alloc() {alignment = 128 : i64} : memref<8xi16>
  %vc = memref.cast %c : memref<8xi16> to memref<*xi16>
  call @use_i16(%vc) : (memref<*xi16>) -> ()
  memref.dealloc %c : memref<8xi16>
  %d = memref.alloc() {alignment = 16 : i64} : memref<f64>
  %vd = memref.cast %d : memref<f64> to memref<*xf64>
  call @use_f64(%vd) : (memref<*xf64>) -> ()
  memref.dealloc %d : memref<f64>
  return
}

// -----

// Allocations move up over the step's kernels, pure ops and other
// allocations into one group (of mixed ranks), not over another call;
// frees move down over waits and pure ops into one run, not over another
// call; a run frees each stretch of consecutive members with one call,
// where its last free was.
// CHECK-LABEL: func.func @grouped
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG: %[[G:.*]] = llvm.alloca %[[ONE]] x !llvm.array<17 x i64>
// CHECK-DAG: %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[S1:.*]] = llvm.getelementptr %[[G]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-DAG: %[[S2:.*]] = llvm.getelementptr %[[G]][12] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-DAG: %[[L1:.*]] = llvm.getelementptr %[[TABLE:[0-9]+]][5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-DAG: %[[L2:.*]] = llvm.getelementptr %[[TABLE]][12] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: cf.br ^bb1
// CHECK: ^bb1:
// CHECK-NEXT: call @muon_rt_buffers_alloc(%[[G]], %[[TABLE]], %[[THREE]])
// CHECK: call @kernel(
// CHECK: memref.alloc() : memref<2xf32>
// CHECK: call @use(
// CHECK: call @muon_rt_buffers_alloc(%{{.*}}, %{{.*}}, %[[ONE]])
// CHECK: call @muon_rt_wait(
// CHECK-NEXT: call @muon_rt_buffers_free(%[[G]], %[[TABLE]], %[[ONE]])
// CHECK-NEXT: call @muon_rt_buffers_free(%[[S2]], %[[L2]], %[[ONE]])
// CHECK-NEXT: call @muon_rt_wait(
// CHECK-NEXT: call @use(
// CHECK-NEXT: call @muon_rt_buffers_free(%[[S1]], %[[L1]], %[[ONE]])
// CHECK: return
func.func private @use(memref<*xf32>)
func.func private @muon_rt_wait(i64)
func.func private @kernel(%x: memref<*xf32>) attributes {muon.kernel} {
  return
}
func.func @grouped(%h: i64) {
  cf.br ^bb1
^bb1:
  %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %va = memref.cast %a : memref<4xf32> to memref<*xf32>
  call @kernel(%va) : (memref<*xf32>) -> ()
  %other = memref.alloc() : memref<2xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
  %vb = memref.cast %b : memref<2x3xf32> to memref<*xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<5xf32>
  %vc = memref.cast %c : memref<5xf32> to memref<*xf32>
  call @use(%va) : (memref<*xf32>) -> ()
  %d = memref.alloc() {alignment = 64 : i64} : memref<5xf32>
  %vd = memref.cast %d : memref<5xf32> to memref<*xf32>
  call @use(%vd) : (memref<*xf32>) -> ()
  memref.dealloc %d : memref<5xf32>
  call @use(%vb) : (memref<*xf32>) -> ()
  call @use(%vc) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4xf32>
  call @muon_rt_wait(%h) : (i64) -> ()
  memref.dealloc %c : memref<5xf32>
  call @muon_rt_wait(%h) : (i64) -> ()
  call @use(%vb) : (memref<*xf32>) -> ()
  memref.dealloc %b : memref<2x3xf32>
  memref.dealloc %other : memref<2xf32>
  return
}

// -----

// Left to the conversion: a buffer also used ranked, one never viewed,
// dynamic, strided or in another memory space, without an alignment, of
// an element type LLVM pads (i1), in a block on a cycle, in a nested
// region.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: muon_rt_buffers_alloc
// CHECK-COUNT-9: memref.alloc
// CHECK-NOT: muon_rt_buffers_alloc
// CHECK: return
func.func private @use(memref<*xf32>)
func.func private @use_i1(memref<*xi1>)
func.func private @use_s(memref<*xf32, 1>)
func.func @left_alone(%n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %ranked = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %vr = memref.cast %ranked : memref<4xf32> to memref<*xf32>
  call @use(%vr) : (memref<*xf32>) -> ()
  %x = memref.load %ranked[%c0] : memref<4xf32>
  memref.dealloc %ranked : memref<4xf32>
  %unviewed = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  memref.dealloc %unviewed : memref<4xf32>
  %dynamic = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  %vdyn = memref.cast %dynamic : memref<?xf32> to memref<*xf32>
  call @use(%vdyn) : (memref<*xf32>) -> ()
  memref.dealloc %dynamic : memref<?xf32>
  %strided = memref.alloc() {alignment = 64 : i64} : memref<4xf32, strided<[2]>>
  %vs = memref.cast %strided : memref<4xf32, strided<[2]>> to memref<*xf32>
  call @use(%vs) : (memref<*xf32>) -> ()
  memref.dealloc %strided : memref<4xf32, strided<[2]>>
  %space = memref.alloc() {alignment = 64 : i64} : memref<4xf32, 1>
  %vsp = memref.cast %space : memref<4xf32, 1> to memref<*xf32, 1>
  call @use_s(%vsp) : (memref<*xf32, 1>) -> ()
  memref.dealloc %space : memref<4xf32, 1>
  %unaligned = memref.alloc() : memref<4xf32>
  %vu = memref.cast %unaligned : memref<4xf32> to memref<*xf32>
  call @use(%vu) : (memref<*xf32>) -> ()
  memref.dealloc %unaligned : memref<4xf32>
  %bits = memref.alloc() {alignment = 64 : i64} : memref<4xi1>
  %vb = memref.cast %bits : memref<4xi1> to memref<*xi1>
  call @use_i1(%vb) : (memref<*xi1>) -> ()
  memref.dealloc %bits : memref<4xi1>
  cf.br ^loop
^loop:
  %looped = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %vl = memref.cast %looped : memref<4xf32> to memref<*xf32>
  call @use(%vl) : (memref<*xf32>) -> ()
  memref.dealloc %looped : memref<4xf32>
  cf.cond_br %c, ^loop, ^exit
^exit:
  scf.if %c {
    %nested = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %vn = memref.cast %nested : memref<4xf32> to memref<*xf32>
    func.call @use(%vn) : (memref<*xf32>) -> ()
    memref.dealloc %nested : memref<4xf32>
  }
  return
}

// -----

// Descriptors not laid out in 64-bit words (32-bit index here): nothing
// is done.
// CHECK-LABEL: func.func @narrow_index
// CHECK-NOT: muon_rt_buffers_alloc
// CHECK: memref.alloc
module attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>} {
  func.func private @use(memref<*xf32>)
  func.func @narrow_index() {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %v = memref.cast %a : memref<4xf32> to memref<*xf32>
    call @use(%v) : (memref<*xf32>) -> ()
    memref.dealloc %a : memref<4xf32>
    return
  }
}

// -----

// Nor with 32-bit pointers in the LLVM data layout.
// CHECK-LABEL: func.func @narrow_pointers
// CHECK-NOT: muon_rt_buffers_alloc
// CHECK: memref.alloc
module attributes {llvm.data_layout = "e-p:32:32-i64:64"} {
  func.func private @use(memref<*xf32>)
  func.func @narrow_pointers() {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %v = memref.cast %a : memref<4xf32> to memref<*xf32>
    call @use(%v) : (memref<*xf32>) -> ()
    memref.dealloc %a : memref<4xf32>
    return
  }
}


// -----

// Strides are running products of the sizes, also across a size-0
// dimension (the buffer holds no bytes).
// CHECK: llvm.mlir.global private constant @{{.*}}(dense<[2, 0, 64, 4, 0, 0, 1]> : tensor<7xi64>)
// CHECK-LABEL: func.func @empty
// CHECK: call @muon_rt_buffers_alloc
func.func private @use(memref<*xf32>)
func.func @empty() {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x0xf32>
  %v = memref.cast %a : memref<4x0xf32> to memref<*xf32>
  call @use(%v) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<4x0xf32>
  return
}

// -----

// Device code (a function of a gpu.module) is left alone.
// CHECK-LABEL: gpu.module @device
// CHECK-NOT: muon_rt_buffers_alloc
// CHECK: memref.alloc
module attributes {gpu.container_module} {
  gpu.module @device {
    func.func private @use(memref<*xf32>)
    func.func @f() {
      %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
      %v = memref.cast %a : memref<4xf32> to memref<*xf32>
      call @use(%v) : (memref<*xf32>) -> ()
      memref.dealloc %a : memref<4xf32>
      return
    }
  }
}
