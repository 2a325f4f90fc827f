//===- Call.h - What every collective of the runtime shares ----*- C++ -*-===//
//
// A validated collective call (communicator, tensors, the checks every
// collective makes), its request while in flight, and the staging of pieces
// split along a dim. Internal to the runtime: Collectives.cpp (one rooted or
// symmetric collective per call) and Batch.cpp (many rooted ones in one
// exchange) build on it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CALL_H
#define MUON_RUNTIME_CALL_H

#include "Backend.h"
#include "CudaStep.h"
#include "Errors.h"
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
  std::vector<float> staging;
  /// An asynchronous call's copy of what it sends: the caller's buffer may
  /// be freed before the wait (results may not: they are written until it).
  std::vector<float> sent;
  std::string name, comm;
  double issued = 0; // trace clock at the call (when tracing)
  /// In a target=cuda step, the host copies of the device buffers the
  /// call works on; results are copied back to the device when the
  /// request is destroyed, after `finish`. (Initialised here, so that the
  /// aggregate initialisations that leave it out need not name it.)
  Mirrors mirrors{};
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

  /// In a target=cuda step: host copies of `in` and `out` (which `in` and
  /// `out` then point to), `out`'s copied back when the request completes.
  Mirrors mirrors;
  /// `counted`: one collective call of this rank (a batch item is not one:
  /// its batch is). `readsData`: false for a call that reads shapes only.
  Call(std::string name, int64_t handle, muon_rt_memref *i, muon_rt_memref *o,
       bool counted = true, bool readsData = true)
      : name(std::move(name)),
        comm(&communicator(handle, this->name.c_str())) {
    in = viewOf(i, this->name.c_str(), comm->name);
    out = viewOf(o, this->name.c_str(), comm->name);
    if (counted)
      counters().collectives++;
    if (readsData && deviceResident())
      stageThroughHost();
  }
  /// Points `in` and `out` at host mirrors of their device buffers: one
  /// mirror of their union when they overlap (an in-place call, or a
  /// piece that is part of the full tensor), written back whole.
  void stageThroughHost() {
    float *inDevice = in.data, *outDevice = out.data;
    auto inCount = static_cast<size_t>(in.numElements());
    auto outCount = static_cast<size_t>(out.numElements());
    if (inDevice && outDevice && inDevice < outDevice + outCount &&
        outDevice < inDevice + inCount) {
      float *low = std::min(inDevice, outDevice);
      float *high = std::max(inDevice + inCount, outDevice + outCount);
      mirrors.push_back(std::make_shared<HostMirror>(
          low, static_cast<size_t>(high - low), true, name));
      in.data = mirrors.back()->data() + (inDevice - low);
      out.data = mirrors.back()->data() + (outDevice - low);
      return;
    }
    if (outDevice) {
      mirrors.push_back(
          std::make_shared<HostMirror>(outDevice, outCount, true, name));
      out.data = mirrors.back()->data();
    }
    if (inDevice) {
      mirrors.push_back(
          std::make_shared<HostMirror>(inDevice, inCount, false, name));
      in.data = mirrors.back()->data();
    }
  }
  [[noreturn]] void fail(const std::string &cause) const {
    fatal(name, comm->name, cause);
  }
  Request request() const {
    return Request{nullptr,    {}, {}, {}, name, comm->name,
                   tracing() ? traceNow() : 0.0, mirrors};
  }
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

/// Copies one member's block (outer x extent x inner, contiguous at `block`)
/// to or from the tensor `full` of `total` along the split dim, where the
/// block starts at `offset` along that dim.
void copyBlock(float *full, float *block, int64_t total, int64_t offset,
               int64_t extent, int64_t outer, int64_t inner, bool toBlock);

/// Moves member blocks between "concatenated along dim" (full) and
/// "member after member" (staged) order. Block i is outer x extents[i] x
/// inner.
void restage(float *full, float *staged, const std::vector<int64_t> &extents,
             int64_t outer, int64_t inner, bool toStaged);

/// Counts of member blocks of outer x extents[i] x inner elements.
Counts blockCounts(const std::vector<int64_t> &extents, int64_t outer,
                   int64_t inner);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_CALL_H
