//===- Passes.td - Lowering the step to the runtime and LLVM -*- tablegen -*-===//

#ifndef MUON_CONVERSION_PASSES_TD
#define MUON_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

// The code generation target (muon/Conversion/Target.h), shared by the
// passes whose lowering depends on it and by the muon-to-llvm pipeline.
defvar targetOptions = [
  Option<"target", "target", "::muon::Target", "::muon::Target::Cpu",
         "Code generation target",
         [{::llvm::cl::values(clEnumValN(::muon::Target::Cpu, "cpu",
             "host code over the MPI + CBLAS runtime"),
           clEnumValN(::muon::Target::Cuda, "cuda",
             "tensors in NVIDIA GPU memory: Newton-Schulz in "
             "libmuon_runtime_cuda, elementwise ops as generated kernels"))}]>
];

// Whether a pass verifies what it generated (muon::verifyPassOutput).
defvar checkOutputOption =
  Option<"checkOutput", "check-output", "bool", "true",
         "Verify the IR this pass generated; IR that does not verify is "
         "reported as an internal error naming the pass. muon-to-llvm's "
         "check-output-once turns it off where muon-check-output verifies "
         "the output of several passes at once">;

def ConvertShardToDist : Pass<"convert-shard-to-dist", "mlir::ModuleOp"> {
  let summary = "Import a program annotated with MLIR's shard dialect: grids "
                "become dist meshes, annotated values !dist.tensor types";
  let description = [{
    Each `shard.grid @g(shape = 2x4)` becomes `dist.mesh @g [a0 = 2, a1 = 4]`
    (or the names of its `dist.axis_names = ["dp", "tp"]` attribute). A
    function argument annotated by `shard.shard %arg to %s` takes the
    `!dist.tensor` type of `%s`: `split_axes[d]` lists the grid axes that
    shard dim `d`, the first the outer split. An `annotate_for_users`
    annotation that asks for another layout becomes `dist.redistribute`. A
    global-view `muon.step` (plain tensor operands) is rebuilt on the
    imported values and its results keep their layouts; the function
    returns the imported values, so its signature changes.

    Refused with a diagnostic at the op: `halo_sizes`, dynamic grid sizes
    or offsets, shard sizes other than dist's chunk rule (an uneven split
    needs `sharded_dims_offsets` equal to the chunk rule's), the uses the
    shard dialect leaves undefined (two different shardings for one
    value), shard's collectives and queries, annotated values used by other
    ops, and annotated functions that are called. A module without shard
    ops or global-view steps is left unchanged; `muon-to-llvm` runs this
    pass first. docs/dist-dialect.md, "Importing MLIR shard annotations".
  }];
  let dependentDialects = ["::muon::dist::DistDialect"];
}

def ConvertMuonToLinalg : Pass<"convert-muon-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower muon.momentum_update and muon.apply_update to "
                "elementwise linalg";
  let description = [{
    Runs after `muon-expand-step`, on local tensors, for every target:
    `muon.momentum_update` and `muon.apply_update` become one elementwise
    `linalg.generic` each, with the exact formulas of the step semantics
    (lerp written M + w (G - M)). Only f32 tensors are lowered; anything
    else is an error at the op.
  }];
  let options = [checkOutputOption];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvertMuonToRuntime : Pass<"convert-muon-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower muon.newton_schulz to the target's runtime call";
  let description = [{
    Runs after `muon-expand-step`, on local tensors. For `target=cpu`,
    `muon.newton_schulz` becomes a copy of the operand into a fresh buffer
    and `muon_rt_newton_schulz` on it (in place, CBLAS GEMMs, counted in the
    runtime's NS counters). Only f32 tensors are lowered, `in f32` or
    `in bf16` (bf16 operands emulated with fp32 accumulation); anything
    else is an error at the op. For `target=cuda`, the
    same copy and `muon_rt_newton_schulz_cuda` on it: the runtime stages the
    buffer through the GPU, `in bf16` on tensor cores (fp32 accumulation),
    `in f32` in exact fp32 (no TF32); other compute types are an error. A
    `muon.step` still present is an error (run muon-expand-step first).
  }];
  let options = !listconcat(targetOptions, [checkOutputOption]);
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvertDistToRuntime : Pass<"convert-dist-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower dist ops on local tensors to runtime calls; localise "
                "function boundaries";
  let description = [{
    A dialect conversion (patterns in muon/Conversion/DistToRuntime):

    * Every function argument / result of `!dist.tensor` type becomes the
      rank's local tensor (`dist.to_local` / `dist.from_local` at the
      boundary fold away; a `dist.from_local` nobody reads is dropped). For
      each such argument the function first calls `muon_rt_check_arg` with
      the local shape of every rank (as runs of ranks with one shape), so a wrong shard or a world size that
      does not match the mesh stops the job before any collective.
    * The communicators the function uses are created at its top, in one
      order on every rank (`muon_rt_comm` is collective the first time).
    * `dist.rank` / `dist.coord` -> world rank / index in the communicator.
    * Collectives -> the target's runtime calls on buffers
      (`bufferization.to_buffer` of the operand, a fresh result buffer),
      with the per-member extents along the split dim resolved here from the
      chunk rule, `sizes` or `weights`.
    * `dist.mesh` and `dist.flat_group` are removed once nothing uses them.

    Asynchronous collectives become the runtime's start calls, returning a
    request that `dist.wait` completes (a token still live at a return or
    read before its wait is an error). `dist.redistribute` (lower it with
    `dist-lower-redistribute` first) and `dist.to_local`/`dist.from_local`
    away from a function boundary are reported as errors.
  }];
  let options = !listconcat(targetOptions, [checkOutputOption]);
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::tensor::TensorDialect"];
}

