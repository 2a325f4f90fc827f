//===- ObjectCode.cpp - A lowered step to machine code --------------------===//
//
// Why not MLIR's ExecutionEngine (docs/design-decisions.md, "The JIT"): it
// wraps every function it defines in a packed wrapper, the step's entry
// with thousands of scalar arguments included (instruction selection is
// quadratic in that wrapper's loads), and generates code at -O2 whatever
// level it is given. And why two objects: a step's code is mostly glue
// (runtime calls and the descriptors of their buffers) that optimisation
// does not speed up, while -O2's module passes and register allocation
// grow faster than linearly in it; its loops are in a few kernels.
//
//===----------------------------------------------------------------------===//

#include "ObjectCode.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <cstring>

using namespace muon::exec;

namespace {
/// A new `void _mlir_<name>(void **args)` in `module`: the packed form of
/// `name`, argument i passed as a pointer to it in args[i].
llvm::Function *createPacked(llvm::Module &module, llvm::StringRef name) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       llvm::PointerType::get(ctx, 0), false);
  return llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                "_mlir_" + name, module);
}

/// Argument `arg` of the unpacked function, loaded through args[i] of the
/// packed one.
llvm::Value *loadArgument(llvm::IRBuilder<> &b, llvm::Value *argv,
                          llvm::Argument &arg) {
  llvm::Value *slot =
      b.CreateGEP(b.getPtrTy(), argv, b.getInt64(arg.getArgNo()));
  llvm::Value *ptr = b.CreateLoad(b.getPtrTy(), slot);
  return b.CreateLoad(arg.getType(), ptr);
}

