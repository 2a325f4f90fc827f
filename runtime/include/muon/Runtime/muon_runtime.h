/*===- muon_runtime.h - C ABI of the Muon step runtime ------------*- C -*-===//
 *
 * The functions that code compiled by `muon-to-llvm` calls, and that a host
 * program (muon-run, or a training framework) calls around it. Plain C, no
 * LLVM dependency. See docs/runtime.md for the full contract.
 *
 * Tensors cross the ABI as MLIR memref descriptors: compiled code passes
 * unranked memrefs (`muon_rt_memref`: rank + pointer to a ranked
 * descriptor) through MLIR's C interface, which prefixes every function that
 * takes a memref with `_mlir_ciface_`. Descriptors must be contiguous
 * row-major (identity layout); anything else is an error, not a silent copy.
 *
 * Every failure (MPI error, bad shape, timeout, dead peer) prints one line
 *   muon-rt: error: rank R: OP on COMM: CAUSE
 * to stderr and aborts the whole job. There is no retry and no fallback.
 *===----------------------------------------------------------------------===*/

#ifndef MUON_RUNTIME_MUON_RUNTIME_H
#define MUON_RUNTIME_MUON_RUNTIME_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An MLIR unranked memref: `descriptor` points at
 *   { T *allocated; T *aligned; int64_t offset;
 *     int64_t sizes[rank]; int64_t strides[rank]; }
 * A callee reads the ranked descriptor during the call and never writes
 * it or keeps its address: compiled steps point `descriptor` straight at
 * the caller's descriptor of an argument (muon-forward-argument-
 * descriptors), so it is shared, read-only memory. (muon_rt_buffers_alloc
 * writes a descriptor into the step's stack slot before any unranked
 * memref points at it.) */
typedef struct {
  int64_t rank;
  void *descriptor;
} muon_rt_memref;

/* A 1-D memref<?xi64> descriptor (mesh shapes, axis lists, extents). */
typedef struct {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} muon_rt_i64_array;

/* A 1-D memref<?xf64> descriptor (Newton-Schulz coefficients). */
typedef struct {
  double *allocated;
  double *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} muon_rt_f64_array;

/* Reductions. The compiler maps #dist.reduce to these by name
 * (lib/Conversion, a switch over every kind); the numbers are defined here
 * only. */
enum { MUON_RT_SUM = 0, MUON_RT_AVG = 1, MUON_RT_MAX = 2, MUON_RT_MIN = 3 };

/*--- Entry points -----------------------------------------------------------*/
/* A lowered entry @F takes its arguments' local shards (and f64 scalars for
 * hyper-parameters the step reads at run time), then one out-buffer per
 * result (MLIR's C interface: _mlir_ciface_F). Which argument / result is
 * which parameter, gradient, momentum or hyper-parameter is published by the
 * compiler in a public constant table `__muon_roles_F` of int64 values:
 *   [MUON_RT_ROLES_VERSION, num_args, num_results,
 *    then per argument and then per result: k, (role, step, param) * k]
 * where role is a MUON_RT_ROLE_*, step the index of the muon.step in the
 * function (in program order) and param the parameter's index in that step
 * (-1 for MUON_RT_ROLE_LR and MUON_RT_ROLE_WEIGHT_DECAY, f64 arguments that
 * the step reads as lr / weight_decay); k is 0 for a tensor no step uses and
 * 2 or more when one value plays several roles (a host that generates one
 * tensor per role must refuse that). Version 2 added the scalar roles.
 * Beside it, `__muon_dims_F`: [num_args + num_results, then each argument's
 * and result's number of dims, 0 for an f64 scalar]: the compiled code
 * reads each descriptor with those dims, so a host checks them. */
enum { MUON_RT_ROLES_VERSION = 2 };
enum {
  MUON_RT_ROLE_PARAM = 0,
  MUON_RT_ROLE_GRAD = 1,
  MUON_RT_ROLE_MOMENTUM = 2,
  MUON_RT_ROLE_LR = 3,
  MUON_RT_ROLE_WEIGHT_DECAY = 4
};

