/*===- muon_runtime_nccl.h - Collectives over NCCL ----------------*- C -*-===
 *
 * The NCCL transport of the Muon runtime: communicators (a world one from a
 * unique id, sub-groups split from it) and the runtime's seven collectives
 * on fp32 buffers, each queued on one communication stream and completed by
 * a CUDA event. Buffers are in device memory, or in host memory staged
 * through pinned and device buffers. A collective on device buffers starts
 * after the work queued before it on the legacy default stream, where the
 * runtime's kernels, Newton-Schulz and copies run. Plain C, no MPI: the
 * caller exchanges the unique id.
 * A failure returns non-zero and leaves its message in muon_nccl_error().
 * See docs/gpu.md.
 *===----------------------------------------------------------------------===*/

#ifndef MUON_RUNTIME_MUON_RUNTIME_NCCL_H
#define MUON_RUNTIME_MUON_RUNTIME_NCCL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a unique id (ncclUniqueId). */
#define MUON_NCCL_ID_BYTES 128

typedef struct muon_nccl_comm muon_nccl_comm;
typedef struct muon_nccl_op muon_nccl_op;

/* The collectives (the runtime's Backend interface, one for one). */
enum {
  MUON_NCCL_ALL_GATHER_V = 0,
  MUON_NCCL_GATHER_V = 1,
  MUON_NCCL_SCATTER_V = 2,
  MUON_NCCL_REDUCE_SCATTER_V = 3,
  MUON_NCCL_ALL_REDUCE = 4,
  MUON_NCCL_BROADCAST = 5,
  MUON_NCCL_ALL_TO_ALL_V = 6
};

/* Reductions (the numbers of muon_runtime.h's MUON_RT_SUM/MAX/MIN; an
 * average is a sum the caller divides). */
enum { MUON_NCCL_SUM = 0, MUON_NCCL_MAX = 2, MUON_NCCL_MIN = 3 };

/* Where the buffers of a collective live. */
enum { MUON_NCCL_HOST = 0, MUON_NCCL_DEVICE = 1 };

/* One collective. Counts and displacements are in elements, one per member
 * of the communicator; they are the same on every member, except an
 * all-to-all's, which are this member's send and receive blocks.
 *   all_gather_v:      in[in_count] -> out blocks (counts, displs)
 *   gather_v:          in[in_count] -> out blocks at `root` only
 *   scatter_v:         in blocks at `root` only -> out[out_count]
 *   reduce_scatter_v:  in blocks (counts, displs) -> out[counts[me]]
 *   all_reduce:        in[in_count] -> out[in_count] (may be in place)
 *   broadcast:         out[out_count] from `root` (in is ignored)
 *   all_to_all_v:      in blocks (counts, displs) -> out blocks
 *                      (recv_counts, recv_displs)
 * Host buffers may overlap: the input is read when the collective starts.
 * Device buffers must not, except an all-reduce exactly in place (in ==
 * out); a broadcast is always in place. */
typedef struct {
  int kind;
  const float *in;
  int64_t in_count;
  float *out;
  int64_t out_count;
  const int64_t *counts, *displs;
  const int64_t *recv_counts, *recv_displs;
  int root;
  int reduce;
} muon_nccl_collective;

/* The last failure's message on this thread ("" when none). */
const char *muon_nccl_error(void);

/* NCCL's version code (ncclGetVersion), 0 when it cannot be read. */
int muon_nccl_version(void);

/* Number of CUDA devices this process can use (0 when none or no driver). */
int muon_nccl_device_count(void);

/* The 16-byte UUID of CUDA device `device` (to tell ranks sharing a GPU
 * apart from ranks on GPUs of their own) and its PCI bus id as text
 * ("0000:1b:00.0", at most 32 bytes with the terminator). */
int muon_nccl_device_identity(int device, void *uuid, char *pci);

/* A fresh unique id (MUON_NCCL_ID_BYTES bytes) for muon_nccl_comm_init;
 * one rank makes it and sends it to the others. */
int muon_nccl_unique_id(void *id);

/* Joins the world communicator of `nranks` processes as `rank` on CUDA
 * device `device`. Collective over the processes; initialisation is
 * non-blocking and waited on for at most `timeout_s` seconds (then an
 * error: a peer did not arrive), so it cannot hang. */
int muon_nccl_comm_init(muon_nccl_comm **out, const void *id, int nranks,
                        int rank, int device, double timeout_s);

/* The communicator of the members of `parent` with the same `color`,
 * ordered by `key` (ncclCommSplit). Collective over `parent`; waited on for
 * at most `timeout_s` seconds. */
int muon_nccl_comm_split(muon_nccl_comm *parent, int color, int key,
                         muon_nccl_comm **out, double timeout_s);

/* Members and this process's index. */
int muon_nccl_comm_size(const muon_nccl_comm *comm);
int muon_nccl_comm_rank(const muon_nccl_comm *comm);

/* Aborts the communicator's operations in flight and frees it (used when
 * the job fails: it returns even when peers are gone). */
void muon_nccl_comm_abort(muon_nccl_comm *comm);

/* Frees the communicator after its operations finished. */
int muon_nccl_comm_destroy(muon_nccl_comm *comm);

/* Queues the collective on the communication stream and returns at once
 * with the operation in *out (free it with muon_nccl_op_free once done). */
int muon_nccl_start(muon_nccl_comm *comm, const muon_nccl_collective *c,
                    int memory, muon_nccl_op **out);

/* 1 when done (host outputs written), 0 while in flight, -1 on failure
 * (the CUDA error, or NCCL's asynchronous error of the communicator). */
int muon_nccl_test(muon_nccl_op *op);

/* Releases the operation. Never waits: the staging of an operation freed
 * before it is done is left to the stream (leaked), as when a job fails. */
void muon_nccl_op_free(muon_nccl_op *op);

#ifdef __cplusplus
}
#endif

#endif /* MUON_RUNTIME_MUON_RUNTIME_NCCL_H */
