//===- Npy.cpp - Write float32 arrays as .npy files -----------------------===//
//
// Format 1.0: magic, version, little-endian u16 header length, a Python
// dict literal padded with spaces to a multiple of 64 bytes ending in '\n',
// then the raw little-endian data.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

std::string muon::run::writeNpy(const std::string &path,
                                const std::vector<float> &data,
                                const std::vector<int64_t> &shape) {
  // A Python tuple: "(3, 4)", "(5,)", "()".
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    dims += ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       dims + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return "cannot write " + path + ": " + std::strerror(errno);
  const char magic[] = "\x93NUMPY\x01\x00";
  std::fwrite(magic, 1, 8, f);
  uint16_t len = static_cast<uint16_t>(header.size());
  unsigned char le[2] = {static_cast<unsigned char>(len & 0xff),
                         static_cast<unsigned char>(len >> 8)};
  std::fwrite(le, 1, 2, f);
  std::fwrite(header.data(), 1, header.size(), f);
  std::fwrite(data.data(), sizeof(float), data.size(), f);
  bool ok = std::fclose(f) == 0;
  return ok ? "" : "cannot write " + path;
}