/*--- Process and job --------------------------------------------------------*/

/* Initialises the backend (MUON_RT_BACKEND, default "mpi") from the launcher's
 * environment. Idempotent; compiled code calls it implicitly. */
void muon_rt_init(int *argc, char ***argv);
/* Keeps freed buffers in the process's heap for the next step instead of
 * returning them to the kernel (glibc's mmap and trim thresholds; no-op
 * with MUON_RT_MALLOC_REUSE=0 or another libc). muon_rt_init calls it; a
 * process that calls the runtime's kernels without a backend (a benchmark)
 * calls it to allocate as a step does. */
void muon_rt_reuse_freed_buffers(void);
/* Finalises the backend. Call once, after the last step. */
void muon_rt_finalize(void);
int64_t muon_rt_world_rank(void);
int64_t muon_rt_world_size(void);
/* Seconds a wait may block before the job is aborted (MUON_RT_TIMEOUT_S). */
void muon_rt_set_timeout(double seconds);
/* Reports `cause` for operation `op` as this rank's error and aborts the job. */
void muon_rt_fail(const char *op, const char *cause);
/* Host helper (not called by compiled code): barrier over the world. */
void muon_rt_barrier(void);
/* Host helpers: a deadline for a phase of the host program that has no
 * collective to time out (a rank alone, or host work between steps). After
 * muon_rt_watchdog_arm(what), unless the phase is disarmed or re-armed within
 * the timeout (MUON_RT_TIMEOUT_S), the rank reports
 *   muon-rt: error: rank R: watchdog: WHAT did not finish within T s
 * and aborts the job. One phase at a time; arming again replaces it. */
void muon_rt_watchdog_arm(const char *what);
void muon_rt_watchdog_disarm(void);

/* Host helpers: a timeline of this rank. After muon_rt_trace_start() (call
 * it right after muon_rt_barrier(), so ranks share an origin), every
 * collective (from its call to its completion, "comm" lane 1) and every
 * Newton-Schulz ("compute" lane 0) is recorded with seconds since the start,
 * until muon_rt_trace_stop(). muon_rt_trace_event copies event `index` out
 * (name truncated to `capacity` - 1 bytes, NUL-terminated) and returns the
 * name's full length, or -1 for an index out of range. muon_rt_trace_mark
 * adds a host event; muon_rt_trace_now is the clock it uses. */
void muon_rt_trace_start(void);
void muon_rt_trace_stop(void);
int64_t muon_rt_trace_count(void);
int64_t muon_rt_trace_event(int64_t index, int32_t *lane, double *start,
                            double *end, char *name, int64_t capacity);
void muon_rt_trace_mark(int32_t lane, const char *name, double start,
                        double end);
double muon_rt_trace_now(void);

/*--- Communicators ----------------------------------------------------------*/

/* The communicator of the ranks that differ only along `axes` (indices into
 * `mesh_shape`, in the order that numbers the group row-major). Collective
 * over the world the first time a (mesh, axes) pair is seen, so every rank
 * must request the same pairs in the same order: compiled code does so at
 * the top of the entry point. Checks that the world size equals the mesh's
 * rank count. Returns a handle > 0. */
int64_t _mlir_ciface_muon_rt_comm(muon_rt_i64_array *mesh_shape,
                                  muon_rt_i64_array *axes);
/* This rank's index inside the communicator (dist.coord). */
int64_t muon_rt_comm_rank(int64_t comm);

/*--- Collectives ------------------------------------------------------------*/
/* Compiled code calls only the functions listed in
 * muon_runtime_functions.def (one row each: name, C interface, kinds). */
/* `extents` gives every group member's length along `dim` (chunk rule,
 * weights or explicit sizes, resolved by the compiler). With `async` != 0
 * the call returns a request handle to pass to muon_rt_wait; the output may
 * be read only after the wait. Synchronous calls return 0. */

