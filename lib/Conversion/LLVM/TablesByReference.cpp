//===- TablesByReference.cpp - Constant tables as one pointer --------------===//
//
// Why: a runtime function with a C interface takes each table (extents,
// mesh shapes, Newton-Schulz coefficients) as a memref descriptor, which a
// call passes as five scalars (allocated and aligned pointer, offset, size,
// stride) to a wrapper that stores them into a stack slot and hands the
// slot's address to `_mlir_ciface_<name>`. The tables the lowering makes
// are constant globals, so their descriptors are constants too: one
// constant global per table, whose address the call passes instead. On a
// 405B step that is four fewer arguments on each of about 8,000 calls, and
// the JIT's fast instruction selection costs about the same per argument
// as per call. The runtime receives the same pointer type, to the same
// fields, and only reads it.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/RuntimeCalls.h"
#include "muon/Support/EraseDead.h"
#include "muon/Support/FreshSymbolNames.h"
#include "muon/Support/SymbolReferences.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <tuple>

namespace muon {
#define GEN_PASS_DEF_MUONTABLESBYREFERENCE
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// How one parameter of a runtime function's C interface is passed to its
/// wrapper: `fields` scalars; a ranked memref of rank `rank` (3 + 2 rank
/// fields), an unranked one (2), or anything else (1).
struct Param {
  enum Kind { Scalar, Unranked, Ranked } kind;
  unsigned first, fields;
  int64_t rank = 0;
};

/// A runtime function whose calls go through an upstream C-interface
/// wrapper: the wrapper, the C interface it calls and its parameters.
struct Wrapper {
  LLVM::LLVMFuncOp wrapper, cInterface;
  SmallVector<Param> params;
};

/// The wrapper's scalar parameter types for a runtime signature, as the
/// conversion to LLVM writes them; none when a type is not one the
/// runtime's table uses.
std::optional<SmallVector<Param>> paramsOf(FunctionType type) {
  SmallVector<Param> params;
  unsigned next = 0;
  for (Type t : type.getInputs()) {
    Param p{Param::Scalar, next, 1};
    if (auto ranked = dyn_cast<MemRefType>(t))
      p = {Param::Ranked, next,
           static_cast<unsigned>(3 + 2 * ranked.getRank()), ranked.getRank()};
    else if (isa<UnrankedMemRefType>(t))
      p = {Param::Unranked, next, 2};
    params.push_back(p);
    next += p.fields;
  }
  return params;
}

/// The scalar field types of a parameter, in order.
SmallVector<Type> fieldTypes(MLIRContext *ctx, const Param &p, Type scalar) {
  Type i64 = IntegerType::get(ctx, 64), ptr = LLVM::LLVMPointerType::get(ctx);
  switch (p.kind) {
  case Param::Scalar:
    return {scalar};
  case Param::Unranked:
    return {i64, ptr};
  case Param::Ranked: {
    SmallVector<Type> types{ptr, ptr, i64};
    types.append(2 * p.rank, i64);
    return types;
  }
  }
  llvm_unreachable("unknown parameter kind");
}

/// The descriptor struct of a ranked parameter.
LLVM::LLVMStructType descriptorType(MLIRContext *ctx, int64_t rank) {
  Type i64 = IntegerType::get(ctx, 64), ptr = LLVM::LLVMPointerType::get(ctx);
  auto sizes = LLVM::LLVMArrayType::get(i64, rank);
  return LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, i64, sizes, sizes});
}

/// A constant descriptor of a global's data, as memref.get_global's
/// lowering writes it: the aligned pointer is the global's address (through
/// a constant getelementptr), the allocated pointer a constant address (the
/// conversion's 0xdeadbeef: a global owns no allocation), the same address,
/// or null; offset, sizes and strides constants. Equal keys are equal
/// descriptors.
struct ConstantDescriptor {
  std::string global;
  Type gepElement; // null: the address itself
  SmallVector<int32_t> gepIndices;
  enum { Address, SameAsAligned, Null } allocatedKind = Address;
  int64_t allocatedAddress = 0;
  SmallVector<int64_t> scalars; // offset, sizes..., strides...

  auto key() const {
    return std::make_tuple(global, gepElement.getAsOpaquePointer(),
                           std::vector<int32_t>(gepIndices.begin(),
                                                gepIndices.end()),
                           static_cast<int>(allocatedKind), allocatedAddress,
                           std::vector<int64_t>(scalars.begin(),
                                                scalars.end()));
  }
};

std::optional<int64_t> constantInt(Value v) {
  auto c = v.getDefiningOp<LLVM::ConstantOp>();
  if (!c)
    return std::nullopt;
  auto attr = dyn_cast<IntegerAttr>(c.getValue());
  // The conversion writes index constants (`2 : index`) as i64 values.
  if (!attr || !(attr.getType().isIndex() || attr.getType().isInteger(64)) ||
      !v.getType().isInteger(64))
    return std::nullopt;
  return attr.getInt();
}

