//===- Tensor.h - A checked view of an MLIR memref descriptor -*- C++ -*-===//

#ifndef MUON_RUNTIME_TENSOR_H
#define MUON_RUNTIME_TENSOR_H

#include "muon/Runtime/muon_runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace muon {
namespace rt {

/// A contiguous row-major f32 tensor handed over by compiled code.
struct TensorView {
  float *data = nullptr;
  std::vector<int64_t> shape;

  int64_t numElements() const;
  /// Product of the dims before / after `dim`.
  int64_t outer(int64_t dim) const;
  int64_t inner(int64_t dim) const;
  std::string shapeStr() const;
};

/// Whether the memory of `a` and `b` (contiguous views) shares an element.
bool overlaps(const TensorView &a, const TensorView &b);

/// Reads an unranked f32 memref; aborts (naming `op`/`comm`) if it is not
/// contiguous row-major.
TensorView viewOf(const muon_rt_memref *m, const char *op,
                  const std::string &comm);
std::vector<int64_t> valuesOf(const muon_rt_i64_array *a);
std::string shapeStr(const std::vector<int64_t> &shape);

} // namespace rt
} // namespace muon

#endif // MUON_RUNTIME_TENSOR_H