int64_t _mlir_ciface_muon_rt_all_gather(int64_t comm, muon_rt_memref *in,
                                        muon_rt_memref *out, int64_t dim,
                                        muon_rt_i64_array *extents,
                                        int64_t async);
int64_t _mlir_ciface_muon_rt_gather(int64_t comm, muon_rt_memref *in,
                                    muon_rt_memref *out, int64_t dim,
                                    int64_t root, muon_rt_i64_array *extents,
                                    int64_t async);
int64_t _mlir_ciface_muon_rt_scatter(int64_t comm, muon_rt_memref *in,
                                     muon_rt_memref *out, int64_t dim,
                                     int64_t root, muon_rt_i64_array *extents,
                                     int64_t async);
int64_t _mlir_ciface_muon_rt_reduce_scatter(int64_t comm, muon_rt_memref *in,
                                            muon_rt_memref *out, int64_t dim,
                                            int64_t reduction,
                                            muon_rt_i64_array *extents,
                                            int64_t async);
int64_t _mlir_ciface_muon_rt_all_reduce(int64_t comm, muon_rt_memref *in,
                                        muon_rt_memref *out, int64_t reduction,
                                        int64_t async);
int64_t _mlir_ciface_muon_rt_broadcast(int64_t comm, muon_rt_memref *in,
                                       muon_rt_memref *out, int64_t root,
                                       int64_t async);
/* Splits `in` along split_dim by the chunk rule, sends piece j to member j,
 * concatenates what arrives along concat_dim in member order. */
int64_t _mlir_ciface_muon_rt_all_to_all(int64_t comm, muon_rt_memref *in,
                                        muon_rt_memref *out, int64_t split_dim,
                                        int64_t concat_dim, int64_t async);
/* Batched rooted gathers, scatters or broadcasts over one communicator
 * (dist.gather_batch / dist.scatter_batch / dist.broadcast_batch),
 * exchanged in one all-to-all: muon_rt_batch_begin opens a batch of `kind`
 * MUON_RT_BATCH_GATHER, _SCATTER or _BROADCAST and returns its handle;
 * each muon_rt_batch_item adds one item with the arguments muon_rt_gather /
 * muon_rt_scatter take (a broadcast item ignores `dim` and `extents`: the
 * root's whole operand goes to every member);
 * muon_rt_batch_end runs the exchange (the only collective call: counted
 * once) and returns a request handle (async != 0) or 0. Operands must stay
 * valid until muon_rt_batch_end (which copies what it sends, and a root's
 * own pieces), results until the exchange completes. Items are checked like the
 * single calls; a mistake names the item ("gather_batch item 2"). */
enum {
  MUON_RT_BATCH_GATHER = 0,
  MUON_RT_BATCH_SCATTER = 1,
  MUON_RT_BATCH_BROADCAST = 2
};
int64_t muon_rt_batch_begin(int64_t comm, int64_t kind);
void _mlir_ciface_muon_rt_batch_item(int64_t batch, muon_rt_memref *in,
                                     muon_rt_memref *out, int64_t dim,
                                     int64_t root, muon_rt_i64_array *extents);
int64_t muon_rt_batch_end(int64_t batch, int64_t async);
/* The root's size of dim `dim` of its operand, on every member: sizes a
 * scatter/broadcast result whose operand is only meaningful on the root. */
int64_t _mlir_ciface_muon_rt_root_dim(int64_t comm, muon_rt_memref *in,
                                      int64_t root, int64_t dim);
/* Lengths along `dim` that the members hold, into `out` (one per member);
 * returns their sum. Collective: sizes a gather whose pieces are uneven in a
 * rank-dependent way. */
int64_t _mlir_ciface_muon_rt_member_dims(int64_t comm, muon_rt_memref *in,
                                         int64_t dim, muon_rt_i64_array *out);
/* The chunk rule (even, or weighted when `weights` is not empty) for
 * `length` over out->size members, into `out`. Local. */
