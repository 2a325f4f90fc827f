//===- AllocateThroughRuntime.cpp - Descriptors the runtime writes ---------===//
//
// Why: every buffer a step allocates is handed to kernels and runtime calls
// as an unranked memref, and the conversion to LLVM builds its descriptor
// field by field: a size computation and an aligned allocation, then, for
// the unranked view, a stack slot and one store per field. For a 2-D
// buffer that is about 25 LLVM operations, and a step allocates seven
// buffers per matrix: most of the operations the JIT compiled. The shape, strides
// and alignment are constants, so one table per distinct layout and one
// runtime call per buffer do the same: the runtime allocates and writes the
// whole descriptor into the slot, which the view then points at.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/RuntimeCalls.h"
#include "muon/Support/BlocksOnCycles.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace muon {
#define GEN_PASS_DEF_MUONALLOCATETHROUGHRUNTIME
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kLayoutPrefix = "__muon_buffer_layout_";

/// Bytes per element where LLVM stores the element type in exactly its
/// width (integers and floats of 8, 16, 32 or 64 bits); none otherwise
/// (i1, i24 and f80 are padded, index follows the data layout).
std::optional<int64_t> elementBytes(Type type) {
  unsigned width = 0;
  if (auto i = dyn_cast<IntegerType>(type))
    width = i.getWidth();
  else if (auto f = dyn_cast<FloatType>(type))
    width = f.getWidth();
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return std::nullopt;
  return width / 8;
}

/// The table muon_rt_buffer_alloc reads for an allocation of `alloc`:
/// {rank, bytes, alignment, sizes..., strides...}, or none when the pass
/// leaves it to the conversion.
std::optional<SmallVector<int64_t>> layoutOf(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  if (Attribute space = type.getMemorySpace()) {
    auto number = dyn_cast<IntegerAttr>(space);
    if (!number || number.getInt() != 0)
      return std::nullopt;
  }
  std::optional<uint64_t> alignment = alloc.getAlignment();
  std::optional<int64_t> bytes = elementBytes(type.getElementType());
  if (!alignment || !llvm::isPowerOf2_64(*alignment) ||
      *alignment > static_cast<uint64_t>(INT64_MAX) || !bytes)
    return std::nullopt;
  // Identity strides as the conversion writes them: running products of
  // the sizes (getStridesAndOffset calls the stride before a size-0
  // dimension dynamic).
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    if (llvm::MulOverflow(strides[d + 1], shape[d + 1], strides[d]))
      return std::nullopt;
  int64_t total = *bytes;
  for (int64_t size : shape)
    if (llvm::MulOverflow(total, size, total))
      return std::nullopt;
  SmallVector<int64_t> layout = {type.getRank(), total,
                                 static_cast<int64_t>(*alignment)};
  llvm::append_range(layout, shape);
  llvm::append_range(layout, strides);
  return layout;
}

/// Whether every user of `alloc` is an unranked view of it or frees it,
/// with at least one view (a buffer never passed on gains nothing).
bool onlyViewedAndFreed(memref::AllocOp alloc) {
  bool viewed = false;
  for (Operation *user : alloc->getUsers()) {
    if (auto cast = dyn_cast<memref::CastOp>(user);
        cast && isa<UnrankedMemRefType>(cast.getType())) {
      viewed = true;
      continue;
    }
    if (!isa<memref::DeallocOp>(user))
      return false;
  }
  return viewed;
}

/// Whether descriptors are laid out in 64-bit words: index (offset, sizes,
/// strides) and pointers of 64 bits, in the data layout and in the LLVM
/// data layout string the conversion follows.
bool descriptorsOf64BitWords(ModuleOp module) {
  DataLayout layout(module);
  MLIRContext *ctx = module.getContext();
  if (layout.getTypeSizeInBits(IndexType::get(ctx)) != 64 ||
      layout.getTypeSizeInBits(LLVM::LLVMPointerType::get(ctx)) != 64)
    return false;
  if (auto text = module->getAttrOfType<StringAttr>(
          LLVM::LLVMDialect::getDataLayoutAttrName())) {
    llvm::Expected<llvm::DataLayout> parsed =
        llvm::DataLayout::parse(text.getValue());
    if (!parsed) {
      // Reported by the conversion, which reads the same string.
      llvm::consumeError(parsed.takeError());
      return false;
    }
    return parsed->getPointerSizeInBits(0) == 64;
  }
  return true;
}

