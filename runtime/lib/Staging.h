//===- Staging.h - The memory a collective packs and stages in -*- C++ -*-===//
//
// A collective's packing (pieces split along an inner dim), its scratch
// buffers and the division of an average work on the step's own memory:
// host memory for a CPU step; in a target=cuda step device memory, with
// every copy and scaling queued on the compute stream, where the kernels
// and Newton-Schulz run, so they take effect in program order without the
// host waiting. Collectives.cpp and Batch.cpp are written once over these.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_STAGING_H
#define MUON_RUNTIME_STAGING_H

#include <cstdint>
#include <memory>
#include <vector>

namespace muon {
namespace rt {

/// Copies `n` floats; the buffers must not overlap.
void copyFloats(float *to, const float *from, int64_t n);

/// x[i] *= s for i < n.
void scaleFloats(float *x, int64_t n, float s);

/// Copies one member's block (outer x extent x inner, contiguous at `block`)
/// to or from the tensor `full` of `total` along the split dim, where the
/// block starts at `offset` along that dim. Nothing to do where `block` is
/// that place in `full`.
void copyBlock(float *full, float *block, int64_t total, int64_t offset,
               int64_t extent, int64_t outer, int64_t inner, bool toBlock);

/// Moves member blocks between "concatenated along dim" (full) and
/// "member after member" (staged) order. Block i is outer x extents[i] x
/// inner.
void restage(float *full, float *staged, const std::vector<int64_t> &extents,
             int64_t outer, int64_t inner, bool toStaged);

/// Scratch floats a collective owns until it completes, in the step's
/// memory. Device scratch is freed in stream order: copies queued before
/// the free still read or write it.
class Staging {
public:
  Staging() = default;
  Staging(Staging &&other) noexcept;
  Staging &operator=(Staging &&other) noexcept;
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;
  ~Staging();

  /// Holds `n` floats, uninitialised (earlier contents dropped): every
  /// user writes its scratch (packs into it, or receives into it) before
  /// reading it, as device scratch needs anyway; zeroing host scratch was a
  /// pass over memory per call for nothing. Returns them.
  float *resize(int64_t n);
  float *data() { return device ? device : host.get(); }

private:
  void release();
  std::unique_ptr<float[]> host;
  float *device = nullptr;
};

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_STAGING_H