void _mlir_ciface_muon_rt_chunk_extents(int64_t length,
                                        muon_rt_i64_array *weights,
                                        muon_rt_i64_array *out);
/* Completes an asynchronous collective (within the timeout); 0 (what a
 * synchronous call returns, and dist.completed_token) is complete already.
 * Requests in flight also progress inside muon_rt_newton_schulz, between
 * its products, so a prefetched exchange moves while the rank computes. */
void muon_rt_wait(int64_t request);

/*--- Compute ----------------------------------------------------------------*/

/* Newton-Schulz orthogonalisation of the last two dims of `x` (leading dims
 * are a batch) into `out`, of the same shape (`out` may be `x`: in place).
 * `coeffs` holds 3 values (one triple for every iteration) or 3 * steps.
 * `precision` 0 = fp32; 1 = bf16 operands with
 * fp32 accumulation, as the GPU's bf16 mode (every product's operands
 * rounded to bf16, nearest even; `a` joins B's diagonal before rounding).
 * Counts one call, one matrix per batch entry and its FLOPs in this rank's
 * counters. */
enum { MUON_RT_NS_FP32 = 0, MUON_RT_NS_BF16 = 1 };
void _mlir_ciface_muon_rt_newton_schulz(muon_rt_memref *x, muon_rt_memref *out,
                                        int64_t steps,
                                        muon_rt_f64_array *coeffs, double eps,
                                        int64_t precision);

/* The same on an NVIDIA GPU (target=cuda), by libmuon_runtime_cuda (loaded
 * at the first call: MUON_RT_CUDA_LIBRARY, else beside libmuon_runtime.so,
 * else the loader's path) with `precision` 0 = fp32 (exact, no TF32) or
 * 1 = bf16 operands on tensor cores (fp32 accumulation). Inside a
 * target=cuda step `x` and `out` are device memory and the call is queued
 * on the stream; elsewhere they are host memory, staged through the device.
 * Rank r uses GPU (local rank mod device count). Counted like
 * muon_rt_newton_schulz. No GPU, no library or a CUDA failure is a fatal
 * error on `cuda`. */
void _mlir_ciface_muon_rt_newton_schulz_cuda(muon_rt_memref *x,
                                             muon_rt_memref *out, int64_t steps,
                                             muon_rt_f64_array *coeffs,
                                             double eps, int64_t precision);

/* Checks an entry-point argument before any collective. `expected` lists
 * the local shape every rank must pass, as runs of ranks with one shape:
 *   [MUON_RT_SHAPE_RUNS, world_size, d, then per run: first rank, d sizes]
 * d the argument's number of dims, runs in rank order, the first starting
 * at rank 0; a run lasts until the next one starts (the last one to
 * world_size - 1). Its size grows with the places where shards differ,
 * not with the ranks. Inside a target=cuda step the
 * argument must also be memory of this rank's GPU. A mismatch aborts naming
 * the argument. */
enum { MUON_RT_SHAPE_RUNS = -1 };
void _mlir_ciface_muon_rt_check_arg(int64_t index, muon_rt_memref *arg,
                                    muon_rt_i64_array *expected);

/*--- Buffers of the step ---------------------------------------------------*/
/* Buffers the step allocates together and hands to calls as unranked memrefs
 * (muon-allocate-through-runtime). `layouts` is `count` constant tables one
 * after the other, each
 *   { rank, bytes, alignment, sizes[rank], strides[rank] }
 * and `descriptors` room for the `count` buffers' ranked descriptors one
 * after the other (8 * (3 + 2 * rank) bytes each, no padding: the compiled
 * step's slot is an array of 64-bit words). For each buffer this writes the whole descriptor:
 * allocated and aligned pointer (both the address of `bytes` bytes aligned
 * to `alignment`, a power of two, from the step heap that
 * _mlir_memref_to_llvm_aligned_alloc also serves), offset 0, then the sizes
 * and strides. Out of memory fails like any runtime call. */