/// The constant descriptor the fields `fields` (allocated, aligned, offset,
/// sizes, strides) hold, or none.
std::optional<ConstantDescriptor> matchConstant(ValueRange fields) {
  ConstantDescriptor d;
  Value aligned = fields[1];
  auto address = aligned.getDefiningOp<LLVM::AddressOfOp>();
  if (auto gep = aligned.getDefiningOp<LLVM::GEPOp>()) {
    if (!gep.getDynamicIndices().empty())
      return std::nullopt;
    address = gep.getBase().getDefiningOp<LLVM::AddressOfOp>();
    d.gepElement = gep.getElemType();
    for (auto index : gep.getIndices())
      d.gepIndices.push_back(
          static_cast<int32_t>(llvm::cast<IntegerAttr>(index).getInt()));
  }
  if (!address)
    return std::nullopt;
  d.global = address.getGlobalName().str();
  if (fields[0] == aligned)
    d.allocatedKind = ConstantDescriptor::SameAsAligned;
  else if (fields[0].getDefiningOp<LLVM::ZeroOp>())
    d.allocatedKind = ConstantDescriptor::Null;
  else if (auto cast = fields[0].getDefiningOp<LLVM::IntToPtrOp>()) {
    std::optional<int64_t> value = constantInt(cast.getArg());
    if (!value)
      return std::nullopt;
    d.allocatedAddress = *value;
  } else
    return std::nullopt;
  for (Value v : fields.drop_front(2)) {
    std::optional<int64_t> value = constantInt(v);
    if (!value)
      return std::nullopt;
    d.scalars.push_back(*value);
  }
  return d;
}

