//===- CompiledEntry.cpp - The JIT-compiled entry point of a step ---------===//

#include "muon/Execution/CompiledEntry.h"

#include "mlir/ExecutionEngine/OptUtils.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace muon::exec;

namespace {
/// A ranked memref descriptor { ptr, ptr, offset, sizes[], strides[] } for
/// a float buffer, laid out as int64 words.
std::vector<int64_t> descriptorOf(float *data,
                                  const std::vector<int64_t> &shape) {
  std::vector<int64_t> d{reinterpret_cast<int64_t>(data),
                         reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}
} // namespace

std::string muon::exec::cRunnerUtilsPath() {
  // MUON_C_RUNNER_UTILS overrides the build machine's path (a relocated
  // muon-run, see scripts/make-gpu-bundle.sh).
  const char *utils = std::getenv("MUON_C_RUNNER_UTILS");
  return utils && *utils ? utils : MUON_C_RUNNER_UTILS;
}

std::unique_ptr<CompiledEntry>
CompiledEntry::create(ModuleOp module, const std::string &entry, int optLevel,
                      std::string &error, const std::string &objectFile,
                      const std::vector<std::string> &extraLibraries) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // ExecutionEngineOptions::transformer is a function_ref: the function it
  // refers to must outlive create() (a temporary here was a
  // stack-use-after-scope, found by the sanitizer build).
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(optLevel, 0, nullptr);
  ExecutionEngineOptions eo;
  eo.transformer = transformer;
  std::string utils = cRunnerUtilsPath();
  std::vector<StringRef> libs = {utils};
  // Libraries whose symbols the code calls but that this process may hold
  // privately (a Python extension's dependencies, e.g. the runtime).
  for (const std::string &lib : extraLibraries)
    libs.push_back(lib);
  eo.sharedLibPaths = libs;
  eo.enableObjectDump = !objectFile.empty();
  auto engine = ExecutionEngine::create(module, eo);
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  std::string symbol = "_mlir_ciface_" + entry;
  // The JIT materialises lazily: look the entry up now so that code
  // generation counts as compile time, not as the first step.
  auto sym = (*engine)->lookupPacked(symbol);
  if (!sym) {
    error = "entry @" + entry + ": " + llvm::toString(sym.takeError());
    return nullptr;
  }
  if (!objectFile.empty()) {
    // dumpToObjectFile reports a failure only on stderr: start from an
    // empty file and accept only a non-empty one.
    std::remove(objectFile.c_str());
    (*engine)->dumpToObjectFile(objectFile);
    uint64_t size = 0;
    if (llvm::sys::fs::file_size(objectFile, size) || size == 0) {
      error = "could not write the compiled step to " + objectFile;
      return nullptr;
    }
  }
  std::unique_ptr<CompiledEntry> compiled(new CompiledEntry());
  compiled->packed = *sym;
  compiled->engine = std::move(*engine);
  return compiled;
}

std::unique_ptr<CompiledEntry>
CompiledEntry::load(const std::string &objectFile, const std::string &entry,
                    std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto fail = [&](const std::string &what, llvm::Error err) {
    error = "loading the compiled step " + objectFile + ": " + what + ": " +
            llvm::toString(std::move(err));
    return nullptr;
  };
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return fail("JIT", jit.takeError());
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  // The runtime (linked into this process) and memrefCopy.
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return fail("this process's symbols", process.takeError());
  main.addGenerator(std::move(*process));
  std::string utilsPath = cRunnerUtilsPath();
  auto utils =
      llvm::orc::DynamicLibrarySearchGenerator::Load(utilsPath.c_str(), prefix);
  if (!utils)
    return fail(utilsPath, utils.takeError());
  main.addGenerator(std::move(*utils));
  auto buffer = llvm::MemoryBuffer::getFile(objectFile);
  if (!buffer)
    return fail("read", llvm::errorCodeToError(buffer.getError()));
  if (llvm::Error err = (*jit)->addObjectFile(std::move(*buffer)))
    return fail("add", std::move(err));
  // ExecutionEngine's packed wrapper of the C interface: "_mlir_" + name.
  auto sym = (*jit)->lookup("_mlir__mlir_ciface_" + entry);
  if (!sym)
    return fail("entry @" + entry, sym.takeError());
  std::unique_ptr<CompiledEntry> compiled(new CompiledEntry());
  compiled->packed = sym->toPtr<void (*)(void **)>();
  compiled->jit = std::move(*jit);
  return compiled;
}

std::string
CompiledEntry::invoke(std::vector<std::vector<float>> &args,
                      const std::vector<std::vector<int64_t>> &argShapes,
                      std::vector<std::vector<float>> &results,
                      const std::vector<std::vector<int64_t>> &resultShapes) {
  std::vector<BufferView> buffers;
  for (size_t a = 0; a < args.size(); ++a)
    buffers.push_back({args[a].data(), argShapes[a]});
  for (size_t r = 0; r < results.size(); ++r)
    buffers.push_back({results[r].data(), resultShapes[r]});
  invoke(buffers);
  return "";
}

void CompiledEntry::invoke(const std::vector<BufferView> &buffers) {
  std::vector<std::vector<int64_t>> descs;
  for (const BufferView &b : buffers)
    descs.push_back(descriptorOf(b.data, b.shape));
  std::vector<void *> ptrs;
  for (auto &d : descs)
    ptrs.push_back(d.data());
  std::vector<void *> argv;
  for (void *&p : ptrs)
    argv.push_back(&p);
  packed(argv.data());
}

const void *CompiledEntry::lookupSymbol(const std::string &name) {
  if (engine) {
    auto sym = engine->lookup(name);
    if (!sym) {
      llvm::consumeError(sym.takeError());
      return nullptr;
    }
    return *sym;
  }
  auto sym = jit->lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<const void *>();
}
