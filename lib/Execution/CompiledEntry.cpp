//===- CompiledEntry.cpp - The JIT-compiled entry point of a step ---------===//

#include "muon/Execution/CompiledEntry.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/ObjectCache.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
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
/// Keeps the object code the JIT compiles, to write it to a file.
class KeepObject : public llvm::ObjectCache {
public:
  void notifyObjectCompiled(const llvm::Module *,
                            llvm::MemoryBufferRef object) override {
    kept = llvm::MemoryBuffer::getMemBufferCopy(object.getBuffer(),
                                                object.getBufferIdentifier());
  }
  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module *) override {
    return nullptr;
  }
  std::unique_ptr<llvm::MemoryBuffer> kept;
};

/// Adds `_mlir_<name>(void **args)`, which loads argument i through
/// args[i] and calls `name`: the one packed wrapper the entry needs.
/// MLIR's ExecutionEngine wraps every function it defines instead,
/// including the step's own entry with thousands of scalar arguments (its
/// memref descriptors unpacked), all loaded in one basic block: code
/// generation's load clustering is quadratic in a block's loads, and that
/// wrapper took most of a large step's compile time. Loads here go in
/// blocks of 64.
llvm::Error addPackedWrapper(llvm::Module &module, llvm::StringRef name) {
  llvm::Function *fn = module.getFunction(name);
  if (!fn || fn->isDeclaration())
    return llvm::createStringError("no function " + name.str());
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), b.getPtrTy(), false);
  auto *wrapper = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                         "_mlir_" + name, module);
  llvm::Value *argv = wrapper->getArg(0);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "", wrapper));
  std::vector<llvm::Value *> args;
  for (llvm::Argument &arg : fn->args()) {
    if (arg.getArgNo() % 64 == 0 && arg.getArgNo()) {
      llvm::BasicBlock *next = llvm::BasicBlock::Create(ctx, "", wrapper);
      b.CreateBr(next);
      b.SetInsertPoint(next);
    }
    llvm::Value *slot = b.CreateGEP(b.getPtrTy(), argv,
                                    b.getInt64(arg.getArgNo()));
    llvm::Value *ptr = b.CreateLoad(b.getPtrTy(), slot);
    args.push_back(b.CreateLoad(arg.getType(), ptr));
  }
  llvm::Value *result = b.CreateCall(fn, args);
  if (!result->getType()->isVoidTy()) {
    llvm::Value *slot =
        b.CreateGEP(b.getPtrTy(), argv, b.getInt64(fn->arg_size()));
    b.CreateStore(result, b.CreateLoad(b.getPtrTy(), slot));
  }
  b.CreateRetVoid();
  return llvm::Error::success();
}

/// Runs LLVM's optimisation pipeline at `optLevel` on `module`. Where the
/// lowering marked the step's glue optnone (muon-optimise-kernels-only),
/// the other functions (the kernels) are optimised in a module of their
/// own and linked back: the pipeline's module-level passes (interprocedural
/// propagation and analyses) would otherwise walk all of the glue, and
/// that was most of the time at -O2.
llvm::Error optimise(llvm::Module &module, int optLevel) {
  auto transform = makeOptimizingTransformer(optLevel, 0, nullptr);
  auto isKernel = [](const llvm::GlobalValue *gv) {
    auto *fn = llvm::dyn_cast<llvm::Function>(gv);
    return fn && !fn->isDeclaration() && !fn->hasOptNone();
  };
  bool hasGlue = false, splittable = true;
  for (llvm::Function &fn : module) {
    hasGlue |= fn.hasOptNone();
    if (!isKernel(&fn))
      continue;
    // A kernel that refers to another local symbol cannot move alone.
    for (llvm::Instruction &inst : llvm::instructions(fn))
      for (llvm::Value *operand : inst.operands())
        if (auto *gv = llvm::dyn_cast<llvm::GlobalValue>(operand))
          splittable &= gv == &fn || !gv->hasLocalLinkage();
  }
  if (optLevel == 0 || !hasGlue || !splittable)
    return transform(&module);
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> kernels =
      llvm::CloneModule(module, map, isKernel);
  for (llvm::Function &fn : module)
    if (isKernel(&fn)) {
      fn.deleteBody();
      fn.setLinkage(llvm::GlobalValue::ExternalLinkage);
    }
  for (llvm::Function &fn : *kernels)
    if (!fn.isDeclaration())
      fn.setLinkage(llvm::GlobalValue::ExternalLinkage);
  if (llvm::Error err = transform(kernels.get()))
    return err;
  if (llvm::Linker::linkModules(module, std::move(kernels)))
    return llvm::createStringError("could not link the optimised kernels");
  return llvm::Error::success();
}

