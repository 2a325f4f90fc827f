//===- GpuLibrary.cpp - Loading the runtime's GPU libraries ---------------===//

#include "GpuLibrary.h"

#include <cstdlib>
#include <vector>

using namespace muon::rt;

namespace {
/// `file` in the directory of this library.
std::string besideThisLibrary(const char *file) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&besideThisLibrary), &info) ||
      !info.dli_fname)
    return "";
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash + 1) + file;
}
} // namespace

void *muon::rt::openGpuLibrary(const char *file, const char *envVar,
                               std::string &tried) {
  std::vector<std::string> candidates = {besideThisLibrary(file), file};
  if (const char *env = std::getenv(envVar); env && *env)
    candidates = {env};
  for (const std::string &path : candidates) {
    if (path.empty())
      continue;
    if (void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
      return handle;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
  }
  return nullptr;
}

int muon::rt::localRank() {
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                          "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                          "LOCAL_RANK"})
    if (const char *v = std::getenv(var))
      return std::atoi(v);
  return 0;
}
