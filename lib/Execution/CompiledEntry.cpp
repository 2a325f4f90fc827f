//===- CompiledEntry.cpp - The JIT-compiled entry point of a step ---------===//

#include "muon/Execution/CompiledEntry.h"
#include "ObjectCode.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/Object/ObjectFile.h"
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

namespace {
/// A JIT whose code finds the process's symbols (the runtime) and those of
/// `libraries`. Objects are compiled beforehand (compileToObjects) or read
/// from a file. What the session reports on its own (the symbols a lookup
/// could not resolve, which ORC prints on stderr by default) goes to
/// `reported`, so the caller's error can say it.
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>
makeJit(const std::vector<std::string> &libraries,
        std::shared_ptr<std::string> reported) {
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return jit.takeError();
  (*jit)->getExecutionSession().setErrorReporter([reported](llvm::Error e) {
    std::string text = llvm::toString(std::move(e));
    *reported += (reported->empty() ? "" : "; ") + text;
  });
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  for (const std::string &path : libraries) {
    auto lib =
        llvm::orc::DynamicLibrarySearchGenerator::Load(path.c_str(), prefix);
    if (!lib)
      return llvm::createStringError(path + ": " +
                                     llvm::toString(lib.takeError()));
    main.addGenerator(std::move(*lib));
  }
  return jit;
}

} // namespace

std::unique_ptr<CompiledEntry>
CompiledEntry::fromObjects(const ObjectList &objects,
                           const std::vector<std::string> &libraries,
                           const std::string &entry, std::string &error) {
  auto fail = [&](const std::string &what, llvm::Error err) {
    error = what + ": " + llvm::toString(std::move(err));
    return nullptr;
  };
  auto reported = std::make_shared<std::string>();
  auto jit = makeJit(libraries, reported);
  if (!jit)
    return fail("JIT", jit.takeError());
  for (const auto &object : objects)
    if (llvm::Error err = (*jit)->addObjectFile(
            llvm::MemoryBuffer::getMemBufferCopy(object->getBuffer(),
                                                 object->getBufferIdentifier())))
      return fail("linking the compiled step", std::move(err));
  // The packed wrapper of the C interface: "_mlir_" + name. Looking it up
  // resolves every symbol the objects use, so a missing one is reported
  // here, not at the first step.
  auto sym = (*jit)->lookup("_mlir__mlir_ciface_" + entry);
  if (!sym) {
    fail("entry @" + entry, sym.takeError());
    if (!reported->empty())
      error += " (" + *reported + ")";
    return nullptr;
  }
  std::unique_ptr<CompiledEntry> compiled(new CompiledEntry());
  compiled->packed = sym->toPtr<void (*)(void **)>();
  if (auto init = (*jit)->lookup(kInitPrefix + entry))
    compiled->init = init->toPtr<void (*)()>();
  else
    llvm::consumeError(init.takeError());
  // Later reports go to stderr, as ORC's default reporter sends them.
  (*jit)->getExecutionSession().setErrorReporter([](llvm::Error e) {
    llvm::logAllUnhandledErrors(std::move(e), llvm::errs(),
                                "JIT session error: ");
  });
  compiled->jit = std::move(*jit);
  return compiled;
}

std::unique_ptr<CompiledEntry>
CompiledEntry::create(ModuleOp module, const std::string &entry, int optLevel,
                      std::string &error, const std::string &objectFile,
                      const std::vector<std::string> &extraLibraries,
                      const std::string &objectKey) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto objects = compileToObjects(module, entry, optLevel);
  if (!objects) {
    error = "JIT compilation failed: " + llvm::toString(objects.takeError());
    return nullptr;
  }
  if (!objectFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectFile, ec);
    if (!ec)
      os << packObjects(*objects, objectKey);
    if (ec || os.has_error()) {
      os.clear_error();
      error = "could not write the compiled step to " + objectFile;
      return nullptr;
    }
  }
  // Libraries whose symbols the code calls but that this process may hold
  // privately (a Python extension's dependencies, e.g. the runtime). They
  // are loaded globally: never a library that drags libLLVM or libMLIR
  // into the global scope (other LLVM users in the process would bind to
  // them).
  std::vector<std::string> libraries = extraLibrariesFromEnvironment();
  libraries.insert(libraries.end(), extraLibraries.begin(),
                   extraLibraries.end());
  return fromObjects(*objects, libraries, entry, error);
}

std::unique_ptr<CompiledEntry>
CompiledEntry::load(const std::string &objectFile, const std::string &entry,
                    std::string &error, const std::string &objectKey) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto buffer = llvm::MemoryBuffer::getFile(objectFile);
  if (!buffer) {
    error = "loading the compiled step " + objectFile + ": read: " +
            buffer.getError().message();
    return nullptr;
  }
  std::string key;
  auto objects = unpackObjects((*buffer)->getMemBufferRef(), &key);
  std::unique_ptr<CompiledEntry> compiled;
  if (!objects)
    error = llvm::toString(objects.takeError());
  else if (!objectKey.empty() && key.empty())
    error = "it holds no key (an earlier version wrote it), so it cannot be "
            "told to be this step's code (expected key '" +
            objectKey + "')";
  else if (!objectKey.empty() && key != objectKey)
    error = "it holds the code of another step (key '" + key + "', expected '" +
            objectKey + "')";
  else
    compiled =
        fromObjects(*objects, extraLibrariesFromEnvironment(), entry, error);
  if (!compiled)
    error = "loading the compiled step " + objectFile + ": " + error;
  return compiled;
}

bool CompiledEntry::isReadable(const std::string &objectFile,
                               const std::string &objectKey) {
  auto buffer = llvm::MemoryBuffer::getFile(objectFile);
  if (!buffer || (*buffer)->getBufferSize() == 0)
    return false;
  std::string key;
  auto objects = unpackObjects((*buffer)->getMemBufferRef(), &key);
  if (!objects) {
    llvm::consumeError(objects.takeError());
    return false;
  }
  if (!objectKey.empty() && key != objectKey)
    return false;
  for (const auto &object : *objects) {
    auto parsed =
        llvm::object::ObjectFile::createObjectFile(object->getMemBufferRef());
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return false;
    }
  }
  return !objects->empty();
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
  if (init)
    std::call_once(initOnce, init);
  packed(argv.data());
}

const void *CompiledEntry::lookupSymbol(const std::string &name) {
  auto sym = jit->lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<const void *>();
}
