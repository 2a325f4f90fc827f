//===- ns_check.cpp - GPU Newton-Schulz against a float64 host reference --===//
//
// For each case (shape, batch, coefficients, tiles, precision): random
// matrices, muon_cuda_ns on the device, and the same iteration in float64
// on the host written out loop by loop (shares no code with the library).
//   fp32: every element within atol = rtol = 1e-5 of the reference;
//   bf16: relative Frobenius error ||out - ref|| / ||ref|| <= 3e-2 (bf16
//         operands carry 2^-9 relative rounding per product).
// The host entry (graph replay for whole products, and plain launches) is
// bitwise equal to the device entry. Also: two runs give bitwise equal
// results, and bad arguments return an
// error with a message instead of running. Exit 0 pass, 1 fail, 77 when the
// machine has no CUDA device (the test is skipped, with a message).
//
//===----------------------------------------------------------------------===//

#include "muon/Runtime/muon_runtime_cuda.h"

#include "NewtonSchulzReference.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

int failures = 0;

void fail(const std::string &what) {
  std::printf("FAIL: %s\n", what.c_str());
  ++failures;
}

/// A case's tileSquare when both products take `tile`.
constexpr int64_t kSameTile = INT64_MIN;

struct Case {
  const char *name;
  int64_t batch, m, n, steps;
  std::vector<double> coeffs;
  int64_t tile;                   // A = X X^T (and A A unless set below)
  int64_t tileSquare = kSameTile; // A A
};

const std::vector<double> kQuintic = {3.4445, -4.7750, 2.0315};

bool runOnDevice(muon_cuda_ns_context *ctx, std::vector<float> &host,
                 const Case &c, int precision, std::string &err) {
  float *dev = nullptr;
  size_t bytes = host.size() * sizeof(float);
  if (cudaMalloc(&dev, bytes) != cudaSuccess) {
    err = "cudaMalloc";
    return false;
  }
  cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice);
  int rc =
      c.tileSquare == kSameTile
          ? muon_cuda_ns(ctx, dev, c.batch, c.m, c.n, c.steps, c.coeffs.data(),
                         (int64_t)c.coeffs.size(), 1e-7, precision, c.tile)
          : muon_cuda_ns_tiles(ctx, dev, c.batch, c.m, c.n, c.steps,
                               c.coeffs.data(), (int64_t)c.coeffs.size(), 1e-7,
                               precision, c.tile, c.tileSquare);
  cudaError_t sync = cudaDeviceSynchronize();
  cudaMemcpy(host.data(), dev, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (rc != 0) {
    err = muon_cuda_ns_error(ctx);
    return false;
  }
  if (sync != cudaSuccess) {
    err = cudaGetErrorString(sync);
    return false;
  }
  return true;
}

void checkCase(muon_cuda_ns_context *ctx, const Case &c, int precision,
               std::mt19937 &rng) {
  std::string label =
      std::string(c.name) + (precision == MUON_CUDA_FP32 ? " fp32" : " bf16");
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> input(c.batch * c.m * c.n);
  for (float &v : input)
    v = dist(rng);
  std::vector<float> out = input, again = input;
  std::string err;
  if (!runOnDevice(ctx, out, c, precision, err) ||
      !runOnDevice(ctx, again, c, precision, err)) {
    fail(label + ": " + err);
    return;
  }
  if (std::memcmp(out.data(), again.data(), out.size() * sizeof(float)))
    fail(label + ": two runs differ");
  double worst = 0, diff2 = 0, ref2 = 0;
  int64_t elems = c.m * c.n;
  for (int64_t b = 0; b < c.batch; ++b) {
    std::vector<double> ref = muon::test::newtonSchulzReference(
        &input[b * elems], c.m, c.n, c.steps, c.coeffs, 1e-7);
    for (int64_t i = 0; i < elems; ++i) {
      double o = out[b * elems + i], r = ref[i];
      if (!std::isfinite(o)) {
        fail(label + ": non-finite output");
        return;
      }
      double excess = std::fabs(o - r) - (1e-5 + 1e-5 * std::fabs(r));
      worst = std::max(worst, excess);
      diff2 += (o - r) * (o - r);
      ref2 += r * r;
    }
  }
  double rel = std::sqrt(diff2 / ref2);
  bool ok = precision == MUON_CUDA_FP32 ? worst <= 0 : rel <= 3e-2;
  std::printf("%-4s %-44s rel_fro=%.2e %s\n", ok ? "ok" : "FAIL", label.c_str(),
              rel,
              precision == MUON_CUDA_FP32
                  ? (worst <= 0 ? "(all within 1e-5)" : "(beyond 1e-5)")
                  : "");
  if (!ok)
    ++failures;
}

