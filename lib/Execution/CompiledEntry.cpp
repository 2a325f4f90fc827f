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

std::vector<std::string> muon::exec::extraLibrariesFromEnvironment() {
  const char *utils = std::getenv("MUON_C_RUNNER_UTILS");
  if (utils && *utils)
    return {utils};
  return {};
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
  // Libraries whose symbols the code calls but that this process may hold
  // privately (a Python extension's dependencies, e.g. the runtime). They
  // are loaded globally: never a library that drags libLLVM or libMLIR
  // into the global scope (other LLVM users in the process would bind to
  // them).
  std::vector<std::string> all = extraLibrariesFromEnvironment();
  all.insert(all.end(), extraLibraries.begin(), extraLibraries.end());
  std::vector<StringRef> libs(all.begin(), all.end());
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
  // The runtime (linked into this process, memrefCopy included).
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return fail("this process's symbols", process.takeError());
  main.addGenerator(std::move(*process));
  for (const std::string &path : extraLibrariesFromEnvironment()) {
    auto lib =
        llvm::orc::DynamicLibrarySearchGenerator::Load(path.c_str(), prefix);
    if (!lib)
      return fail(path, lib.takeError());
    main.addGenerator(std::move(*lib));
  }
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
                      const std::vector<std::vector<int64_t>> &resultShapes,
                      const std::vector<std::optional<double>> &argScalars) {
  std::vector<BufferView> buffers;
  for (size_t a = 0; a < args.size(); ++a)
    buffers.push_back({args[a].data(), argShapes[a],
                       a < argScalars.size() ? argScalars[a] : std::nullopt});
  for (size_t r = 0; r < results.size(); ++r)
    buffers.push_back({results[r].data(), resultShapes[r]});
  invoke(buffers);
  return "";
}

void CompiledEntry::invoke(const std::vector<BufferView> &buffers) {
  // The packed wrapper takes one pointer per C-interface argument: to the
  // value for a scalar, to the descriptor's address for a memref.
  std::vector<std::vector<int64_t>> descs(buffers.size());
  std::vector<double> scalars(buffers.size());
  std::vector<void *> ptrs(buffers.size());
  std::vector<void *> argv;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].scalar) {
      scalars[i] = *buffers[i].scalar;
      argv.push_back(&scalars[i]);
      continue;
    }
    descs[i] = descriptorOf(buffers[i].data, buffers[i].shape);
    ptrs[i] = descs[i].data();
    argv.push_back(&ptrs[i]);
  }
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