def MuonCheckOutput : Pass<"muon-check-output", "mlir::ModuleOp"> {
  let summary = "Verify the module the passes before it generated, and "
                "report IR that does not verify as an internal error naming "
                "them";
  let description = [{
    What each of our IR-generating passes does to its own output with
    `check-output=true`, done once for several passes run back to back with
    `check-output=false`: the verifier runs over the whole module, and an
    error is reported at the op it names as `internal error: GENERATED-BY
    generated IR that does not verify (a compiler bug, ...)`, with the
    verifier's message as a note. The module is not changed.

    With `check-output-once=true` (which `runMuonToLLVMPipeline`, and so
    muon-run, the C API's run call and the Python package, sets),
    `muon-to-llvm` runs `convert-muon-to-linalg`, `convert-muon-to-runtime`
    and `convert-dist-to-runtime` without their own checks and this pass
    after them: each check verifies the whole step, which is what it
    costs, and the first two checked IR the third checks again
    (docs/design-decisions.md, "The lowering is linear in the step's
    length"). That needs a pass manager that does not verify after each
    pass: its verifier would report the IR first, without naming a pass.
  }];
  let options = [
    Option<"generatedBy", "generated-by", "std::string",
           "\"the passes before muon-check-output\"",
           "The passes that generated the module, as the error names them">
  ];
}

def MuonPlaceDeallocations
    : Pass<"muon-place-deallocations", "mlir::ModuleOp"> {
  let summary = "Free every heap buffer of a bufferized function after its "
                "last use, in time linear in the function's size";
  let description = [{
    Runs after bufferization (and `buffer-results-to-out-params`) in place
    of MLIR's ownership-based deallocation pipeline. That pipeline frees a
    block's buffers at the end of the block, so a step's entry function
    held every gathered matrix of every parameter until it returned, and
    its simplification pass compares buffers pairwise (quadratic in the
    number of parameters).

    This pass frees each buffer right after its last use instead. A buffer
    is a `memref.alloc`, or the result of an `scf.if` each of whose branches
    yields a buffer allocated in that branch (the participation `scf.if`s
    of an expanded step). Its last use is found over everything derived
    from it: views and casts, `scf.yield`s into the parent op's results,
    and the results of calls that take it -- the request a non-blocking
    collective returns, so the buffer lives until the `muon_rt_wait` that
    completes the transfer -- and, for a call that registers the buffer in
    a batch (`muon_rt_batch_item`), the batch handle and what the batch's
    end returns. The `memref.dealloc` goes after the op, in the buffer's
    block, that contains the last use.

    A function with anything else -- an allocation other than
    `memref.alloc`, a buffer that leaves its block (returned, or yielded
    out of a loop), deallocations already present -- goes to MLIR's
    `buffer-deallocation-pipeline`, which handles any structure; the other
    functions' bodies are set aside while it runs and keep this pass's
    frees. Beside such a function, a function that returns a buffer goes
    there too (the pipeline's callers own what a call returns, and a
    function this pass takes may return a view of its argument). A module
    with functions inside a nested module goes to the pipeline whole.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def MuonOutlineElementwise
    : Pass<"muon-outline-elementwise", "mlir::ModuleOp"> {
  let summary = "Move the elementwise linalg.generic ops into a few shared "
                "kernel functions";
  let description = [{
    Runs on bufferized code, before linalg is lowered to loops. Named
    linalg ops on buffers (`linalg.fill`, `linalg.mul`, ...) other than
    `linalg.copy` (which lowers to a memcpy) are generalised first. Every
    `linalg.generic` on buffers inside a function becomes a call to a
    private function (marked `muon.kernel`) over dynamically shaped buffers
    (strided ones where an operand is not contiguous) that holds the op,
    with the values its body captures (beta, lr, ...) as arguments; ops
    that print the same there share the function. The kernel takes each
    buffer as an unranked memref (a rank and a pointer to the caller's
    descriptor) and casts it back to its ranked type before the op, so a
    call passes two scalars per buffer instead of the descriptor's fields,
    which the caller would read out at every call site; the kernel only
    reads the descriptors, at entry. The step's momentum and
    update (one op per matrix each) become calls to a handful of kernels:
    its only loops, which `muon-optimise-kernels-only` leaves as the only
    code LLVM optimises.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect"];
}

def MuonDropBinaryTimings
    : Pass<"muon-drop-binary-timings", "mlir::ModuleOp"> {
  let summary = "Drop the compile times gpu-module-to-binary records in each "
                "gpu.binary object (target=cuda)";
  let description = [{
    `gpu-module-to-binary` records in the properties of every object it
    makes how long the NVVM target took (`LLVMIRToISATimeInMs`,
    `ISAToBinaryTimeInMs`). They differ from one compile to the next, so a
    step lowered twice printed differently, and muon-run, whose ranks load
    the launcher's object only when the lowered module they made is the
    one it compiled (compared by its text), compiled on every rank and
    never found a cached object for target=cuda. This pass removes the two
    properties (an object left with none has no properties), so that
    `muon-to-llvm{target=cuda}` prints the same module every time. Nothing
    reads them: the translation to LLVM IR embeds the object's bytes only.
  }];
}

def MuonElementwiseToGpu
    : Pass<"muon-elementwise-to-gpu", "mlir::ModuleOp"> {
  let summary = "Run the step's elementwise ops and copies as GPU kernels "
                "(target=cuda)";
  let description = [{
    Runs on bufferized code in place of `muon-outline-elementwise` when the
    target is `cuda`, where every buffer of the step is in device memory.
    Each `memref.copy` and named linalg op on buffers first becomes a
    `linalg.generic`; each `linalg.generic` on buffers inside a function
    then becomes a `gpu.launch_func` of a kernel in the module's
    `gpu.module @muon_kernels`, on the stream `muon_rt_cuda_step_begin()`
    returns: the runtime's stream, on which Newton-Schulz and the copies of
    the collectives are ordered too, so no launch waits. Every function with
    a body calls `muon_rt_cuda_step_begin` first and `muon_rt_cuda_step_end`
    before each return (between them the runtime treats the step's buffers
    as device memory). Kernels that print the same (signature and body,
    locations aside) are one kernel.

    A kernel takes each buffer with every size dynamic (and strides, unless
    the layout is the identity) and each value the op's body captures
    (beta, lr, ...) as arguments, and runs a grid-stride loop over the op's
    iterations: linear when every operand is contiguous and indexed by the
    identity, else with the loop indices recovered from the linear one and
    each operand indexed through its map. A launch has blocks of 256
    threads, one iteration per thread up to 65536 blocks.

    Errors: an op with a reduction loop, a body that reads its loop
    indices (`linalg.index`) or an operand map that is not a projected
    permutation (no step emits any of them), a copy of unranked
    buffers, and ops of a nested module (kernels live in the top-level
    module); with `chip`, a GPU architecture LLVM's NVPTX backend does not
    know (before LLVM warns about it and ptxas fails); with `cuda-path` and
    kernels to make, a toolkit without `nvvm/libdevice/libdevice.10.bc` (upstream's
    `gpu-module-to-binary` reports a missing toolkit as an error, then
    goes on with another one and succeeds).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"\"",
           "The GPU architecture the kernels are compiled for (muon-to-llvm "
           "passes its cuda-chip); checked here when given">,
    Option<"cudaPath", "cuda-path", "std::string", "\"\"",
           "The CUDA toolkit the kernels are compiled with (muon-to-llvm "
           "passes the first of $MUON_CUDA_PATH, $CUDA_HOME, $CUDA_PATH, "
           "else /usr/local/cuda); when given and there are kernels to "
           "make, it must hold nvvm/libdevice/libdevice.10.bc">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def MuonAllocateBeforeBranches
    : Pass<"muon-allocate-before-branches", "mlir::ModuleOp"> {
  let summary = "Allocate once before an scf.if a buffer both of its "
                "sides allocate and yield";
  let description = [{
    Runs on bufferized code, after `muon-place-deallocations`. Where both
    sides of an `scf.if` yield a `memref.alloc` of the same static type
    (and alignment) made on that side, as the participation branches of a
    step do (the owner's result on one side, a placeholder on the other),
    the allocation moves before the `scf.if`, both sides use it, and the
    result is dropped; its deallocation now frees that allocation (the
    allocation itself where it freed the base buffer read from the result
    and read nothing else from it). Every
    path allocated the buffer before too, so the program is the same. Why:
    each such result became a memref block argument when SCF was lowered,
    which the conversion to LLVM and LLVM's fast instruction selection
    handle worst.
  }];
}

def MuonAllocateThroughRuntime
    : Pass<"muon-allocate-through-runtime", "mlir::ModuleOp"> {
  let summary = "Let the runtime allocate the buffers that are only handed "
                "to calls, writing their whole descriptor at once";
  let description = [{
    Runs last before `muon-convert-step-to-llvm`. A `memref.alloc` of a
    function's own blocks (not in a nested region, not in a block on a
    cycle of the control flow; the function directly in a
    `builtin.module`, not in another symbol table such as a `gpu.module`),
    of static shape, identity layout, default memory space, an
    `alignment`, and an element type of 1, 2, 4 or 8 bytes (integers and
    floats of 8, 16, 32 or 64 bits), whose only users are `memref.cast`s
    to an unranked memref (at least one) and `memref.dealloc`s, becomes:
      - a stack slot for its descriptor (`llvm.alloca`), filled by a call
        `@muon_rt_buffers_alloc(slots, layouts, count)`, `layouts` being
        the address of a private constant global of the buffers' tables
        `{rank, bytes, alignment, sizes..., strides...}` one after the
        other (identity strides: running products of the sizes), one
        global per distinct list and module. Buffers allocated in one
        block with nothing between them but pure ops, `memref.cast`s,
        other allocations and calls of functions marked `muon.kernel`
        (which neither allocate nor free) form a group: one call where
        the first was allocates them all, their descriptors one after the
        other in one slot (an array of 64-bit words, each descriptor
        addressed by its word offset; a group of one is its descriptor's
        slot). Moving an allocation up over such ops keeps
        the most memory held at once the same: nothing is freed between
        the group's first and last allocation;
      - for its unranked views, the unranked descriptor `{rank, slot}`
        (`!llvm.struct<(i64, ptr)>`, brought back to the memref type by an
        unrealized cast that `reconcile-unrealized-casts` removes after
        the conversion), where the group is allocated;
      - for its deallocations, calls `@muon_rt_buffers_free(slot, layout,
        count)`: deallocations in one block with nothing between them but
        pure ops, casts and calls of `muon_rt_wait` (which releases and
        never allocates) form a run, and where the run's last one was,
        one call frees each stretch of consecutive members of a group
        (a deallocation in a nested region or on a cycle: one call each).
    Other allocations are left to the conversion. Nothing is done where a
    descriptor is not laid out in 64-bit words (an index or pointer width
    other than 64 bits in the data layout or in `llvm.data_layout`). The
    runtime functions are the step runtime's (`muon_runtime.h`): they
    allocate from the same heap as `_mlir_memref_to_llvm_aligned_alloc`,
    so code that frees such a buffer another way (a deallocation of a
    view, in a callee) must be converted with
    `use-generic-functions=1`, as `muon-to-llvm` does: libc's `free`
    cannot free them. A name the runtime functions need that the module
    gives to another kind of symbol, or a declaration of another type,
    is an error.
    Why: the conversion lowers an allocation to a size computation, a
    call, and a store per descriptor field when the buffer is cast to an
    unranked memref (about 25 LLVM operations for a 2-D buffer); a step
    makes seven buffers per matrix, and these were most of its lowered
    operations.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect"];
}

def MuonConvertStepToLLVM
    : Pass<"muon-convert-step-to-llvm", "mlir::ModuleOp"> {
  let summary = "Convert func, memref, arith, math, index and cf operations "
                "to the LLVM dialect in one conversion";
  let description = [{
    The patterns of `convert-func-to-llvm` (C interface wrappers for
    functions with `llvm.emit_c_interface` included; the module's
    `llvm.data_layout`, if any, honoured), `finalize-memref-to-llvm`,
    `convert-arith-to-llvm` (with the expansion of ceil/floor divisions),
    `convert-index-to-llvm`, `convert-cf-to-llvm` (with `cf.assert`) and
    `convert-math-to-llvm` (then `convert-math-to-libm` for math ops LLVM
    has no intrinsic for) in one partial conversion, after one over the
    external `func.func`
    declarations (so a pattern declaring `malloc` or `abort` finds the
    module's own declaration). cf and index operations left unconverted
    are an error, as in their passes, and so is any other operation left
    in one of the module's functions that is not of the LLVM dialect
    (reported at the first, instead of a translation to LLVM IR that
    fails without a location). The output has the same operations
    as those passes in a row; the declarations of called functions, and
    the unpacking of an entry's memref arguments, may come in another
    order. One walk of the module instead of five: each walk checks every
    operation, and a large step's function holds millions. Other dialects
    are left as they are; unrealized casts are left for
    `reconcile-unrealized-casts`.
  }];
  let options = [
    Option<"useGenericFunctions", "use-generic-functions", "bool",
           /*default=*/"false",
           "Allocate and free through _mlir_memref_to_llvm_alloc / _free "
           "(as finalize-memref-to-llvm's option of that name)">,
    Option<"useAlignedAlloc", "use-aligned-alloc", "bool", /*default=*/"false",
           "Allocate with aligned_alloc (or its generic function)">,
  ];
}

def MuonOptimiseKernelsOnly
    : Pass<"muon-optimise-kernels-only", "mlir::ModuleOp"> {
  let summary = "Mark every LLVM function but the kernels optnone, so LLVM "
                "optimises only the loops";
  let description = [{
    Runs last, on the LLVM dialect. Every `llvm.func` with a body that is
    not a kernel of `muon-outline-elementwise` gets `optimize_none` and
    `no_inline`: the step's glue (runtime calls and the buffers around
    them, tens of thousands of operations in a large step) is compiled
    without optimisation (fast instruction selection), while the kernels'
    loops are optimised and vectorised at the JIT's level. Optimising the
    glue bought nothing at run time and was most of the JIT's time.
  }];
}

def MuonInlineEntryIntoCInterface
    : Pass<"muon-inline-entry-into-c-interface", "mlir::ModuleOp"> {
  let summary = "Move an entry's body into its C interface, so that it is "
                "one function taking one pointer per buffer";
  let description = [{
    Runs on the LLVM dialect. For each `_mlir_ciface_F` that only loads its
    descriptors and calls `F` (what `convert-func-to-llvm` writes for an
    entry with `llvm.emit_c_interface` and no results), where that call is
    the only use of `F` (calls, invokes, personalities and address-of
    counted) and `F` carries nothing its body's meaning depends on
    (argument attributes such as byval, varargs, a personality, target
    attributes): `F`'s body moves into `_mlir_ciface_F`, in place of the
    call, and `F` is erased. The C interface, which muon-run,
    Python and the C API call, is unchanged. Why: `F` takes every
    descriptor field as a scalar (seven per buffer, tens of thousands in a
    large step), and LLVM's code generation for that many arguments grows
    faster than linearly.
  }];
}

def MuonForwardArgumentDescriptors
    : Pass<"muon-forward-argument-descriptors", "mlir::ModuleOp"> {
  let summary = "Hand the runtime an entry argument's own memref descriptor "
                "instead of a stack copy of it";
  let description = [{
    Runs on the LLVM dialect, after `muon-inline-entry-into-c-interface`.
    An entry such as `_mlir_ciface_F` receives one pointer per buffer to
    the caller's memref descriptor and loads it; casting the buffer to an
    unranked memref (every runtime call takes its tensors so) stores the
    same descriptor again into a stack slot of its own. Where a pointer
    argument of a function, in the slot's address space and without
    argument attributes, is only ever loaded (never stored through, passed
    on or compared), and a one-element stack slot of the loaded struct
    type has exactly one store, of a value that is that load or is rebuilt
    field by field from it (`insertvalue`s of `extractvalue`s at the same
    positions, every field set), and is otherwise only passed as a call
    argument (the call lowering passes an unranked memref as its rank and
    this pointer) or placed in the pointer field of an unranked descriptor
    `!llvm.struct<(i64, ptr)>` whose fields are only extracted and whose
    pointer is only passed as a call argument, the slot is replaced by the
    argument and the store and the rebuilt value (when unused) are erased.
    This assumes the ABI of entries lowered by `muon-to-llvm`: the
    caller's descriptors outlive the call and are not changed while it
    runs (muon-run, the C API and Python build a private one per buffer),
    and a callee handed a pointer to a ranked descriptor (behind an
    unranked memref) reads it and never writes it (the runtime,
    `memrefCopy`, the step's kernels; `muon_runtime.h` states it for the
    runtime). Why: each copy is a stack slot and a store per field (about
    fifteen LLVM operations), one for every argument of a step, which the
    JIT compiled at every start.
  }];
}

def MuonScalariseAggregates
    : Pass<"muon-scalarise-aggregates", "mlir::ModuleOp"> {
  let summary = "Pass memref descriptors between blocks and into stack "
                "slots as scalar fields, for fast instruction selection";
  let description = [{
    Runs on the LLVM dialect, after the conversion. A struct or array block
    argument (a memref descriptor yielded by an `scf.if`) becomes one
    argument per scalar field, the predecessors passing `extractvalue`s of
    the value they passed (folded through the `insertvalue`s that built
    it); a load or store of a whole descriptor becomes one per field; every
    field read is folded through the `insertvalue`s it reads from, and the
    ones left unused are erased; fixed-size stack slots in blocks outside
    any cycle move to the entry block. The program is the same. Left
    alone: kernels (`muon.kernel`, optimised by LLVM), packed structs
    (their fields are not naturally aligned), accesses that are volatile,
    atomic or aligned below 8, fields other than pointers and 64-bit
    integers, and the successors of an `llvm.invoke`. Why: LLVM's fast instruction selector, which the
    JIT uses for the step's unoptimised glue, refuses aggregate PHIs and
    aggregate stores, and selects the whole block of a refused branch with
    SelectionDAG instead, at a cost that grows faster than the block.
  }];
}

def MuonTablesByReference
    : Pass<"muon-tables-by-reference", "mlir::ModuleOp"> {
  let summary = "Pass each constant table to the runtime as the address of "
                "a constant descriptor, not as five scalars";
  let description = [{
    Runs on the LLVM dialect, after the conversion. A runtime function of
    the runtime's table that has a C interface is called through the
    wrapper `convert-func-to-llvm` writes for it: each memref argument is
    passed as its descriptor's scalar fields, which the wrapper stores into
    a stack slot whose address it hands to `_mlir_ciface_<name>`. Where the
    fields of a ranked memref argument are all constants describing a
    global's data (what `memref.get_global` lowers to: the global's
    address, a constant allocated pointer, offset, sizes and strides), the
    call instead passes the address of a private constant global holding
    that descriptor (one per distinct descriptor, named after the data's
    global with `_descriptor`), to a wrapper variant
    (`<name>_by_reference`, one per set of such arguments) that forwards
    it to the C interface unchanged. The C interface receives a pointer to
    the same fields as before, in read-only memory: the runtime only reads
    its tables' descriptors (muon_runtime.h). Wrappers no call uses any
    more are erased. Calls with a table built at run time (extents
    exchanged between members), calls in nested modules and functions
    outside the runtime's table are left alone. Why: a table costs the
    JIT's fast instruction selector five arguments on every call that
    takes one, about as much as a call.
  }];
}

def MuonRollCallRuns : Pass<"muon-roll-call-runs", "mlir::ModuleOp"> {
  let summary = "Turn each run of calls to one function into one call of a "
                "loop over a table of their arguments";
  let description = [{
    Runs on the LLVM dialect, after `muon-tables-by-reference` and before
    `muon-optimise-kernels-only`. A run is a sequence of direct calls to
    the same function of the module, with the same argument types, the C
    calling convention, no results, no operand bundles, no variadic
    arguments, no argument or result attributes, no tail-call kind, not
    `convergent` and without alias or access-group metadata, in one block
    of a function that is not a kernel, with nothing between two of them
    but operations free of memory effects that cannot trap (constants,
    addresses, pointer arithmetic; not a division, a remainder or inline
    assembly). Calls of LLVM intrinsics (`llvm.*`) and of functions with
    an `llvm.immarg` parameter are never in a run: their arguments may
    have to be immediates.
    Each run of at least `min-run` calls is cut into chunks of at most
    `max-run`; a chunk (of at least `min-run` calls) is replaced, where its
    last call was, by one call of a private loop function
    `<callee>_run(shared..., count, table, addresses, stored)` (`shared`:
    the shared values and the offsets' bases, in argument order) that calls
    the callee once per call of the chunk, in the original order, with the
    original arguments:

    - an argument that is an integer constant (`llvm.mlir.constant`, at
      most 64 bits) in every call is a column of a private constant global
      `<callee>_run_table`, one row of i64 per call, written as one dense
      attribute (the loop truncates a narrower integer);
    - one that is the address of a global or function
      (`llvm.mlir.addressof`, default address space, not thread-local) in
      every call is a column of the same table holding an index into
      `<callee>_run_addresses`, the chunk's distinct addresses in order of
      first use;
    - one that is the same value in every call is passed to the loop once;
    - one that is, in every call, one base pointer (the same value) or a
      GEP of it with a single constant index, all these GEPs of one
      element type (at least one GEP), is its base passed to the loop once
      and a column of the table holding the index (0 for the base itself):
      the loop makes the GEP (with no `inbounds` or other flags, which only
      drops assumptions). Buffers inside one allocation of the step are
      such offsets;
    - any other is stored, just before the loop's call, into a stack slot
      of the function (one per record type, at the top of the entry block,
      as long as the longest chunk using it, aligned as the record type
      prefers) that the loop reads.

    The loop's last three pointer arguments are null where a chunk has no
    table column, no address or no stored argument.

    Moving the earlier calls of a chunk to its last one changes nothing:
    only operations that neither touch memory nor trap were between them. One loop
    function is made per callee and set of argument sources. Why: the
    JIT's fast instruction selector pays for each call and each argument;
    on a 405B step the calls fell from 16,221 to 7,483 (its 2,646 argument
    checks are 21 loop calls; 3,925 of its 4,390 batch items are 413),
    with one store per run-time value; taking offsets into the table
    removed 7,056 of the remaining 16,344 stores and the GEPs that made
    their values.
  }];
  let options = [
    Option<"minRun", "min-run", "int64_t", /*default=*/"4",
           "Shortest run (at least 2) that becomes a loop">,
    Option<"maxRun", "max-run", "int64_t", /*default=*/"128",
           "Most calls per loop call, at most 65536 (bounds the stack "
           "slot, and the translation's cost of an address list, quadratic "
           "in its length)">,
  ];
}

def MuonSCFToCFLastFirst
    : Pass<"muon-scf-to-cf", "mlir::func::FuncOp"> {
  let summary = "Lower SCF to branches, a block's ops last to first (time "
                "linear in the block's length)";
  let description = [{
    MLIR's `convert-scf-to-cf` patterns, applied to the SCF ops of each of
    the function's blocks from the last to the first. Lowering an
    `scf.if` or `scf.for` splits its block and moves every op after it; in
    the first-to-last order of `convert-scf-to-cf` an expanded step's entry
    (one block with thousands of such ops) moved the rest of the block at
    each of them, quadratic in the number of parameters. Last to first,
    each op moves once. The result is the same IR.
  }];
  let dependentDialects = ["mlir::cf::ControlFlowDialect"];
}

def MuonShareBufferViews
    : Pass<"muon-share-buffer-views", "mlir::func::FuncOp"> {
  let summary = "Give each buffer one cast to an unranked memref and each "
                "constant table one read per function";
  let description = [{
    Considers the ops of the function's own blocks (not those in nested
    regions: they may be isolated, hold symbols of their own, or be
    outlined later). Every `memref.cast` of one value to one unranked type
    becomes the first of them, moved right after the value's definition
    (the start of its block for a block argument), where it dominates every
    use of the value; casts of a value defined in a block on a CFG cycle
    are left alone (moved into a loop, a cast's stack slot would be taken
    per iteration). Every `memref.get_global` of one global and type
    becomes one, at the top of the function. A cast to a ranked type that
    only makes sizes dynamic (identity layouts, the same element type and
    memory space) cannot fail, and is shared like an unranked one; other
    casts to ranked types are not touched: one may assume what a branch
    checked (a rank, a static size).
    Why: the conversion to LLVM fills a stack slot with the whole
    descriptor for each cast to an unranked memref (the form every runtime
    call takes) and expands each table read into about ten operations, so
    a buffer passed to several calls, or a table read at each use, cost
    that each time. Run on memrefs after the SCF lowering, before the
    conversion to LLVM and before `muon-split-entry-block` (which then
    moves these ops out of the entry block with the rest of the body).
  }];
}

def MuonSplitEntryBlock
    : Pass<"muon-split-entry-block", "mlir::func::FuncOp"> {
  let summary = "Move a function's body out of its entry block (linear "
                "signature conversion to LLVM)";
  let description = [{
    The entry block becomes a branch to a new block holding what it held.
    `convert-func-to-llvm` inserts a cast per argument at the top of the
    entry block and asks for the order of its ops between insertions,
    renumbering the block each time: with thousands of arguments and the
    whole step in that block, the conversion was quadratic. Run after the
    SCF lowering, before the conversion to LLVM; LLVM merges the blocks
    back.
  }];
  let dependentDialects = ["mlir::cf::ControlFlowDialect"];
}

def MuonEmptyTensorToAllocTensor
    : Pass<"muon-empty-tensor-to-alloc-tensor", "mlir::ModuleOp"> {
  let summary = "Turn every tensor.empty into a bufferization.alloc_tensor "
                "in one walk";
  let description = [{
    The rewrite of upstream's `empty-tensor-to-alloc-tensor` (same dynamic
    sizes, same result type, no copy), done in one walk of the module
    instead of with the greedy rewrite driver, which also tries to fold
    every other op and iterates to a fixed point: on a large step that
    took far longer than the rewrite. Nothing else is folded; the CSE
    after it in `muon-to-llvm` merges duplicates and erases dead ops.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def MuonBufferizeEntryArguments
    : Pass<"muon-bufferize-entry-arguments", "mlir::ModuleOp"> {
  let summary = "Give every function that nothing calls memref arguments "
                "before one-shot bufferization";
  let description = [{
    Each ranked tensor argument (without an encoding or a
    `bufferization.buffer_layout`) of a function with a body that no op of
    the module refers to (by symbol, anywhere in it) becomes a memref of the same
    shape and element type with the identity layout, read at the top of
    the body by `bufferization.to_tensor ... restrict`, `writable` unless
    the argument says `bufferization.writable = false`. That is the buffer
    and the assumptions one-shot bufferization gives a function argument
    itself with `bufferize-function-boundaries` and
    `function-boundary-type-conversion=identity-layout-map` (arguments do
    not alias each other and may be written in place), so the bufferized
    function is the same.

    Why: one-shot bufferization's function-boundary analysis compares every
    returned tensor with every tensor argument, once for aliasing and once
    for equivalence; a step returns two tensors per matrix and takes three,
    so that analysis grew with the square of the parameters. With memref
    arguments nothing is left to compare. Functions that are called keep
    their tensor arguments: their callers need the analysis.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def MuonBufferize : Pass<"muon-bufferize", "mlir::ModuleOp"> {
  let summary = "One-shot bufferization of the module, with the in-place "
                "analysis only for the functions where it decides something";
  let description = [{
    Upstream's `one-shot-bufferize` with the options `muon-to-llvm` uses
    (`bufferize-function-boundaries`, identity layouts for function
    boundaries and for buffers whose layout cannot be inferred, and
    `allow-return-allocs-from-loops`: a loop whose body yields a buffer
    other than its iteration argument's, such as a collective's result,
    yields a new allocation each iteration, which the deallocation passes
    free once the next iteration has read it), except
    that a function is bufferized without the in-place analysis
    (upstream's `copy-before-write` for that function, its
    `no-analysis-func-filter`) where the analysis has nothing to decide:

    - every tensor operand that an op writes is a fresh destination (a
      `bufferization.alloc_tensor` without `copy`, or a `tensor.empty`),
      the op does not read it, and the op is in the destination's own
      block: without the analysis the write gets a new allocation where
      it is, with nothing copied into it, in place of the destination's
      (left unused and dropped); with it, the destination's own
      allocation: the same buffers either way (a write in a loop or
      branch below its destination would allocate there, once per
      iteration, and one that reads its destination would copy the
      undefined contents first);
    - no loop carries a tensor (`scf.for`, `scf.while` and other loops
      with tensor operands or results): a loop's yielded buffer may need
      a copy that only the analysis avoids;
    - no call passes or returns a tensor: bufferizing a call reads what the
      analysis found of its callee;
    - no op of the module refers to the function (it is an entry, such as
      the step, not a callee): the analysis of a callee is what its
      callers' analysis learns from.

    Every other function is analysed as upstream does. Bufferizing
    without the analysis is upstream's conservative mode, correct wherever
    it is taken; where it would give other buffers (a
    `tensor.insert_slice` into an assembled matrix, an update in place, a
    write into an argument, a write in a loop) the analysis runs.

    Why: the analysis decides, for every write, whether it may reuse its
    operand's buffer; on a step whose writes all go to fresh destinations
    it has nothing to decide, yet it was three quarters of this pass's
    time on a 405B step (0.21 of 0.28 s).

    `always-analyse` analyses every function (upstream's behaviour), for
    comparisons; `remarks` reports the choice made for each function as a
    remark at the function.
  }];
  let options = [Option<"alwaysAnalyse", "always-analyse", "bool",
                        /*default=*/"false",
                        "Run the in-place analysis on every function">,
                 Option<"remarks", "remarks", "bool", /*default=*/"false",
                        "A remark at each function: analysed or not">];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def MuonLinalgToLoops : Pass<"muon-linalg-to-loops", "mlir::func::FuncOp"> {
  let summary = "Run convert-linalg-to-loops on the functions that hold a "
                "linalg op";
  let description = [{
    Upstream's `convert-linalg-to-loops`, unchanged, on a function that
    holds a linalg op; a function without one is left as it is (upstream's
    pass would still try to fold each of its ops). In `muon-to-llvm` the
    linalg ops are in the outlined kernels, and the step function, most
    of a large module, is skipped.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def MuonExpandStridedMetadata
    : Pass<"muon-expand-strided-metadata", "mlir::func::FuncOp"> {
  let summary = "Expand memref views into explicit metadata, visiting only "
                "the ops that need it";
  let description = [{
    Upstream's `expand-strided-metadata` patterns (subviews, expand and
    collapse shapes, reads of strided metadata and of aligned pointers
    become explicit offset, size and stride computations), applied to the
    ops they are rooted at and to the ops the rewrites create, instead of
    handing the whole function to the greedy rewrite driver: that also
    tried to fold every other op and took far longer than the rewrite on a
    large step. The rewritten ops are the same; other ops are not folded.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def MuonDistinctResults : Pass<"muon-distinct-results", "mlir::ModuleOp"> {
  let summary = "Give every buffer a function returns more than once a "
                "copy per repeat";
  let description = [{
    Runs after bufferization, before `buffer-results-to-out-params`: a
    `func.return` that returns one buffer at several positions returns a
    fresh copy at each repeat, so that every result has a buffer of its own
    (written straight into its own out-buffer). MLIR 22's hoisting of
    result allocations crashes on a repeated buffer.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

#endif // MUON_CONVERSION_PASSES_TD
