//===- Tensor.cpp - Memref descriptors to checked views -------------------===//

#include "Tensor.h"

#include "Errors.h"
#include "muon/Layout/Layout.h"

#include <algorithm>

using namespace muon::rt;

int64_t TensorView::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

int64_t TensorView::outer(int64_t dim) const {
  int64_t n = 1;
  for (int64_t i = 0; i < dim; ++i)
    n *= shape[i];
  return n;
}

int64_t TensorView::inner(int64_t dim) const {
  int64_t n = 1;
  for (size_t i = dim + 1; i < shape.size(); ++i)
    n *= shape[i];
  return n;
}

std::string TensorView::shapeStr() const { return muon::rt::shapeStr(shape); }

std::string muon::rt::shapeStr(const std::vector<int64_t> &shape) {
  return shape.empty() ? "scalar" : layout::shapeString(shape);
}

TensorView muon::rt::viewOf(const muon_rt_memref *m, const char *op,
                            const std::string &comm) {
  if (!m || !m->descriptor || m->rank < 0)
    fatal(op, comm, "null tensor descriptor");
  // { T *allocated; T *aligned; int64_t offset; sizes[rank]; strides[rank] }
  auto *words = static_cast<int64_t *>(m->descriptor);
  float *aligned = reinterpret_cast<float *>(words[1]);
  int64_t offset = words[2];
  TensorView v;
  v.data = aligned + offset;
  v.shape.assign(words + 3, words + 3 + m->rank);
  for (int64_t i = 0; i < m->rank; ++i)
    if (v.shape[i] < 0)
      fatal(op, comm,
            "tensor " + v.shapeStr() + " has a negative size (dim " +
                std::to_string(i) + ")");
  // The element count must fit in 64 bits (unless a size is 0: then the
  // tensor is empty, whatever the others).
  bool empty = std::find(v.shape.begin(), v.shape.end(), 0) != v.shape.end();
  int64_t expect = 1;
  for (int64_t i = m->rank - 1; i >= 0; --i) {
    int64_t stride = words[3 + m->rank + i];
    if (v.shape[i] > 1 && stride != expect)
      fatal(op, comm,
            "tensor " + v.shapeStr() + " is not contiguous row-major (dim " +
                std::to_string(i) + " has stride " + std::to_string(stride) +
                ", expected " + std::to_string(expect) + ")");
    if (__builtin_mul_overflow(expect, v.shape[i], &expect) && !empty)
      fatal(op, comm, "tensor " + v.shapeStr() + " has at least 2^63 elements");
  }
  return v;
}

std::vector<int64_t> muon::rt::valuesOf(const muon_rt_i64_array *a) {
  std::vector<int64_t> r;
  if (!a)
    return r;
  for (int64_t i = 0; i < a->size; ++i)
    r.push_back(a->aligned[a->offset + i * a->stride]);
  return r;
}

bool muon::rt::overlaps(const TensorView &a, const TensorView &b) {
  return a.data && b.data && a.data < b.data + b.numElements() &&
         b.data < a.data + a.numElements();
}
