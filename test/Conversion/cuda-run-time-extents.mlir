// The run-time extent table of a collective (run-time-extents.mlir) is a
// stack slot on target=cuda too: the step's heap buffers are device memory
// there, which the host-side runtime cannot write.
// REQUIRES: cuda

// RUN: muon-opt %S/Inputs/uneven-storage-step.mlir --muon-assign-owners --muon-to-llvm=target=cuda --mlir-print-ir-after=convert-dist-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA-LABEL: func.func @step(
// CUDA:         %[[TABLE:.*]] = memref.alloca() : memref<2xi64>
// CUDA:         call @muon_rt_chunk_extents({{.*}}, %{{.*}})
// CUDA:         call @muon_rt_member_dims(