struct MuonAllocateThroughRuntime
    : muon::impl::MuonAllocateThroughRuntimeBase<MuonAllocateThroughRuntime> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!descriptorsOf64BitWords(module))
      return;
    // The descriptor structs the conversion will use (the slots' types).
    LLVMTypeConverter converter(&getContext(),
                                LowerToLLVMOptions(&getContext(),
                                                   DataLayout(module)));
    muon::RuntimeCalls runtime(module);
    // One global per distinct layout table and module.
    llvm::DenseMap<std::pair<Operation *, Attribute>, LLVM::GlobalOp> tables;
    int64_t nextTable = 0;
    auto tableFor = [&](ModuleOp into, ArrayRef<int64_t> values) {
      auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                        IntegerType::get(&getContext(), 64));
      Attribute value = DenseElementsAttr::get(type, values);
      LLVM::GlobalOp &global = tables[{into.getOperation(), value}];
      if (!global) {
        std::string name;
        do
          name = (kLayoutPrefix + llvm::Twine(nextTable++)).str();
        while (into.lookupSymbol(name));
        OpBuilder b = OpBuilder::atBlockBegin(into.getBody());
        global = LLVM::GlobalOp::create(
            b, into.getLoc(),
            LLVM::LLVMArrayType::get(type.getElementType(), values.size()),
            /*isConstant=*/true, LLVM::Linkage::Private, name, value);
      }
      return global;
    };

    module.walk([&](func::FuncOp fn) {
      // Functions of another symbol table (a gpu.module) are device code,
      // which calls no host runtime and could not see the tables.
      if (fn.isExternal() || !isa<ModuleOp>(fn->getParentOp()))
        return;
      Region &body = fn.getBody();
      llvm::SmallPtrSet<Block *, 16> cyclic = muon::blocksOnCycles(body);
      // Only ops of the function's own blocks: a nested region may be
      // isolated or run more than once.
      SmallVector<memref::AllocOp> allocs;
      for (Block &block : body)
        if (!cyclic.contains(&block))
          for (auto alloc : block.getOps<memref::AllocOp>())
            allocs.push_back(alloc);
      auto into = fn->getParentOfType<ModuleOp>();
      EntryValues entry(body.front());
      for (memref::AllocOp alloc : allocs) {
        std::optional<SmallVector<int64_t>> layout = layoutOf(alloc);
        if (!layout || !onlyViewedAndFreed(alloc))
          continue;
        rewrite(alloc, tableFor(into, *layout),
                converter.convertType(alloc.getType()), entry, runtime);
      }
    });
    if (runtime.failed())
      signalPassFailure();
  }

  /// Values made once per function, at the top of its entry block: the
  /// stack slots (a block off every cycle runs once, so its slot may be
  /// static, which is also what the JIT's fast instruction selector
  /// takes), and the constants and table addresses the calls share.
  struct EntryValues {
    explicit EntryValues(Block &entry)
        : entry(entry), b(entry.getParent()->getContext()),
          loc(entry.getParent()->getLoc()),
          i64(IntegerType::get(b.getContext(), 64)),
          ptr(LLVM::LLVMPointerType::get(b.getContext())) {}
    Value constant(int64_t v) {
      Value &c = constants[v];
      if (!c)
        c = place(LLVM::ConstantOp::create(builder(), loc, i64, v));
      return c;
    }
    Value address(LLVM::GlobalOp global) {
      Value &a = addresses[global];
      if (!a)
        a = place(LLVM::AddressOfOp::create(builder(), loc, global));
      return a;
    }
    Value slot(Type descriptor) {
      Value size = constant(1);
      return place(
          LLVM::AllocaOp::create(builder(), loc, ptr, descriptor, size));
    }

    /// The values made here stay a prefix of the entry block, in the order
    /// made (each after those it uses); the block's other ops may be
    /// rewritten or erased meanwhile.
    OpBuilder &builder() {
      if (last)
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointToStart(&entry);
      return b;
    }
    Value place(Operation *op) {
      last = op;
      return op->getResult(0);
    }

    Block &entry;
    OpBuilder b;
    Location loc;
    Type i64, ptr;
    Operation *last = nullptr;
    llvm::DenseMap<int64_t, Value> constants;
    llvm::DenseMap<Operation *, Value> addresses;
  };

  static void rewrite(memref::AllocOp alloc, LLVM::GlobalOp table,
                      Type descriptor, EntryValues &entry,
                      muon::RuntimeCalls &runtime) {
    Location loc = alloc.getLoc();
    int64_t rank = alloc.getType().getRank();
    Value slot = entry.slot(descriptor);
    OpBuilder b(alloc);
    runtime.call(b, loc, muon::RuntimeFn::muon_rt_buffer_alloc,
                 {slot, entry.address(table)});

    // The unranked descriptor {rank, slot}, as the conversion builds one.
    Type unrankedType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {entry.i64, entry.ptr});
    Value view = LLVM::PoisonOp::create(b, loc, unrankedType);
    view = LLVM::InsertValueOp::create(b, loc, view, entry.constant(rank),
                                       ArrayRef<int64_t>{0});
    view = LLVM::InsertValueOp::create(b, loc, view, slot,
                                       ArrayRef<int64_t>{1});

    Type viewType;
    Value asMemRef;
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
      if (auto cast = dyn_cast<memref::CastOp>(user)) {
        if (cast.getType() != viewType) {
          viewType = cast.getType();
          asMemRef = UnrealizedConversionCastOp::create(b, loc, viewType, view)
                         .getResult(0);
        }
        cast.replaceAllUsesWith(asMemRef);
        cast.erase();
        continue;
      }
      OpBuilder at(user);
      runtime.call(at, user->getLoc(), muon::RuntimeFn::muon_rt_buffer_free,
                   {slot});
      user->erase();
    }
    alloc.erase();
  }
};

} // namespace
