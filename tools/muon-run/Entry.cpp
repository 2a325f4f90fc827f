//===- Entry.cpp - The JIT-compiled entry point of a step -----------------===//

#include "Entry.h"

#include "mlir/ExecutionEngine/OptUtils.h"

#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

using namespace mlir;
using namespace muon::run;

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

std::unique_ptr<CompiledEntry>
CompiledEntry::create(ModuleOp module, const std::string &entry, int optLevel,
                      std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // ExecutionEngineOptions::transformer is a function_ref: the function it
  // refers to must outlive create() (a temporary here was a
  // stack-use-after-scope, found by the sanitizer build).
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(optLevel, 0, nullptr);
  ExecutionEngineOptions eo;
  eo.transformer = transformer;
  // MLIR's C runner utilities (memrefCopy): MUON_C_RUNNER_UTILS overrides
  // the path of the build machine (a relocated muon-run, see
  // scripts/make-gpu-bundle.sh).
  const char *utils = std::getenv("MUON_C_RUNNER_UTILS");
  std::vector<StringRef> libs = {utils && *utils ? utils
                                                 : MUON_C_RUNNER_UTILS};
  eo.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(module, eo);
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  std::string symbol = "_mlir_ciface_" + entry;
  // The JIT materialises lazily: look the entry up now so that code
  // generation counts as compile time, not as the first step.
  if (auto sym = (*engine)->lookupPacked(symbol); !sym) {
    error = "entry @" + entry + ": " + llvm::toString(sym.takeError());
    return nullptr;
  }
  return std::unique_ptr<CompiledEntry>(
      new CompiledEntry(std::move(*engine), symbol));
}

std::string
CompiledEntry::invoke(std::vector<std::vector<float>> &args,
                      const std::vector<std::vector<int64_t>> &argShapes,
                      std::vector<std::vector<float>> &results,
                      const std::vector<std::vector<int64_t>> &resultShapes) {
  std::vector<std::vector<int64_t>> descs;
  for (size_t a = 0; a < args.size(); ++a)
    descs.push_back(descriptorOf(args[a].data(), argShapes[a]));
  for (size_t r = 0; r < results.size(); ++r)
    descs.push_back(descriptorOf(results[r].data(), resultShapes[r]));
  std::vector<void *> ptrs;
  for (auto &d : descs)
    ptrs.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : ptrs)
    packed.push_back(&p);
  if (llvm::Error err = engine->invokePacked(symbol, packed))
    return llvm::toString(std::move(err));
  return "";
}