/// Adds `_mlir_<name>(void **args)`, which loads argument i through args[i]
/// and calls `name`: the one packed wrapper the entry needs. Loads go in
/// blocks of 64, so that no basic block holds thousands.
llvm::Error addPackedWrapper(llvm::Module &module, llvm::StringRef name) {
  llvm::Function *fn = module.getFunction(name);
  if (!fn || fn->isDeclaration())
    return llvm::createStringError("no function " + name.str());
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Function *wrapper = createPacked(module, name);
  if (fn->hasOptNone())
    wrapper->addFnAttrs(llvm::AttrBuilder(ctx)
                            .addAttribute(llvm::Attribute::OptimizeNone)
                            .addAttribute(llvm::Attribute::NoInline));
  llvm::Value *argv = wrapper->getArg(0);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "", wrapper));
  std::vector<llvm::Value *> args;
  for (llvm::Argument &arg : fn->args()) {
    if (arg.getArgNo() % 64 == 0 && arg.getArgNo()) {
      llvm::BasicBlock *next = llvm::BasicBlock::Create(ctx, "", wrapper);
      b.CreateBr(next);
      b.SetInsertPoint(next);
    }
    args.push_back(loadArgument(b, argv, arg));
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

/// Moves the body of `name` into `_mlir_<name>(void **args)`, which loads
/// argument i through args[i] at the top of the entry block, and erases
/// `name`; false (nothing changed) where `name` returns a value or is
/// called. Why not a wrapper that calls `name`: a step's entry takes one
/// pointer per buffer (thousands), and instruction selection lowers that
/// many formal arguments with SelectionDAG, whose scheduling of them grew
/// faster than their number (4 of every 10 instructions of the glue's code
/// generation on a 70B step); loads are selected fast, one by one.
bool movePackedBody(llvm::Module &module, llvm::StringRef name) {
  llvm::Function *fn = module.getFunction(name);
  if (!fn || fn->isDeclaration() || fn->isVarArg() ||
      !fn->getReturnType()->isVoidTy() || !fn->use_empty())
    return false;
  llvm::Function *packed = createPacked(module, name);
  packed->addFnAttrs(llvm::AttrBuilder(module.getContext(),
                                       fn->getAttributes().getFnAttrs()));
  packed->splice(packed->end(), fn);
  llvm::IRBuilder<> b(&packed->getEntryBlock(),
                      packed->getEntryBlock().getFirstInsertionPt());
  for (llvm::Argument &arg : fn->args())
    arg.replaceAllUsesWith(loadArgument(b, packed->getArg(0), arg));
  fn->eraseFromParent();
  return true;
}

bool isKernel(const llvm::GlobalValue *gv) {
  auto *fn = llvm::dyn_cast<llvm::Function>(gv);
  return fn && !fn->isDeclaration() && !fn->hasOptNone();
}

/// The kernels of `module` moved into a module of their own (definitions
/// there, declarations left behind, both with external linkage), or null
/// when `module` has no optnone glue or a kernel refers to a local symbol
/// and cannot move alone.
std::unique_ptr<llvm::Module> takeKernels(llvm::Module &module) {
  bool hasGlue = false;
  for (llvm::Function &fn : module) {
    hasGlue |= fn.hasOptNone();
    if (!isKernel(&fn))
      continue;
    for (llvm::Instruction &inst : llvm::instructions(fn))
      for (llvm::Value *operand : inst.operands())
        if (auto *gv = llvm::dyn_cast<llvm::GlobalValue>(operand))
          if (gv != &fn && gv->hasLocalLinkage())
            return nullptr;
  }
  if (!hasGlue)
    return nullptr;
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
  return kernels;
}

/// The format's tag: version 2 gives each object a checksum, version 3 the
/// file the key of the step it holds.
constexpr char kMagic[8] = {'M', 'U', 'O', 'N', 'O', 'B', 'J', '3'};
constexpr char kMagicV2[8] = {'M', 'U', 'O', 'N', 'O', 'B', 'J', '2'};

/// The module's static constructors (target=cuda: the load of the kernels'
/// image, which MLIR's translation of gpu.binary emits as one) called in
/// order of priority from a new external function `name` instead, and its
/// destructors dropped (the module lives as long as the process). The JIT
/// runs no static constructor of an object it links, and a step should
/// touch the GPU at its first call, not when it is compiled.
void moveConstructorsToInit(llvm::Module &module, const std::string &name) {
  if (llvm::GlobalVariable *dtors = module.getGlobalVariable("llvm.global_dtors"))
    dtors->eraseFromParent();
  llvm::GlobalVariable *ctors = module.getGlobalVariable("llvm.global_ctors");
  if (!ctors)
    return;
  std::vector<std::pair<uint64_t, llvm::Function *>> calls;
  if (auto *list =
          llvm::dyn_cast_or_null<llvm::ConstantArray>(ctors->getInitializer()))
    for (llvm::Value *op : list->operands()) {
      auto *entry = llvm::cast<llvm::ConstantStruct>(op);
      auto *priority = llvm::cast<llvm::ConstantInt>(entry->getOperand(0));
      if (auto *fn = llvm::dyn_cast<llvm::Function>(entry->getOperand(1)))
        calls.emplace_back(priority->getZExtValue(), fn);
    }
  ctors->eraseFromParent();
  std::stable_sort(calls.begin(), calls.end(),
                   [](auto &a, auto &b) { return a.first < b.first; });
  llvm::LLVMContext &ctx = module.getContext();
  auto *init = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
      llvm::Function::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", init));
  // Glue, not kernels: compiled unoptimised beside the step's other glue
  // (a kernel may not refer to the internal globals they load).
  auto markGlue = [](llvm::Function *fn) {
    fn->addFnAttr(llvm::Attribute::OptimizeNone);
    fn->addFnAttr(llvm::Attribute::NoInline);
  };
  markGlue(init);
  for (auto &[priority, fn] : calls) {
    markGlue(fn);
    b.CreateCall(fn);
  }
  b.CreateRetVoid();
}

void putWord(std::string &out, uint64_t word) {
  char bytes[8];
  std::memcpy(bytes, &word, 8);
  out.append(bytes, 8);
}
} // namespace