struct MuonTablesByReference
    : muon::impl::MuonTablesByReferenceBase<MuonTablesByReference> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ctx = &getContext();
    // Nothing from a module this instance ran on before.
    symbols.emplace(module);
    names.emplace(*symbols);
    wrappers.clear();
    byName.clear();
    rewrote.clear();
    variants.clear();
    byMask.clear();
    descriptors.clear();
    addresses.clear();
    collectWrappers(module);
    if (wrappers.empty())
      return;
    // Calls in the module's own functions (a nested module has its own
    // symbols); wrappers are left as they are, and kept while something
    // still uses them.
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || isWrapper(fn))
        continue;
      fn.walk([&](LLVM::CallOp call) {
        if (Wrapper *w = wrapperOf(call))
          rewrite(call, *w, fn);
      });
    }
    if (rewrote.empty())
      return;
    // Wrappers nothing names any more are erased: a call left as it was,
    // an address taken, a reference in a global's initializer keep one.
    llvm::DenseSet<Operation *> named;
    if (failed(muon::walkSymbolReferences(module, [&](SymbolRefAttr ref) {
          if (auto it = byName.find(ref.getRootReference().getValue());
              it != byName.end())
            named.insert(it->second->wrapper);
        })))
      return; // references nobody can list: erase nothing
    for (Wrapper &w : wrappers)
      if (rewrote.contains(w.wrapper) && !named.contains(w.wrapper))
        w.wrapper.erase();
  }

  /// The upstream C-interface wrappers of the runtime's functions in
  /// `module`, checked against the runtime's table.
  void collectWrappers(ModuleOp module) {
    for (unsigned i = 0; i < muon::kNumRuntimeFns; ++i) {
      muon::RuntimeSignature sig =
          muon::runtimeSignature(ctx, static_cast<muon::RuntimeFn>(i));
      if (!sig.cInterface)
        continue;
      auto wrapper = symbols->lookup<LLVM::LLVMFuncOp>(sig.name);
      auto cInterface = symbols->lookup<LLVM::LLVMFuncOp>(
          ("_mlir_ciface_" + sig.name).str());
      if (!wrapper || wrapper.isExternal() || !cInterface ||
          wrapper.isVarArg() || cInterface.isVarArg())
        continue;
      std::optional<SmallVector<Param>> params = paramsOf(sig.type);
      // A set of by-reference parameters is a bit mask.
      if (!params || params->size() > 32 ||
          !matches(wrapper, cInterface, *params))
        continue;
      wrappers.push_back({wrapper, cInterface, std::move(*params)});
    }
    for (Wrapper &w : wrappers)
      byName[w.wrapper.getSymName()] = &w;
  }

  /// Whether the wrapper takes `params` as scalars and the C interface
  /// one value per parameter (a pointer per memref), with the same result.
  bool matches(LLVM::LLVMFuncOp wrapper, LLVM::LLVMFuncOp cInterface,
               ArrayRef<Param> params) {
    LLVM::LLVMFunctionType wt = wrapper.getFunctionType(),
                           ct = cInterface.getFunctionType();
    if (wt.getReturnType() != ct.getReturnType() ||
        ct.getNumParams() != params.size())
      return false;
    SmallVector<Type> expected;
    for (auto [p, cType] : llvm::zip_equal(params, ct.getParams())) {
      if (p.kind != Param::Scalar &&
          !isa<LLVM::LLVMPointerType>(cType))
        return false;
      llvm::append_range(expected, fieldTypes(ctx, p, cType));
    }
    return llvm::equal(expected, wt.getParams());
  }

  bool isWrapper(LLVM::LLVMFuncOp fn) const {
    return byName.count(fn.getSymName()) || variants.count(fn);
  }

  Wrapper *wrapperOf(LLVM::CallOp call) {
    std::optional<StringRef> callee = call.getCallee();
    if (!callee)
      return nullptr;
    auto it = byName.find(*callee);
    return it == byName.end() ? nullptr : it->second;
  }

  /// Passes the constant tables of `call` by reference, where it has any.
  void rewrite(LLVM::CallOp call, Wrapper &w, LLVM::LLVMFuncOp caller) {
    ValueRange args = call.getArgOperands();
    if (args.size() != w.wrapper.getNumArguments() || call.getVarCalleeType())
      return;
    SmallVector<std::optional<ConstantDescriptor>> tables;
    unsigned mask = 0;
    for (auto [i, p] : llvm::enumerate(w.params)) {
      std::optional<ConstantDescriptor> d;
      if (p.kind == Param::Ranked)
        d = matchConstant(args.slice(p.first, p.fields));
      // Only a data global's address is a table.
      if (d && !symbols->lookup<LLVM::GlobalOp>(d->global))
        d.reset();
      if (d)
        mask |= 1u << i;
      tables.push_back(std::move(d));
    }
    if (!mask)
      return;
    LLVM::LLVMFuncOp variant = variantOf(w, mask);
    SmallVector<Value> operands;
    for (auto [p, d] : llvm::zip_equal(w.params, tables)) {
      if (d)
        operands.push_back(addressIn(caller, descriptorGlobal(*d, p.rank)));
      else
        llvm::append_range(operands, args.slice(p.first, p.fields));
    }
    OpBuilder b(call);
    auto lowered = LLVM::CallOp::create(b, call.getLoc(), variant, operands);
    call.replaceAllUsesWith(lowered.getResults());
    SmallVector<Value> old(args);
    call.erase();
    // The fields' constants, where nothing else uses them (they would
    // still cost the translation).
    SmallVector<Operation *> defs;
    for (Value v : old)
      defs.push_back(v.getDefiningOp());
    muon::eraseDeadDefinitions(defs);
    rewrote.insert(w.wrapper);
  }

  /// The wrapper of `w` that takes the parameters in `mask` (ranked
  /// memrefs) as a pointer to their descriptor: it builds the others'
  /// descriptors in stack slots, as the upstream wrapper does, and calls
  /// the C interface.
  LLVM::LLVMFuncOp variantOf(Wrapper &w, unsigned mask) {
    LLVM::LLVMFuncOp &variant = byMask[{w.wrapper, mask}];
    if (variant)
      return variant;
    Type ptr = LLVM::LLVMPointerType::get(ctx),
         i64 = IntegerType::get(ctx, 64);
    SmallVector<Type> inputs;
    ArrayRef<Type> cParams = w.cInterface.getFunctionType().getParams();
    for (auto [i, p] : llvm::enumerate(w.params)) {
      if (mask & (1u << i))
        inputs.push_back(ptr);
      else
        llvm::append_range(inputs, fieldTypes(ctx, p, cParams[i]));
    }
    auto type = LLVM::LLVMFunctionType::get(
        w.wrapper.getFunctionType().getReturnType(), inputs);
    OpBuilder b(w.wrapper);
    Location loc = w.wrapper.getLoc();
    variant = LLVM::LLVMFuncOp::create(
        b, loc, freshName((w.wrapper.getSymName() + "_by_reference").str()),
        type, LLVM::Linkage::Private);
    symbols->insert(variant);
    variants.insert(variant);
    Block *body = variant.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    Value one = LLVM::ConstantOp::create(b, loc, i64, 1);
    SmallVector<Value> callArgs;
    unsigned next = 0;
    for (auto [i, p] : llvm::enumerate(w.params)) {
      if (mask & (1u << i)) {
        callArgs.push_back(body->getArgument(next++));
        continue;
      }
      if (p.kind == Param::Scalar) {
        callArgs.push_back(body->getArgument(next++));
        continue;
      }
      // The descriptor in a stack slot, one store per field.
      Type desc = p.kind == Param::Unranked
                      ? Type(LLVM::LLVMStructType::getLiteral(ctx, {i64, ptr}))
                      : Type(descriptorType(ctx, p.rank));
      Value slot = LLVM::AllocaOp::create(b, loc, ptr, desc, one);
      SmallVector<SmallVector<LLVM::GEPArg>> positions;
      if (p.kind == Param::Unranked)
        positions = {{0, 0}, {0, 1}};
      else {
        positions = {{0, 0}, {0, 1}, {0, 2}};
        for (int64_t d = 0; d < p.rank; ++d)
          positions.push_back({0, 3, static_cast<int32_t>(d)});
        for (int64_t d = 0; d < p.rank; ++d)
          positions.push_back({0, 4, static_cast<int32_t>(d)});
      }
      for (auto &position : positions) {
        Value at = LLVM::GEPOp::create(b, loc, ptr, desc, slot, position);
        LLVM::StoreOp::create(b, loc, body->getArgument(next++), at);
      }
      callArgs.push_back(slot);
    }
    auto call = LLVM::CallOp::create(b, loc, w.cInterface, callArgs);
    LLVM::ReturnOp::create(b, loc, call.getResults());
    return variant;
  }

  /// The constant global holding descriptor `d` (rank `rank`), made once.
  LLVM::GlobalOp descriptorGlobal(const ConstantDescriptor &d, int64_t rank) {
    LLVM::GlobalOp &global = descriptors[d.key()];
    if (global)
      return global;
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    Location loc = module.getLoc();
    auto type = descriptorType(ctx, rank);
    global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                    LLVM::Linkage::Private,
                                    freshName(d.global + "_descriptor"),
                                    Attribute());
    symbols->insert(global);
    Block *init = b.createBlock(&global.getInitializerRegion());
    b.setInsertionPointToStart(init);
    Type ptr = LLVM::LLVMPointerType::get(ctx), i64 = IntegerType::get(ctx, 64);
    Value aligned = LLVM::AddressOfOp::create(b, loc, ptr, d.global);
    if (d.gepElement) {
      SmallVector<LLVM::GEPArg> indices(d.gepIndices.begin(),
                                        d.gepIndices.end());
      aligned = LLVM::GEPOp::create(b, loc, ptr, d.gepElement, aligned, indices);
    }
    Value allocated = aligned;
    if (d.allocatedKind == ConstantDescriptor::Null)
      allocated = LLVM::ZeroOp::create(b, loc, ptr);
    else if (d.allocatedKind == ConstantDescriptor::Address)
      allocated = LLVM::IntToPtrOp::create(
          b, loc, ptr,
          LLVM::ConstantOp::create(b, loc, i64, d.allocatedAddress)
              .getResult());
    Value desc = LLVM::PoisonOp::create(b, loc, type);
    desc = LLVM::InsertValueOp::create(b, loc, desc, allocated,
                                       ArrayRef<int64_t>{0});
    desc = LLVM::InsertValueOp::create(b, loc, desc, aligned,
                                       ArrayRef<int64_t>{1});
    SmallVector<SmallVector<int64_t>> positions{{2}};
    for (int64_t i = 0; i < rank; ++i)
      positions.push_back({3, i});
    for (int64_t i = 0; i < rank; ++i)
      positions.push_back({4, i});
    for (auto [position, value] : llvm::zip_equal(positions, d.scalars))
      desc = LLVM::InsertValueOp::create(
          b, loc, desc, LLVM::ConstantOp::create(b, loc, i64, value), position);
    LLVM::ReturnOp::create(b, loc, desc);
    return global;
  }

  /// The address of `global` in `fn`, taken once at the top of its entry
  /// block.
  Value addressIn(LLVM::LLVMFuncOp fn, LLVM::GlobalOp global) {
    Value &address = addresses[{fn, global}];
    if (!address) {
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      address = LLVM::AddressOfOp::create(b, global.getLoc(), global);
    }
    return address;
  }

  std::string freshName(const std::string &base) { return (*names)(base); }

  MLIRContext *ctx = nullptr;
  std::optional<SymbolTable> symbols;
  std::optional<muon::FreshSymbolNames> names;
  std::vector<Wrapper> wrappers;
  llvm::StringMap<Wrapper *> byName;
  llvm::DenseSet<Operation *> rewrote;
  llvm::DenseSet<Operation *> variants;
  llvm::DenseMap<std::pair<Operation *, unsigned>, LLVM::LLVMFuncOp> byMask;
  std::map<decltype(std::declval<ConstantDescriptor>().key()), LLVM::GlobalOp>
      descriptors;
  llvm::DenseMap<std::pair<Operation *, Operation *>, Value> addresses;
};

} // namespace