void muon_rt_buffers_alloc(void *descriptors, const int64_t *layouts,
                           int64_t count);
/* Frees the `count` buffers whose descriptors muon_rt_buffers_alloc wrote at
 * `descriptors` (a run of them from one call, or of several calls' when
 * they lie one after the other), reading each allocated pointer; `layouts`
 * their tables, as muon_rt_buffers_alloc read them. */
void muon_rt_buffers_free(void *descriptors, const int64_t *layouts,
                          int64_t count);

/*--- target=cuda ------------------------------------------------------------*/
/* A target=cuda step calls muon_rt_cuda_step_begin first (it returns the
 * stream its kernels are launched on: NULL, the legacy default stream, on
 * which Newton-Schulz and every copy of the runtime are ordered too) and
 * muon_rt_cuda_step_end before it returns (which waits for the step's GPU
 * work). In between, every buffer the step hands the runtime is device
 * memory: the step heap allocates there, and the collectives stage their
 * buffers through the host (copied back to the device when they complete).
 * Nested steps are counted; only the outermost end waits. */
void *muon_rt_cuda_step_begin(void);
void muon_rt_cuda_step_end(void);

/* What MLIR's translation of gpu.binary and gpu.launch_func calls: the
 * kernels' image (cubin or PTX) loaded as a module, a kernel looked up by
 * name, and a launch with kernel parameters `params` on `stream`. */
void *mgpuModuleLoad(void *data, size_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);

/* Host helpers for the callers of a target=cuda step: `count` floats copied
 * into new device memory, copied back to the host, and freed. */
float *muon_rt_cuda_to_device(const float *host, int64_t count);
void muon_rt_cuda_to_host(float *host, const float *device, int64_t count);
void muon_rt_cuda_free(float *device);

/*--- Host helpers (not called by compiled code) ----------------------------*/
/* Collective over the world like any collective (every rank calls them at
 * the same point), within the timeout, failing like any other call. A host
 * program collects results through these, never around the runtime. */

/* Every rank's `n` into counts[0 .. world_size), on every rank. */
void muon_rt_host_counts(int64_t n, int64_t *counts);
/* Every rank's `n` floats, concatenated in rank order, into `out` on world
 * rank 0 (ignored elsewhere); `counts` as returned by muon_rt_host_counts. */
void muon_rt_host_gather_f32(const float *data, int64_t n, float *out,
                             const int64_t *counts);
/* Every rank's `n` doubles (the same n everywhere), concatenated in rank
 * order, into `out` on every rank. */
void muon_rt_host_all_gather_f64(const double *data, int64_t n, double *out);

/*--- Counters (zero-redundancy proof) ---------------------------------------*/

typedef struct {
  int64_t ns_calls;    /* muon_rt_newton_schulz invocations */
  int64_t ns_matrices; /* matrices orthogonalised (batch entries) */
  double ns_flops;     /* GEMM FLOPs of those, 2*m*n*k per product */
  int64_t collectives; /* collectives started */
  int64_t bytes_sent;  /* payload this rank contributed */
  /* Buffers compiled steps allocate for themselves (the lowering calls
   * _mlir_memref_to_llvm_alloc / _aligned_alloc / _free, which the runtime
   * provides): bytes held now, and the most held at once. */
  int64_t heap_bytes_live;
  int64_t heap_bytes_peak;
  /* Waiting for collectives to complete (muon_rt_wait and blocking calls):
   * wall seconds, and the processor seconds the waiting thread spent
   * polling in them. */
  double wait_seconds;
  double wait_cpu_seconds;
} muon_rt_counters;

void muon_rt_get_counters(muon_rt_counters *out);
/* Zeroes the counters; the heap peak restarts from the bytes held now. */
void muon_rt_reset_counters(void);

#ifdef __cplusplus
}
#endif

#endif /* MUON_RUNTIME_MUON_RUNTIME_H */
