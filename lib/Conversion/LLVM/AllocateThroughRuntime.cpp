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

/// The table muon_rt_buffers_alloc reads for an allocation of `alloc`:
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
  /// What the grouping may move allocations and frees over, beside pure
  /// ops: calls of the step's kernels (which neither allocate nor free),
  /// and, for frees, waits (a request's completion only releases its
  /// staging).
  struct Movable {
    llvm::DenseSet<StringAttr> kernels;
    StringAttr wait;

    /// Whether a later allocation may move up over `op`.
    bool allocationOver(Operation &op) const {
      if (auto call = dyn_cast<func::CallOp>(op))
        return kernels.contains(call.getCalleeAttr().getAttr());
      return pure(op);
    }
    /// Whether an earlier free may move down over `op`.
    bool freeOver(Operation &op) const {
      if (auto call = dyn_cast<func::CallOp>(op))
        return call.getCalleeAttr().getAttr() == wait;
      return pure(op);
    }
    static bool pure(Operation &op) {
      return op.getNumRegions() == 0 &&
             (isa<memref::CastOp>(op) || isMemoryEffectFree(&op));
    }
  };

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
    /// The address `offset` 64-bit words into `table`.
    Value offset(Value table, int64_t words) {
      if (words == 0)
        return table;
      Value &a = offsets[{table, words}];
      if (!a)
        a = place(LLVM::GEPOp::create(builder(), loc, ptr, i64, table,
                                      ArrayRef<LLVM::GEPArg>{
                                          static_cast<int32_t>(words)}));
      return a;
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
    llvm::DenseMap<std::pair<Value, int64_t>, Value> offsets;
  };


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

    Movable movable;
    movable.wait = StringAttr::get(
        &getContext(),
        muon::runtimeSignature(&getContext(), muon::RuntimeFn::muon_rt_wait)
            .name);
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(muon::kKernelAttrName))
        movable.kernels.insert(fn.getSymNameAttr());
    module.walk([&](func::FuncOp fn) {
      // Functions of another symbol table (a gpu.module) are device code,
      // which calls no host runtime and could not see the tables.
      if (fn.isExternal() || !isa<ModuleOp>(fn->getParentOp()))
        return;
      Region &body = fn.getBody();
      llvm::SmallPtrSet<Block *, 16> cyclic = muon::blocksOnCycles(body);
      auto into = fn->getParentOfType<ModuleOp>();
      EntryValues entry(body.front());
      // Only ops of the function's own blocks: a nested region may be
      // isolated or run more than once.
      llvm::DenseMap<Operation *, Member> members;
      for (Block &block : body) {
        if (cyclic.contains(&block))
          continue;
        for (SmallVector<Candidate> &group : groupsOf(block, movable)) {
          SmallVector<int64_t> layouts;
          for (Candidate &c : group)
            llvm::append_range(layouts, c.layout);
          allocateGroup(group, tableFor(into, layouts),
                        converter.convertType(group.front().alloc.getType()),
                        entry, runtime, members);
        }
      }
      for (Block &block : body)
        if (!cyclic.contains(&block))
          freeRuns(block, members, movable, entry, runtime);
      // Frees elsewhere (in a nested region, in a block on a cycle): one
      // call each.
      for (auto &[op, m] : members) {
        auto alloc = cast<memref::AllocOp>(op);
        for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
          OpBuilder b(user);
          runtime.call(b, user->getLoc(), muon::RuntimeFn::muon_rt_buffers_free,
                       {m.slot, m.layout, entry.constant(1)});
          user->erase();
        }
        alloc.erase();
      }
    });
    if (runtime.failed())
      signalPassFailure();
  }

  /// A buffer the runtime allocates: its alloc and layout table.
  struct Candidate {
    memref::AllocOp alloc;
    SmallVector<int64_t> layout;
  };
  /// Where an allocated buffer's descriptor lies: its group's storage,
  /// its index there, and the address of its own layout table.
  struct Member {
    Value storage;
    int64_t index;
    Value slot, layout;
  };

  /// The runtime's buffers of `block`, in groups that one call allocates
  /// where the first was: a group's later allocations move up over ops
  /// that neither free nor allocate (pure ops and the step's kernels),
  /// which leaves the peak of the memory held unchanged (between the
  /// first and the last allocation of a group nothing is freed).
  static SmallVector<SmallVector<Candidate>> groupsOf(Block &block,
                                                      const Movable &movable) {
    SmallVector<SmallVector<Candidate>> groups;
    bool open = false;
    for (Operation &op : block) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        std::optional<SmallVector<int64_t>> layout = layoutOf(alloc);
        if (layout && onlyViewedAndFreed(alloc)) {
          if (!open)
            groups.emplace_back();
          groups.back().push_back({alloc, std::move(*layout)});
          open = true;
          continue;
        }
        // Another allocation: the group's may move over it.
        continue;
      }
      if (!movable.allocationOver(op))
        open = false;
    }
    return groups;
  }

  /// One runtime call allocates `group` where its first buffer was: the
  /// descriptors lie one after the other in one stack slot, read with
  /// `layouts` (the members' tables one after the other). The slot is an
  /// array of 64-bit words, each descriptor's address an offset into it:
  /// a struct of the descriptors would be the same bytes, but every
  /// address of a member would name the whole struct type, which for a
  /// group of hundreds of buffers is tens of kilobytes of text per GEP.
  static void allocateGroup(MutableArrayRef<Candidate> group,
                            LLVM::GlobalOp layouts, Type firstDescriptor,
                            EntryValues &entry, muon::RuntimeCalls &runtime,
                            llvm::DenseMap<Operation *, Member> &members) {
    memref::AllocOp first = group.front().alloc;
    Location loc = first.getLoc();
    MLIRContext *ctx = first.getContext();
    // { allocated, aligned, offset, sizes[rank], strides[rank] }, every
    // field a 64-bit word (descriptorsOf64BitWords).
    auto wordsOf = [](memref::AllocOp alloc) {
      return 3 + 2 * alloc.getType().getRank();
    };
    int64_t words = 0;
    for (Candidate &c : group)
      words += wordsOf(c.alloc);
    // A group of one is its descriptor's slot.
    Value storage = entry.slot(
        group.size() == 1 ? firstDescriptor
                          : LLVM::LLVMArrayType::get(
                                entry.i64, static_cast<unsigned>(words)));
    Value table = entry.address(layouts);
    OpBuilder b(first);
    runtime.call(b, loc, muon::RuntimeFn::muon_rt_buffers_alloc,
                 {storage, table,
                  entry.constant(static_cast<int64_t>(group.size()))});
    int64_t offset = 0, at = 0;
    for (auto [i, c] : llvm::enumerate(group)) {
      Value slot = entry.offset(storage, at);
      at += wordsOf(c.alloc);
      Value layout = entry.offset(table, offset);
      offset += static_cast<int64_t>(c.layout.size());
      members[c.alloc] = {storage, static_cast<int64_t>(i), slot, layout};
      // The unranked descriptor {rank, slot}, as the conversion builds one.
      Type unrankedType =
          LLVM::LLVMStructType::getLiteral(ctx, {entry.i64, entry.ptr});
      Value view = LLVM::PoisonOp::create(b, loc, unrankedType);
      view = LLVM::InsertValueOp::create(
          b, loc, view, entry.constant(c.alloc.getType().getRank()),
          ArrayRef<int64_t>{0});
      view = LLVM::InsertValueOp::create(b, loc, view, slot,
                                         ArrayRef<int64_t>{1});
      Type viewType;
      Value asMemRef;
      for (Operation *user : llvm::make_early_inc_range(c.alloc->getUsers())) {
        auto cast = dyn_cast<memref::CastOp>(user);
        if (!cast)
          continue; // a dealloc: freeRuns
        if (cast.getType() != viewType) {
          viewType = cast.getType();
          asMemRef = UnrealizedConversionCastOp::create(b, loc, viewType, view)
                         .getResult(0);
        }
        cast.replaceAllUsesWith(asMemRef);
        cast.erase();
      }
    }
  }

  /// The frees of `block`'s runtime buffers, in runs of frees with nothing
  /// between them that allocates: a run frees each stretch of one group's
  /// descriptors (consecutive indices) with one call, where its last free
  /// was.
  static void freeRuns(Block &block,
                       llvm::DenseMap<Operation *, Member> &members,
                       const Movable &movable, EntryValues &entry,
                       muon::RuntimeCalls &runtime) {
    SmallVector<memref::DeallocOp> run;
    auto flush = [&] {
      if (run.empty())
        return;
      SmallVector<std::pair<Member, memref::AllocOp>> freed;
      for (memref::DeallocOp d : run) {
        auto alloc = d.getMemref().getDefiningOp<memref::AllocOp>();
        freed.push_back({members.lookup(alloc), alloc});
      }
      // By group (in order of first appearance), then index.
      llvm::DenseMap<Value, unsigned> groupOrder;
      for (auto &[m, alloc] : freed)
        groupOrder.try_emplace(m.storage, groupOrder.size());
      llvm::stable_sort(freed, [&](auto &x, auto &y) {
        unsigned gx = groupOrder.lookup(x.first.storage),
                 gy = groupOrder.lookup(y.first.storage);
        return gx != gy ? gx < gy : x.first.index < y.first.index;
      });
      OpBuilder b(run.back());
      b.setInsertionPointAfter(run.back());
      Location loc = run.back().getLoc();
      for (size_t i = 0; i < freed.size();) {
        size_t j = i + 1;
        while (j < freed.size() && freed[j].first.storage == freed[i].first.storage &&
               freed[j].first.index == freed[j - 1].first.index + 1)
          ++j;
        runtime.call(b, loc, muon::RuntimeFn::muon_rt_buffers_free,
                     {freed[i].first.slot, freed[i].first.layout,
                      entry.constant(static_cast<int64_t>(j - i))});
        i = j;
      }
      for (memref::DeallocOp d : run)
        d.erase();
      run.clear();
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto d = dyn_cast<memref::DeallocOp>(op)) {
        auto alloc = d.getMemref().getDefiningOp<memref::AllocOp>();
        if (alloc && members.count(alloc)) {
          run.push_back(d);
          continue;
        }
      }
      if (!movable.freeOver(op))
        flush();
    }
    flush();
  }

};

} // namespace
