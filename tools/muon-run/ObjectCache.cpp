//===- ObjectCache.cpp - Compiled steps kept across runs ------------------===//

#include "ObjectCache.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

using namespace muon::run;

namespace {

/// Bump when what an object depends on changes without changing the
/// lowered module's text (the way muon-run compiles or calls it).
constexpr const char *kFormat = "muon-run-object-v1";

std::string cacheDirectory() {
  if (const char *dir = std::getenv("MUON_RUN_CACHE"); dir && *dir) {
    std::string d = dir;
    return d == "0" || d == "off" ? "" : d;
  }
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/muon-run";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/muon-run";
  return "";
}

} // namespace

std::string muon::run::cachedObjectPath(mlir::ModuleOp lowered,
                                        int optLevel) {
  std::string dir = cacheDirectory();
  if (dir.empty() || llvm::sys::fs::create_directories(dir))
    return "";
  std::string key;
  llvm::raw_string_ostream os(key);
  os << kFormat << '\n' << optLevel << '\n' << llvm::sys::getHostCPUName();
  std::vector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      features.push_back(feature.first().str());
  std::sort(features.begin(), features.end());
  for (const std::string &f : features)
    os << ' ' << f;
  os << '\n';
  lowered.print(os);
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.o",
                static_cast<unsigned long long>(
                    llvm::xxh3_64bits(llvm::StringRef(key))));
  return dir + "/" + name;
}

bool muon::run::storeInCache(const std::string &objectFile,
                             const std::string &cachePath) {
  // A private name in the cache directory, then one rename.
  std::string staging = cachePath + ".tmp" + std::to_string(::getpid());
  if (llvm::sys::fs::copy_file(objectFile, staging))
    return false;
  if (llvm::sys::fs::rename(staging, cachePath)) {
    llvm::sys::fs::remove(staging);
    return false;
  }
  return true;
}