/// The tiles the library picks for a large matrix (where a float64 host
/// run would take minutes) against its whole products, both exact fp32 and
/// the whole products checked against float64 above: every element within
/// 1e-5 (relative and absolute).
void checkTilesAgainstWhole(muon_cuda_ns_context *ctx, int64_t m, int64_t n,
                            std::mt19937 &rng) {
  Case tiled{"tiles", 1, m, n, 5, kQuintic, MUON_CUDA_TILE_AUTO};
  Case whole{"whole", 1, m, n, 5, kQuintic, MUON_CUDA_TILE_FULL};
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> a(m * n);
  for (float &v : a)
    v = dist(rng);
  std::vector<float> b = a;
  std::string err;
  std::string label =
      std::to_string(m) + "x" + std::to_string(n) + " auto tiles (" +
      std::to_string(muon_cuda_ns_auto_tile(std::min(m, n), MUON_CUDA_FP32)) +
      ") vs whole, fp32";
  if (!runOnDevice(ctx, a, tiled, MUON_CUDA_FP32, err) ||
      !runOnDevice(ctx, b, whole, MUON_CUDA_FP32, err)) {
    fail(label + ": " + err);
    return;
  }
  double worst = 0;
  for (int64_t i = 0; i < m * n; ++i)
    worst = std::max(worst, std::fabs((double)a[i] - b[i]) -
                                (1e-5 + 1e-5 * std::fabs((double)b[i])));
  bool ok = worst <= 0;
  std::printf("%-4s %-44s %s\n", ok ? "ok" : "FAIL", label.c_str(),
              ok ? "(all within 1e-5)" : "(beyond 1e-5)");
  if (!ok)
    ++failures;
}

/// The host entry (muon_cuda_ns_host: whole products replayed as a captured
/// graph, MUON_RT_CUDA_GRAPHS=0 plain launches) against the device entry:
/// bitwise equal, on the first call (capture), on replays with new data,
/// after a larger call moved the buffers (a new capture), and for tiles
/// (never captured).
void checkHostEntry(muon_cuda_ns_context *graphs, muon_cuda_ns_context *plain,
                    std::mt19937 &rng) {
  struct Host {
    const char *name;
    int64_t batch, m, n, tile;
    int precision;
  };
  const Host calls[] = {
      {"256x688 bf16, capture", 1, 256, 688, MUON_CUDA_TILE_AUTO,
       MUON_CUDA_BF16},
      {"256x688 bf16, replay", 1, 256, 688, MUON_CUDA_TILE_AUTO,
       MUON_CUDA_BF16},
      {"256x688 fp32, replay of another key", 1, 256, 688, MUON_CUDA_TILE_AUTO,
       MUON_CUDA_FP32},
      {"4 x 688x256 fp32, buffers grown", 4, 688, 256, MUON_CUDA_TILE_AUTO,
       MUON_CUDA_FP32},
      {"256x688 bf16, after the growth", 1, 256, 688, MUON_CUDA_TILE_AUTO,
       MUON_CUDA_BF16},
      {"2048x2048 bf16, tiles (plain launches)", 1, 2048, 2048,
       MUON_CUDA_TILE_AUTO, MUON_CUDA_BF16},
  };
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Host &h : calls) {
    Case c{h.name, h.batch, h.m, h.n, 5, kQuintic, h.tile};
    std::vector<float> g(h.batch * h.m * h.n);
    for (float &v : g)
      v = normal(rng);
    std::vector<float> viaDevice = g, viaGraph = g, viaPlain = g;
    std::string err;
    if (!runOnDevice(graphs, viaDevice, c, h.precision, err)) {
      fail(std::string("host entry ") + h.name + ": device entry: " + err);
      continue;
    }
    for (auto [ctx, out] :
         {std::pair{graphs, &viaGraph}, std::pair{plain, &viaPlain}})
      if (muon_cuda_ns_host(ctx, out->data(), h.batch, h.m, h.n, 5,
                            kQuintic.data(), 3, 1e-7, h.precision, h.tile) != 0)
        err = muon_cuda_ns_error(ctx);
    if (!err.empty()) {
      fail(std::string("host entry ") + h.name + ": " + err);
      continue;
    }
    size_t bytes = g.size() * sizeof(float);
    bool same = std::memcmp(viaDevice.data(), viaGraph.data(), bytes) == 0 &&
                std::memcmp(viaDevice.data(), viaPlain.data(), bytes) == 0;
    if (!same)
      fail(std::string("host entry ") + h.name +
           ": graph, plain and device results differ");
    else
      std::printf("ok   host entry %s (graph = plain = device, bitwise)\n",
                  h.name);
  }
}

