//===- Staging.cpp - The memory a collective packs and stages in ----------===//

#include "Staging.h"
#include "CudaLibrary.h"
#include "CudaStep.h"

#include <cstring>
#include <string>
#include <utility>

using namespace muon::rt;

void muon::rt::copyFloats(float *to, const float *from, int64_t n) {
  if (n <= 0 || to == from)
    return;
  size_t bytes = sizeof(float) * static_cast<size_t>(n);
  if (!deviceResident()) {
    std::memcpy(to, from, bytes);
    return;
  }
  if (cudaLibrary("staging").copy(to, from, bytes, DeviceToDevice))
    cudaFailed("staging", "a copy of " + std::to_string(n) + " floats");
}

void muon::rt::scaleFloats(float *x, int64_t n, float s) {
  if (n <= 0)
    return;
  if (!deviceResident()) {
    for (int64_t i = 0; i < n; ++i)
      x[i] *= s;
    return;
  }
  if (cudaLibrary("average").scale(x, n, s))
    cudaFailed("average", "scaling " + std::to_string(n) + " floats");
}

void muon::rt::copyBlock(float *full, float *block, int64_t total,
                         int64_t offset, int64_t extent, int64_t outer,
                         int64_t inner, bool toBlock) {
  size_t row = sizeof(float) * extent * inner;
  if (!row || outer <= 0)
    return;
  // Row o of the block is outer index o of the piece: `row` bytes, at a
  // pitch of the whole tensor's `total` along the dim in `full`.
  float *f = full + offset * inner;
  if (f == block && (outer == 1 || extent == total))
    return; // the block is where the full tensor holds it
  size_t fullPitch = sizeof(float) * total * inner;
  if (deviceResident()) {
    int failed = toBlock ? cudaLibrary("staging").copyRows(
                               block, row, f, fullPitch, row, outer)
                         : cudaLibrary("staging").copyRows(f, fullPitch, block,
                                                           row, row, outer);
    if (failed)
      cudaFailed("staging",
                 "packing a block of " + std::to_string(outer) + " rows");
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    float *fo = f + o * total * inner;
    float *b = block + o * extent * inner;
    if (toBlock)
      std::memcpy(b, fo, row);
    else
      std::memcpy(fo, b, row);
  }
}

void muon::rt::restage(float *full, float *staged,
                       const std::vector<int64_t> &extents, int64_t outer,
                       int64_t inner, bool toStaged) {
  int64_t total = 0;
  for (int64_t e : extents)
    total += e;
  int64_t stagedOff = 0, dimOff = 0;
  for (int64_t e : extents) {
    copyBlock(full, staged + stagedOff, total, dimOff, e, outer, inner,
              toStaged);
    stagedOff += outer * e * inner;
    dimOff += e;
  }
}

Staging::Staging(Staging &&other) noexcept
    : host(std::move(other.host)),
      device(std::exchange(other.device, nullptr)) {}

Staging &Staging::operator=(Staging &&other) noexcept {
  if (this != &other) {
    release();
    host = std::move(other.host);
    device = std::exchange(other.device, nullptr);
  }
  return *this;
}

Staging::~Staging() { release(); }

void Staging::release() {
  if (device && cudaLibrary("staging").free(device))
    cudaFailed("staging", "freeing scratch memory");
  device = nullptr;
}

float *Staging::resize(int64_t n) {
  release();
  if (!deviceResident()) {
    // new float[] default-initialises: no pass over the memory.
    host.reset(new float[static_cast<size_t>(n > 0 ? n : 1)]);
    return host.get();
  }
  host.reset();
  void *p = nullptr;
  if (cudaLibrary("staging").alloc(&p, sizeof(float) * static_cast<size_t>(n)))
    cudaFailed("staging", "scratch of " + std::to_string(n) + " floats");
  device = static_cast<float *>(p);
  return device;
}