/// A JIT whose code finds the process's symbols (the runtime) and those of
/// `libraries`, generating code at `level` and handing each object it
/// compiles to `cache` (may be null).
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>
makeJit(const std::vector<std::string> &libraries, llvm::CodeGenOptLevel level,
        llvm::ObjectCache *cache) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(level);
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(*builder)
          .setCompileFunctionCreator(
              [cache](llvm::orc::JITTargetMachineBuilder jtmb)
                  -> llvm::Expected<
                      std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                auto tm = jtmb.createTargetMachine();
                if (!tm)
                  return tm.takeError();
                // Fast instruction selection for unoptimised code (all of
                // it at -O0; the optnone glue otherwise), as llc does.
                (*tm)->setO0WantsFastISel(true);
                return std::make_unique<llvm::orc::TMOwningSimpleCompiler>(
                    std::move(*tm), cache);
              })
          .create();
  if (!jit)
    return jit.takeError();
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
CompiledEntry::create(ModuleOp module, const std::string &entry, int optLevel,
                      std::string &error, const std::string &objectFile,
                      const std::vector<std::string> &extraLibraries) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto fail = [&](const std::string &what, llvm::Error err) {
    error = what + ": " + llvm::toString(std::move(err));
    return nullptr;
  };
  optLevel = std::clamp(optLevel, 0, 3);
  // Code generation at the level of the IR optimisation (-O0: no
  // instruction scheduling or load clustering).
  static const llvm::CodeGenOptLevel kCodeGenLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  // Libraries whose symbols the code calls but that this process may hold
  // privately (a Python extension's dependencies, e.g. the runtime). They
  // are loaded globally: never a library that drags libLLVM or libMLIR
  // into the global scope (other LLVM users in the process would bind to
  // them).
  std::vector<std::string> libraries = extraLibrariesFromEnvironment();
  libraries.insert(libraries.end(), extraLibraries.begin(),
                   extraLibraries.end());
  KeepObject object;
  auto jit = makeJit(libraries, kCodeGenLevels[optLevel],
                     objectFile.empty() ? nullptr : &object);
  if (!jit)
    return fail("JIT compilation failed", jit.takeError());

  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, *ctx);
  if (!llvmModule) {
    error = "JIT compilation failed: could not translate to LLVM IR";
    return nullptr;
  }
  llvmModule->setDataLayout((*jit)->getDataLayout());
  llvmModule->setTargetTriple((*jit)->getTargetTriple());
  std::string cInterface = "_mlir_ciface_" + entry;
  if (llvm::Error err = addPackedWrapper(*llvmModule, cInterface))
    return fail("entry @" + entry, std::move(err));
  if (llvm::Error err = optimise(*llvmModule, optLevel))
    return fail("JIT compilation failed", std::move(err));
  if (llvm::Error err = (*jit)->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(llvmModule), std::move(ctx))))
    return fail("JIT compilation failed", std::move(err));
  // The JIT materialises lazily: look the entry up now so that code
  // generation counts as compile time, not as the first step.
  auto sym = (*jit)->lookup("_mlir_" + cInterface);
  if (!sym)
    return fail("entry @" + entry, sym.takeError());
  if (!objectFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectFile, ec);
    if (!object.kept || ec)
      error = "could not write the compiled step to " + objectFile;
    else
      os << object.kept->getBuffer();
    if (!error.empty() || os.has_error()) {
      os.clear_error();
      error = "could not write the compiled step to " + objectFile;
      return nullptr;
    }
  }
  std::unique_ptr<CompiledEntry> compiled(new CompiledEntry());
  compiled->packed = sym->toPtr<void (*)(void **)>();
  compiled->jit = std::move(*jit);
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
  auto jit = makeJit(extraLibrariesFromEnvironment(),
                     llvm::CodeGenOptLevel::Default, nullptr);
  if (!jit)
    return fail("JIT", jit.takeError());
  auto buffer = llvm::MemoryBuffer::getFile(objectFile);
  if (!buffer)
    return fail("read", llvm::errorCodeToError(buffer.getError()));
  if (llvm::Error err = (*jit)->addObjectFile(std::move(*buffer)))
    return fail("add", std::move(err));
  // The packed wrapper of the C interface: "_mlir_" + name.
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
  auto sym = jit->lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<const void *>();
}