void expectError(muon_cuda_ns_context *ctx, const char *what, float *x,
                 int64_t batch, int64_t m, int64_t n, int64_t steps,
                 int64_t ncoeffs, int64_t tile, const char *needle) {
  std::vector<double> coeffs(ncoeffs > 0 ? ncoeffs : 1, 1.0);
  int rc = muon_cuda_ns(ctx, x, batch, m, n, steps, coeffs.data(), ncoeffs,
                        1e-7, MUON_CUDA_FP32, tile);
  std::string msg = muon_cuda_ns_error(ctx);
  if (rc == 0 || msg.find(needle) == std::string::npos)
    fail(std::string(what) + ": expected an error containing '" + needle +
         "', got rc " + std::to_string(rc) + " '" + msg + "'");
  else
    std::printf("ok   error: %s -> %s\n", what, msg.c_str());
}

} // namespace

int main() {
  if (muon_cuda_device_count() == 0) {
    std::printf("SKIPPED: no CUDA device on this machine\n");
    return 77;
  }
  muon_cuda_ns_context *ctx = nullptr;
  if (muon_cuda_ns_create(&ctx, nullptr) != 0) {
    std::printf("FAIL: create: %s\n", muon_cuda_ns_error(nullptr));
    return 1;
  }
  std::vector<double> perStep;
  for (int i = 0; i < 3; ++i)
    perStep.insert(perStep.end(), {3.0 - 0.2 * i, -3.2 + 0.3 * i, 1.2});
  std::vector<Case> cases = {
      {"1x1", 1, 1, 1, 5, kQuintic, MUON_CUDA_TILE_AUTO},
      {"1x7 row", 1, 1, 7, 5, kQuintic, MUON_CUDA_TILE_AUTO},
      {"96x200 wide, whole products", 1, 96, 200, 5, kQuintic,
       MUON_CUDA_TILE_FULL},
      {"300x128 tall, tiles 32", 1, 300, 128, 5, kQuintic, 32},
      {"256x256 square, tiles 64", 1, 256, 256, 5, kQuintic, 64},
      {"3 x 64x160 batch, tiles 32", 3, 64, 160, 5, kQuintic, 32},
      {"2 x 200x96 batch tall, whole", 2, 200, 96, 5, kQuintic,
       MUON_CUDA_TILE_FULL},
      {"75x130 odd p, whole", 1, 75, 130, 5, kQuintic, MUON_CUDA_TILE_FULL},
      {"320x352 tiles 32 across the completion's 64-blocks", 1, 320, 352, 5,
       kQuintic, 32},
      // p not a multiple of 64 (blocks past p that mirror), and a tile
      // that is not one either (tile boundaries inside a block).
      {"96x200 tiles 32", 1, 96, 200, 5, kQuintic, 32},
      {"480x512 tiles 96", 1, 480, 512, 5, kQuintic, 96},
      {"2 x 224x160 tall, tiles 32 / whole", 2, 224, 160, 5, kQuintic, 32,
       MUON_CUDA_TILE_FULL},
      {"128x384 per-step coefficients, tiles 32", 1, 128, 384, 3, perStep, 32},
      {"512x1024 tiles 128", 1, 512, 1024, 5, kQuintic, 128},
      {"64x64 zero steps", 1, 64, 64, 0, kQuintic, MUON_CUDA_TILE_AUTO},
      // A tile for each product: finer, coarser or whole against the other
      // (the copy of A that the second product reads must be whole).
      {"384x512 tiles 32 / 128", 1, 384, 512, 5, kQuintic, 32, 128},
      {"384x512 tiles 128 / 32", 1, 384, 512, 5, kQuintic, 128, 32},
      {"2 x 256x640 tiles 64 / whole", 2, 256, 640, 5, kQuintic, 64,
       MUON_CUDA_TILE_FULL},
      {"640x256 tall, whole / tiles 64", 1, 640, 256, 5, kQuintic,
       MUON_CUDA_TILE_FULL, 64},
  };
  std::mt19937 rng(20261123);
  for (int precision : {MUON_CUDA_FP32, MUON_CUDA_BF16})
    for (const Case &c : cases)
      checkCase(ctx, c, precision, rng);

  {
    // A context made with MUON_RT_CUDA_GRAPHS=0 launches without graphs.
    setenv("MUON_RT_CUDA_GRAPHS", "0", 1);
    muon_cuda_ns_context *plain = nullptr;
    if (muon_cuda_ns_create(&plain, nullptr) != 0)
      fail(std::string("create (no graphs): ") + muon_cuda_ns_error(nullptr));
    unsetenv("MUON_RT_CUDA_GRAPHS");
    if (plain) {
      checkHostEntry(ctx, plain, rng);
      muon_cuda_ns_destroy(plain);
    }
  }

  checkTilesAgainstWhole(ctx, 2048, 4096, rng);
  checkTilesAgainstWhole(ctx, 8192, 4096, rng);

  float *dev = nullptr;
  cudaMalloc(&dev, 256 * 256 * sizeof(float));
  expectError(ctx, "tile not dividing p", dev, 1, 256, 256, 5, 3, 48,
              "a tile must divide p");
  {
    // muon_cuda_ns_tiles checks each product's tile and names it.
    std::vector<double> coeffs(3, 1.0);
    int rc = muon_cuda_ns_tiles(ctx, dev, 1, 256, 256, 5, coeffs.data(), 3,
                                1e-7, MUON_CUDA_FP32, 64, 48);
    std::string msg = muon_cuda_ns_error(ctx);
    if (rc == 0 || msg.find("tile 48 (A A) for p = 256") == std::string::npos)
      fail("a bad tile for A A: expected an error naming it, got rc " +
           std::to_string(rc) + " '" + msg + "'");
    else
      std::printf("ok   error: bad tile for A A -> %s\n", msg.c_str());
  }
  expectError(ctx, "coefficient count", dev, 1, 256, 256, 5, 4,
              MUON_CUDA_TILE_AUTO, "3 or 3 * steps");
  expectError(ctx, "null matrix", nullptr, 1, 256, 256, 5, 3,
              MUON_CUDA_TILE_AUTO, "x is null");
  expectError(ctx, "zero batch", dev, 0, 256, 256, 5, 3, MUON_CUDA_TILE_AUTO,
              "bad shape");
  expectError(ctx, "tall beyond the kernels' grid", dev, 1, 4194304, 64, 5, 3,
              MUON_CUDA_TILE_AUTO, "the GPU kernels take dimensions up to");
  cudaFree(dev);
  muon_cuda_ns_destroy(ctx);
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
