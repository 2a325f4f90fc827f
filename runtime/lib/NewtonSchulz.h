//===- NewtonSchulz.h - What every Newton-Schulz backend shares -*- C++ -*-===//
//
// The checks of a muon_rt_newton_schulz* call and its counting: the CPU
// (NewtonSchulz.cpp) and the GPU (CudaNewtonSchulz.cpp) entry points read
// their arguments and fill the zero-redundancy counters alike.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_NEWTONSCHULZ_H
#define MUON_RUNTIME_NEWTONSCHULZ_H

#include "Tensor.h"

#include "muon/Runtime/muon_runtime.h"

#include <cstdint>
#include <vector>

namespace muon {
namespace rt {

/// One call's operands: `batch` row-major m x n matrices at x.data, and
/// the buffer of the same shape the result goes to (possibly x itself).
struct NsCall {
  TensorView x, out;
  int64_t m = 0, n = 0, batch = 0;
  std::vector<double> coeffs;
};

/// Checks the operand (>= 2 dims), the result buffer (the operand's shape)
/// and the coefficients (3 or 3 * steps, steps >= 1), fatal on `op`
/// otherwise; counts the call.
NsCall readNsCall(muon_rt_memref *x, muon_rt_memref *out, int64_t steps,
                  muon_rt_f64_array *coeffs, const char *op);

/// Counts `count` m x n matrices orthogonalised in `steps` iterations and
/// their standard FLOPs (4 p^2 q + 2 p^3 per iteration).
void countNsMatrices(int64_t count, int64_t m, int64_t n, int64_t steps);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_NEWTONSCHULZ_H
