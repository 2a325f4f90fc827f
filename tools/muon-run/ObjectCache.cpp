//===- ObjectCache.cpp - Compiled steps kept across runs ------------------===//

#include "ObjectCache.h"

#include "muon/Execution/CompiledEntry.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
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
constexpr const char *kFormat = "muon-run-object-v5";

std::string cacheDirectory() {
  std::string dir;
  if (const char *env = std::getenv("MUON_RUN_CACHE"); env && *env) {
    dir = env;
    if (dir == "0" || dir == "off")
      return "";
  } else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = std::string(xdg) + "/muon-run";
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.cache/muon-run";
  } else {
    return "";
  }
  // Absolute, so that ranks started in another directory find it too.
  llvm::SmallString<256> path(dir);
  if (llvm::sys::fs::make_absolute(path))
    return "";
  return std::string(path);
}

} // namespace

std::string muon::run::objectKey(mlir::ModuleOp lowered, int optLevel) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << kFormat << '\n'
     << LLVM_VERSION_STRING << '\n'
     << optLevel << '\n'
     << llvm::sys::getHostCPUName();
  std::vector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      features.push_back(feature.first().str());
  std::sort(features.begin(), features.end());
  for (const std::string &f : features)
    os << ' ' << f;
  os << '\n';
  lowered.print(os);
  // 128 bits: two steps whose keys collide would load each other's code.
  llvm::XXH128_hash_t digest = llvm::xxh3_128bits(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(key.data()), key.size()));
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx",
                static_cast<unsigned long long>(digest.high64),
                static_cast<unsigned long long>(digest.low64));
  return hex;
}

std::string muon::run::cachedObjectPath(const std::string &key,
                                        std::string &note) {
  std::string dir = cacheDirectory();
  if (dir.empty())
    return "";
  std::error_code ec = llvm::sys::fs::create_directories(dir);
  if (!ec && !llvm::sys::fs::is_directory(dir))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) {
    note = "the object cache '" + dir + "' cannot be used (" + ec.message() +
           "); compiling without it (MUON_RUN_CACHE=off turns it off)";
    return "";
  }
  return dir + "/" + key + ".o";
}

bool muon::run::isReadableObject(const std::string &path,
                                 const std::string &key) {
  return muon::exec::CompiledEntry::isReadable(path, key);
}

bool muon::run::storeInCache(const std::string &objectFile,
                             const std::string &cachePath) {
  auto buffer = llvm::MemoryBuffer::getFile(objectFile);
  if (!buffer)
    return false;
  std::string staging = cachePath + ".tmp" + std::to_string(::getpid());
  int fd = -1;
  if (llvm::sys::fs::openFileForWrite(staging, fd))
    return false;
  bool written;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/false);
    out << (*buffer)->getBuffer();
    out.flush();
    written = !out.has_error();
    out.clear_error();
  }
  // On disk before it gets its name: a crash cannot leave a short entry.
  written = written && ::fsync(fd) == 0;
  written = ::close(fd) == 0 && written;
  if (!written || llvm::sys::fs::rename(staging, cachePath)) {
    llvm::sys::fs::remove(staging);
    return false;
  }
  return true;
}
