//===- Call.h - What every collective of the runtime shares ----*- C++ -*-===//
//
// A validated collective call (communicator, tensors, the checks every
// collective makes) and its request while in flight; the copies and
// scratch memory they share are in Staging.h. Internal to the runtime:
// Collectives.cpp (one rooted or symmetric collective per call) and
// Batch.cpp (many rooted ones in one exchange) build on it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CALL_H
#define MUON_RUNTIME_CALL_H

#include "Backend.h"
#include "CudaStep.h"
#include "Errors.h"
#include "Staging.h"
#include "State.h"
#include "Tensor.h"
#include "Trace.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace muon {
namespace rt {

/// A collective in flight.
struct Request {
  Backend::Op op;
  std::function<void()> finish; // Unpack / average after completion.
  Staging staging;
  /// A copy of what the call sends where the operand itself cannot be
  /// handed over: an asynchronous call's (the caller's buffer may be freed
  /// before the wait; results may not: they are written until it), or in a
  /// target=cuda step an operand that overlaps the result.
  Staging sent;
  std::string name, comm;
  double issued = 0; // trace clock at the call (when tracing)
};

/// Completes `r` synchronously (async == 0, returns 0) or files it as a
/// request for muon_rt_wait (returns its id).
int64_t submit(Request r, int64_t async);

/// Lets every request in flight progress (MPI moves a non-blocking
/// collective's data only inside MPI calls): called between the GEMMs of
/// Newton-Schulz, so a prefetched exchange advances while this rank
/// computes. Completing a request still takes muon_rt_wait.
void progressRequests();

/// Everything one collective call needs, validated.
struct Call {
  std::string name;
  const Communicator *comm;
  TensorView in, out;

  /// `counted`: one collective call of this rank (a batch item is not one:
  /// its batch is).
  Call(std::string name, int64_t handle, muon_rt_memref *i, muon_rt_memref *o,
       bool counted = true)
      : name(std::move(name)),
        comm(&communicator(handle, this->name.c_str())) {
    in = viewOf(i, this->name.c_str(), comm->name);
    out = viewOf(o, this->name.c_str(), comm->name);
    if (counted)
      counters().collectives++;
  }
  [[noreturn]] void fail(const std::string &cause) const {
    fatal(name, comm->name, cause);
  }
  /// The request of a single collective, made before it reads `in`. In a
  /// target=cuda step an operand that overlaps the result other than
  /// exactly (a piece inside the full tensor) is first copied apart: NCCL
  /// reads device buffers while it writes them.
  Request request() {
    Request r{nullptr, {}, {}, {}, name, comm->name,
              tracing() ? traceNow() : 0.0};
    int64_t nIn = in.numElements(), nOut = out.numElements();
    if (deviceResident() && overlaps(in, out) &&
        !(in.data == out.data && nIn == nOut)) {
      float *copy = r.sent.resize(nIn);
      copyFloats(copy, in.data, nIn);
      in.data = copy;
      operandCopied = true;
    }
    return r;
  }
  /// Whether request() gave the operand a copy of its own.
  bool operandCopied = false;
  void check(Backend::Op &op, const std::string &error) const {
    if (!op)
      fail(error);
  }
  void checkRoot(int64_t root) const {
    if (root < 0 || root >= comm->size)
      fail("root " + std::to_string(root) + " outside the group of " +
           std::to_string(comm->size));
  }
  void checkDim(int64_t dim, const TensorView &t) const {
    if (dim < 0 || dim >= static_cast<int64_t>(t.shape.size()))
      fail("dim " + std::to_string(dim) + " out of range for tensor " +
           t.shapeStr());
  }
  std::vector<int64_t> extentsOf(muon_rt_i64_array *e) const {
    std::vector<int64_t> v = valuesOf(e);
    if (static_cast<int64_t>(v.size()) != comm->size)
      fail(std::to_string(v.size()) + " extents for a group of " +
           std::to_string(comm->size));
    return v;
  }
  /// On a non-root rank only the piece matters (the full tensor is a
  /// placeholder that is neither read nor written).
  void checkPiece(const TensorView &piece, int64_t dim,
                  const std::vector<int64_t> &extents,
                  const char *pieceName) const {
    checkDim(dim, piece);
    if (piece.shape[dim] != extents[comm->rank])
      fail(std::string(pieceName) + " " + piece.shapeStr() + " should have " +
           std::to_string(extents[comm->rank]) + " along dim " +
           std::to_string(dim));
  }
  /// `piece` has extent `e` along dim, `full` has sum(extents); other dims match.
  void checkPieces(const TensorView &piece, const TensorView &full, int64_t dim,
                   const std::vector<int64_t> &extents, const char *pieceName,
                   const char *fullName) const {
    checkDim(dim, piece);
    checkDim(dim, full);
    int64_t total = 0;
    for (int64_t e : extents)
      total += e;
    bool ok = piece.shape.size() == full.shape.size();
    for (size_t d = 0; ok && d < piece.shape.size(); ++d)
      ok = static_cast<int64_t>(d) == dim || piece.shape[d] == full.shape[d];
    if (!ok || piece.shape[dim] != extents[comm->rank] ||
        full.shape[dim] != total)
      fail(std::string(pieceName) + " " + piece.shapeStr() + " and " +
           fullName + " " + full.shapeStr() + " do not match pieces of " +
           std::to_string(extents[comm->rank]) + " of " +
           std::to_string(total) + " along dim " + std::to_string(dim));
  }
};

/// Counts of member blocks of outer x extents[i] x inner elements.
Counts blockCounts(const std::vector<int64_t> &extents, int64_t outer,
                   int64_t inner);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_CALL_H
