//===- Npy.h - Write float32 arrays as .npy files -------------*- C++ -*-===//

#ifndef MUON_TOOLS_MUONRUN_NPY_H
#define MUON_TOOLS_MUONRUN_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace muon {
namespace run {

/// Writes `data` (row-major, `shape`) as NumPy format 1.0, dtype '<f4'.
/// Returns "" or an error message.
std::string writeNpy(const std::string &path, const std::vector<float> &data,
                     const std::vector<int64_t> &shape);

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_NPY_H
