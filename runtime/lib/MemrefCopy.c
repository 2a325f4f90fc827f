/* memrefCopy, the one function of MLIR's C runner utilities that compiled
 * steps call (memref.copy between memrefs whose layout the lowering cannot
 * prove contiguous), provided by the runtime so that a compiled step needs
 * nothing but the runtime. Debian's libmlir_c_runner_utils.so depends on
 * libMLIR and libLLVM: a GPU machine without LLVM does not have them, and a
 * process that loaded them globally to run a step broke other LLVM users
 * in it (triton, imported by torch). Same ABI and semantics as MLIR's:
 * copies an unranked strided memref of `elem_size`-byte elements into
 * another of the same shape. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t rank;
  void *descriptor;
} unranked_memref;

/* { T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
 *   int64_t strides[rank]; } */
typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t shape_and_strides[];
} strided_memref;

void memrefCopy(int64_t elem_size, unranked_memref *src_arg,
                unranked_memref *dst_arg) {
  int64_t rank = src_arg->rank;
  strided_memref *src = (strided_memref *)src_arg->descriptor;
  strided_memref *dst = (strided_memref *)dst_arg->descriptor;
  const int64_t *sizes = src->shape_and_strides;
  const int64_t *src_strides = src->shape_and_strides + rank;
  const int64_t *dst_strides = dst->shape_and_strides + rank;
  int64_t total = 1;
  for (int64_t d = 0; d < rank; ++d)
    total *= sizes[d];
  /* An empty memref may have no buffer at all (a null pointer, on which
   * even a zero offset is undefined): nothing to copy, nothing to touch. */
  if (total == 0)
    return;
  char *from = src->aligned + src->offset * elem_size;
  char *to = dst->aligned + dst->offset * elem_size;
  if (rank == 0) {
    memcpy(to, from, elem_size);
    return;
  }
  /* Both contiguous (row-major identity strides): one memcpy. */
  int contiguous = 1;
  for (int64_t d = rank - 1, expect = 1; d >= 0; expect *= sizes[d], --d)
    if (sizes[d] != 1 &&
        (src_strides[d] != expect || dst_strides[d] != expect))
      contiguous = 0;
  if (contiguous) {
    memcpy(to, from, total * elem_size);
    return;
  }
  /* Otherwise element by element, the index vector as an odometer (no
   * compiled step has memrefs of more than a few dims; more than 64 is a
   * bug, not a silent no-op). */
  int64_t index[64] = {0};
  if (rank > 64) {
    fprintf(stderr, "memrefCopy: rank %lld is over 64\n", (long long)rank);
    abort();
  }
  for (int64_t n = 0; n < total; ++n) {
    int64_t s = 0, t = 0;
    for (int64_t d = 0; d < rank; ++d) {
      s += index[d] * src_strides[d];
      t += index[d] * dst_strides[d];
    }
    memcpy(to + t * elem_size, from + s * elem_size, elem_size);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
}