llvm::Expected<ObjectList> muon::exec::compileToObjects(mlir::ModuleOp module,
                                                        const std::string &entry,
                                                        int optLevel) {
  optLevel = std::clamp(optLevel, 0, 3);
  static const llvm::CodeGenOptLevel kLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  // What ORC's JIT linker expects of the objects it links (and what it
  // sets up itself when it compiles): position-independent code, small
  // code model.
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  auto machine = [&](llvm::CodeGenOptLevel level)
      -> llvm::Expected<std::unique_ptr<llvm::TargetMachine>> {
    builder->setCodeGenOptLevel(level);
    auto tm = builder->createTargetMachine();
    // Fast instruction selection for unoptimised code, as llc does.
    if (tm)
      (*tm)->setO0WantsFastISel(true);
    return tm;
  };
  auto kernelMachine = machine(kLevels[optLevel]);
  if (!kernelMachine)
    return kernelMachine.takeError();

  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> glue =
      mlir::translateModuleToLLVMIR(module, ctx);
  if (!glue)
    return llvm::createStringError("could not translate to LLVM IR");
  glue->setDataLayout((*kernelMachine)->createDataLayout());
  glue->setTargetTriple((*kernelMachine)->getTargetTriple());
  std::string cInterface = "_mlir_ciface_" + entry;
  moveConstructorsToInit(*glue, kInitPrefix + entry);
  if (!movePackedBody(*glue, cInterface))
    if (llvm::Error err = addPackedWrapper(*glue, cInterface))
      return err;
  // With the target machine, so that the loop and SLP vectorisers know the
  // host's vector registers (without one they see none and leave the
  // kernels' elementwise loops scalar).
  auto optimise =
      mlir::makeOptimizingTransformer(optLevel, 0, kernelMachine->get());

  ObjectList objects;
  auto emit = [&](llvm::TargetMachine &tm, llvm::Module &m) -> llvm::Error {
    auto object = llvm::orc::SimpleCompiler(tm)(m);
    if (!object)
      return object.takeError();
    objects.push_back(std::move(*object));
    return llvm::Error::success();
  };
  std::unique_ptr<llvm::Module> kernels =
      optLevel > 0 ? takeKernels(*glue) : nullptr;
  if (!kernels) {
    // At -O0, or for a module without optnone glue: one object, all of it
    // at the requested level.
    if (llvm::Error err = optimise(glue.get()))
      return err;
    if (llvm::Error err = emit(**kernelMachine, *glue))
      return err;
    return objects;
  }
  auto glueMachine = machine(llvm::CodeGenOptLevel::None);
  if (!glueMachine)
    return glueMachine.takeError();
  if (llvm::Error err = optimise(kernels.get()))
    return err;
  if (llvm::Error err = emit(**kernelMachine, *kernels))
    return err;
  if (llvm::Error err = emit(**glueMachine, *glue))
    return err;
  return objects;
}

std::string muon::exec::packObjects(const ObjectList &objects,
                                    llvm::StringRef key) {
  std::string out(kMagic, sizeof(kMagic));
  putWord(out, key.size());
  out.append(key.data(), key.size());
  putWord(out, objects.size());
  for (const auto &object : objects) {
    putWord(out, object->getBufferSize());
    putWord(out, llvm::xxh3_64bits(object->getBuffer()));
    out.append(object->getBufferStart(), object->getBufferSize());
  }
  return out;
}

llvm::Expected<ObjectList> muon::exec::unpackObjects(llvm::MemoryBufferRef file,
                                                     std::string *key) {
  llvm::StringRef bytes = file.getBuffer();
  ObjectList objects;
  if (key)
    key->clear();
  bool keyed = bytes.starts_with(llvm::StringRef(kMagic, sizeof(kMagic)));
  if (!keyed &&
      !bytes.starts_with(llvm::StringRef(kMagicV2, sizeof(kMagicV2)))) {
    objects.push_back(llvm::MemoryBuffer::getMemBufferCopy(
        bytes, file.getBufferIdentifier()));
    return objects;
  }
  bytes = bytes.drop_front(sizeof(kMagic));
  auto word = [&](uint64_t &value) {
    if (bytes.size() < 8)
      return false;
    std::memcpy(&value, bytes.data(), 8);
    bytes = bytes.drop_front(8);
    return true;
  };
  if (keyed) {
    uint64_t length = 0;
    if (!word(length) || length > bytes.size())
      return llvm::createStringError("truncated object file");
    if (key)
      *key = bytes.take_front(length).str();
    bytes = bytes.drop_front(length);
  }
  uint64_t count = 0;
  if (!word(count))
    return llvm::createStringError("truncated object file");
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0, checksum = 0;
    if (!word(size) || !word(checksum) || size > bytes.size())
      return llvm::createStringError("truncated object file");
    // A changed byte inside an object can still read as an object file,
    // and then runs as wrong machine code: the checksum refuses it.
    if (llvm::xxh3_64bits(bytes.take_front(size)) != checksum)
      return llvm::createStringError(
          "object " + std::to_string(i) +
          " does not match its checksum (the file is corrupt)");
    objects.push_back(llvm::MemoryBuffer::getMemBufferCopy(
        bytes.take_front(size), file.getBufferIdentifier()));
    bytes = bytes.drop_front(size);
  }
  if (!bytes.empty())
    return llvm::createStringError("trailing bytes in object file");
  return objects;
}
