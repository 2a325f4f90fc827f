//===- RollCallRuns.cpp - Runs of calls as a loop over a table ------------===//
//
// Why: a large step's glue is mostly runs of calls to one function that
// differ only in their arguments: an argument check per entry argument,
// an item per piece of a batched collective. The JIT's fast instruction
// selector pays for every call and every argument; a 405B step made 2,646
// checks and 4,390 batch items, 43% of its calls. A run becomes one call of
// a small loop that reads each call's arguments from a table: constants
// (shapes, ranks, the addresses of constant globals, and the element
// offsets of buffers inside one allocation) from a constant global, values
// known only at run time (other buffer descriptors) from a stack slot the
// run fills with one store each. The callee is called with the
// same arguments in the same order as before; only how the code that
// passes them is laid out changes.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/EraseDead.h"
#include "muon/Support/FreshSymbolNames.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace muon {
#define GEN_PASS_DEF_MUONROLLCALLRUNS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// Where each argument of a run's calls comes from in its loop.
enum class Source : char {
  Integer, // an integer constant in every call: a column of the table
  Address, // a global's address in every call: a column of the table
           // indexing the run's list of addresses
  Shared,  // the same value in every call: an argument of the loop
  Offset,  // one base pointer, or a constant element offset from it, in
           // every call: the base is an argument of the loop and the
           // offset a column of the table
  Stored,  // anything else: the stack slot the run fills
};

/// A pointer as (base, constant element index, element type): a GEP with
/// one constant index gives its base, index and element type; any other
/// value (a GEP with several indices or a dynamic one included) is its own
/// base, at index 0, with a null element type.
struct PointerOffset {
  Value base;
  int64_t index = 0;
  Type element;
};

PointerOffset pointerOffset(Value v) {
  auto gep = v.getDefiningOp<LLVM::GEPOp>();
  if (!gep || !gep.getDynamicIndices().empty() ||
      gep.getRawConstantIndices().size() != 1 ||
      gep.getRawConstantIndices()[0] == LLVM::GEPOp::kDynamicIndex ||
      gep.getBase().getType() != v.getType())
    return {v, 0, Type()};
  return {gep.getBase(), gep.getRawConstantIndices()[0], gep.getElemType()};
}

/// The element type of a run's offsets from one base in argument `i`, or
/// none when they are not such offsets: every call passes the same base or
/// a one-index GEP of it, all GEPs of one element type, at least one GEP.
std::optional<Type> offsetElement(MutableArrayRef<LLVM::CallOp> run,
                                  unsigned i) {
  if (!isa<LLVM::LLVMPointerType>(run.front().getArgOperands()[i].getType()))
    return std::nullopt;
  Value base;
  Type element;
  for (LLVM::CallOp c : run) {
    PointerOffset p = pointerOffset(c.getArgOperands()[i]);
    if (base && p.base != base)
      return std::nullopt;
    base = p.base;
    if (p.element && element && p.element != element)
      return std::nullopt;
    if (p.element)
      element = p.element;
  }
  if (!element)
    return std::nullopt;
  return element;
}

/// The value of an integer constant of at most 64 bits, or none.
std::optional<int64_t> integerConstant(Value v) {
  auto c = v.getDefiningOp<LLVM::ConstantOp>();
  auto type = dyn_cast<IntegerType>(v.getType());
  if (!c || !type || type.getWidth() > 64)
    return std::nullopt;
  auto attr = dyn_cast<IntegerAttr>(c.getValue());
  if (!attr || attr.getValue().getBitWidth() > 64)
    return std::nullopt;
  return attr.getValue().getSExtValue();
}

/// The global (or function) whose address `v` is, or none: only a pointer
/// of the default address space, the type of the list the loop reads it
/// from, and not a thread-local global, whose address differs per thread
/// and is no link-time constant.
std::optional<StringRef> addressConstant(Value v, SymbolTable &symbols) {
  auto address = v.getDefiningOp<LLVM::AddressOfOp>();
  auto type = dyn_cast<LLVM::LLVMPointerType>(v.getType());
  if (!address || !type || type.getAddressSpace() != 0)
    return std::nullopt;
  auto global = symbols.lookup<LLVM::GlobalOp>(address.getGlobalName());
  if (global && global.getThreadLocal_())
    return std::nullopt;
  return address.getGlobalName();
}

/// An op that may sit between two calls of a run: it neither reads nor
/// writes memory (nor allocates it), so the calls may be made after it;
/// and it cannot trap, so making it before a call that would have stopped
/// the program (a failed check) changes nothing either. Division and
/// remainder by zero trap; inline assembly may do anything.
bool isTransparent(Operation *op) {
  return op->getNumRegions() == 0 && !op->hasTrait<OpTrait::IsTerminator>() &&
         !isa<LLVM::SDivOp, LLVM::UDivOp, LLVM::SRemOp, LLVM::URemOp,
              LLVM::InlineAsmOp>(op) &&
         isMemoryEffectFree(op);
}

/// A call a run may hold: a direct call of the C calling convention,
/// without results, bundles, variadic arguments, argument attributes (an
/// attribute such as byval changes how an argument is passed, and the
/// loop's call carries none), a tail-call kind, `convergent`, or alias
/// and access-group metadata, none of which the loop's call could carry.
bool isRollable(LLVM::CallOp call) {
  return call.getCallee() && call.getNumResults() == 0 &&
         !call.getVarCalleeType() && call.getOpBundleOperands().empty() &&
         !call.getArgAttrsAttr() && !call.getResAttrsAttr() &&
         call.getCConv() == LLVM::cconv::CConv::C &&
         call.getTailCallKind() == LLVM::tailcallkind::TailCallKind::None &&
         !call.getConvergent() && !call.getAccessGroupsAttr() &&
         !call.getAliasScopesAttr() && !call.getNoaliasScopesAttr() &&
         !call.getTbaaAttr();
}

/// A callee the loop may call with values it loads: a function of the
/// module that is not an LLVM intrinsic (whose arguments may have to be
/// immediates) and has no parameter that must be one (`llvm.immarg`).
bool takesLoadedArguments(LLVM::LLVMFuncOp callee) {
  if (callee.getSymName().starts_with("llvm."))
    return false;
  for (unsigned i = 0, e = callee.getNumArguments(); i < e; ++i)
    if (callee.getArgAttr(i, "llvm.immarg"))
      return false;
  return true;
}

/// The longest chunk: record indices are 32-bit GEP constants, and a
/// slot of this many records of a few pointers is still a small stack
/// frame.
constexpr int64_t kMaxRunLimit = 1 << 16;

struct MuonRollCallRuns
    : muon::impl::MuonRollCallRunsBase<MuonRollCallRuns> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ctx = &getContext();
    // Nothing from a module this instance ran on before.
    symbols.emplace(module);
    names.emplace(*symbols);
    loops.clear();
    if (minRun < 2 || maxRun < minRun || maxRun > kMaxRunLimit) {
      mlir::emitError(module.getLoc(),
                      "muon-roll-call-runs: min-run must be at least 2 and "
                      "at most max-run, and max-run at most ")
          << kMaxRunLimit << " (got " << static_cast<int64_t>(minRun) << " and "
          << static_cast<int64_t>(maxRun) << ")";
      return signalPassFailure();
    }
    // The module's own functions as they are now: the loops this pass
    // adds are not searched. Kernels keep their calls (they are optimised;
    // a loop would only hide their arguments from the optimiser).
    SmallVector<LLVM::LLVMFuncOp> functions;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && !fn->hasAttr(muon::kKernelAttrName))
        functions.push_back(fn);
    for (LLVM::LLVMFuncOp fn : functions) {
      slots.clear();
      for (Block &block : fn.getBody())
        for (SmallVector<LLVM::CallOp> &run : runsIn(block))
          for (size_t at = 0; at < run.size(); at += maxRun)
            roll(fn, ArrayRef(run).slice(
                         at, std::min<size_t>(maxRun, run.size() - at)));
    }
  }

  /// The runs of `block`: calls of one callee with only transparent ops
  /// between them, at least min-run of them.
  SmallVector<SmallVector<LLVM::CallOp>> runsIn(Block &block) {
    SmallVector<SmallVector<LLVM::CallOp>> runs;
    SmallVector<LLVM::CallOp> current;
    auto close = [&] {
      if (current.size() >= static_cast<size_t>(minRun))
        runs.push_back(std::move(current));
      current.clear();
    };
    for (Operation &op : block) {
      auto call = dyn_cast<LLVM::CallOp>(op);
      if (call && isRollable(call)) {
        if (!current.empty() &&
            (current.front().getCallee() != call.getCallee() ||
             current.front().getArgOperands().getTypes() !=
                 call.getArgOperands().getTypes()))
          close();
        current.push_back(call);
        continue;
      }
      if (!isTransparent(&op))
        close();
    }
    close();
    return runs;
  }

  /// How the loop of `run` gets each argument; `offsetElements` gets the
  /// element type of each Offset argument, in order.
  SmallVector<Source> sourcesOf(MutableArrayRef<LLVM::CallOp> run,
                                SmallVectorImpl<Type> &offsetElements) {
    SmallVector<Source> sources;
    unsigned numArgs = run.front().getArgOperands().size();
    for (unsigned i = 0; i < numArgs; ++i) {
      auto arg = [&](LLVM::CallOp c) { return c.getArgOperands()[i]; };
      if (llvm::all_of(run, [&](LLVM::CallOp c) {
            return integerConstant(arg(c)).has_value();
          }))
        sources.push_back(Source::Integer);
      else if (llvm::all_of(run, [&](LLVM::CallOp c) {
                 return addressConstant(arg(c), *symbols).has_value();
               }))
        sources.push_back(Source::Address);
      else if (llvm::all_of(run, [&](LLVM::CallOp c) {
                 return arg(c) == arg(run.front());
               }))
        sources.push_back(Source::Shared);
      else if (std::optional<Type> element = offsetElement(run, i)) {
        sources.push_back(Source::Offset);
        offsetElements.push_back(*element);
      } else
        sources.push_back(Source::Stored);
    }
    return sources;
  }

  /// Replaces the calls of `chunk` (a piece of a run, at most max-run
  /// calls) by a call of their loop where the last of them was.
  void roll(LLVM::LLVMFuncOp fn, ArrayRef<LLVM::CallOp> chunk) {
    SmallVector<LLVM::CallOp> run(chunk);
    if (run.size() < static_cast<size_t>(minRun))
      return; // a run's short tail stays as it is
    LLVM::CallOp last = run.back();
    StringRef callee = *last.getCallee();
    auto calleeFn = symbols->lookup<LLVM::LLVMFuncOp>(callee);
    if (!calleeFn || !takesLoadedArguments(calleeFn))
      return;
    SmallVector<Type> offsetElements;
    SmallVector<Source> sources = sourcesOf(run, offsetElements);

    // The table: one row per call, one i64 column per constant argument
    // (an address as its index in the run's list of addresses).
    SmallVector<StringRef> addresses;
    llvm::StringMap<int64_t> addressIndex;
    SmallVector<int64_t> rows;
    SmallVector<Type> storedFields;
    for (auto [i, s] : llvm::enumerate(sources))
      if (s == Source::Stored)
        storedFields.push_back(last.getArgOperands()[i].getType());
    int64_t columns = llvm::count_if(sources, [](Source s) {
      return s == Source::Integer || s == Source::Address ||
             s == Source::Offset;
    });
    for (LLVM::CallOp call : run)
      for (auto [i, s] : llvm::enumerate(sources)) {
        Value v = call.getArgOperands()[i];
        if (s == Source::Integer)
          rows.push_back(*integerConstant(v));
        else if (s == Source::Offset)
          rows.push_back(pointerOffset(v).index);
        else if (s == Source::Address) {
          StringRef name = *addressConstant(v, *symbols);
          auto [it, fresh] = addressIndex.try_emplace(name, addresses.size());
          if (fresh)
            addresses.push_back(name);
          rows.push_back(it->second);
        }
      }
    auto storedRecord = LLVM::LLVMStructType::getLiteral(ctx, storedFields);
    LLVM::LLVMFuncOp loop =
        loopOf(last, sources, offsetElements, columns, storedRecord);

    Location loc = last.getLoc();
    OpBuilder b(last);
    Type ptr = LLVM::LLVMPointerType::get(ctx), i64 = IntegerType::get(ctx, 64);
    SmallVector<Value> operands;
    for (auto [i, s] : llvm::enumerate(sources))
      if (s == Source::Shared)
        operands.push_back(last.getArgOperands()[i]);
      else if (s == Source::Offset)
        operands.push_back(pointerOffset(last.getArgOperands()[i]).base);
    operands.push_back(LLVM::ConstantOp::create(
        b, loc, i64, static_cast<int64_t>(run.size())));
    Value null;
    auto addressOrNull = [&](std::optional<LLVM::GlobalOp> global) -> Value {
      if (global)
        return LLVM::AddressOfOp::create(b, loc, *global);
      if (!null)
        null = LLVM::ZeroOp::create(b, loc, ptr);
      return null;
    };
    operands.push_back(addressOrNull(
        columns ? std::optional(tableOf(callee, loc, run.size(), columns, rows))
                : std::nullopt));
    operands.push_back(addressOrNull(
        addresses.empty() ? std::nullopt
                          : std::optional(addressesOf(callee, loc, addresses))));
    if (storedFields.empty()) {
      operands.push_back(addressOrNull(std::nullopt));
    } else {
      Value slot = slotFor(fn, storedRecord, run.size());
      for (auto [n, call] : llvm::enumerate(run)) {
        int32_t field = 0;
        for (auto [i, s] : llvm::enumerate(sources)) {
          if (s != Source::Stored)
            continue;
          Value at = LLVM::GEPOp::create(
              b, loc, ptr, storedRecord, slot,
              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(n), field++});
          LLVM::StoreOp::create(b, loc, call.getArgOperands()[i], at);
        }
      }
      operands.push_back(slot);
    }
    LLVM::CallOp::create(b, loc, loop, operands);

    SmallVector<Operation *> defs;
    for (LLVM::CallOp call : run) {
      for (Value v : call.getArgOperands())
        if (Operation *def = v.getDefiningOp())
          defs.push_back(def);
      call.erase();
    }
    // The constants now in the table, where nothing else uses them.
    muon::eraseDeadDefinitions(defs);
  }

  /// A private constant global of `rows` (count x columns i64), written as
  /// one dense attribute: the translation copies it as it is.
  LLVM::GlobalOp tableOf(StringRef callee, Location loc, int64_t count,
                         int64_t columns, ArrayRef<int64_t> rows) {
    OpBuilder b = OpBuilder::atBlockEnd(getOperation().getBody());
    Type i64 = IntegerType::get(ctx, 64);
    auto type = LLVM::LLVMArrayType::get(LLVM::LLVMArrayType::get(i64, columns),
                                         count);
    auto value = DenseElementsAttr::get(
        RankedTensorType::get({count, columns}, i64), rows);
    auto global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
        freshName((callee + "_run_table").str()), value);
    symbols->insert(global);
    return global;
  }

  /// A private constant global of the addresses of `globals`, in order.
  LLVM::GlobalOp addressesOf(StringRef callee, Location loc,
                             ArrayRef<StringRef> globals) {
    OpBuilder b = OpBuilder::atBlockEnd(getOperation().getBody());
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    auto type = LLVM::LLVMArrayType::get(ptr, globals.size());
    auto global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
        freshName((callee + "_run_addresses").str()), Attribute());
    symbols->insert(global);
    b.createBlock(&global.getInitializerRegion());
    Value list = LLVM::PoisonOp::create(b, loc, type);
    for (auto [n, name] : llvm::enumerate(globals))
      list = LLVM::InsertValueOp::create(
          b, loc, list, LLVM::AddressOfOp::create(b, loc, ptr, name),
          ArrayRef<int64_t>{static_cast<int64_t>(n)});
    LLVM::ReturnOp::create(b, loc, list);
    return global;
  }

  /// The stack slot for `count` records of `record` in `fn`: one per
  /// record type, at the top of the entry block, as long as the longest
  /// chunk that uses it (runs follow one another, and a loop is done with
  /// its records when it returns).
  Value slotFor(LLVM::LLVMFuncOp fn, LLVM::LLVMStructType record,
                int64_t count) {
    LLVM::AllocaOp &slot = slots[record];
    if (!slot) {
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      Location loc = fn.getLoc();
      Type i64 = IntegerType::get(ctx, 64);
      slot = LLVM::AllocaOp::create(
          b, loc, LLVM::LLVMPointerType::get(ctx),
          LLVM::LLVMArrayType::get(record, count),
          LLVM::ConstantOp::create(b, loc, i64, 1),
          /*alignment=*/0); // the record type's preferred alignment
    } else if (cast<LLVM::LLVMArrayType>(slot.getElemType()).getNumElements() <
               static_cast<uint64_t>(count)) {
      slot.setElemType(LLVM::LLVMArrayType::get(record, count));
    }
    return slot;
  }

  /// The loop calling `like`'s callee once per call of a run:
  ///   loop(shared and offset bases..., count, table, addresses, stored)
  /// made once per callee, argument sources and offsets' element types
  /// (`offsetElements`, one per Offset source).
  LLVM::LLVMFuncOp loopOf(LLVM::CallOp like, ArrayRef<Source> sources,
                          ArrayRef<Type> offsetElements, int64_t columns,
                          LLVM::LLVMStructType storedRecord) {
    std::string key = like.getCallee()->str() + "/";
    for (Source s : sources)
      key += static_cast<char>('0' + static_cast<int>(s));
    for (Type t : like.getArgOperands().getTypes()) {
      llvm::raw_string_ostream os(key);
      os << ";" << t;
    }
    for (Type t : offsetElements) {
      llvm::raw_string_ostream os(key);
      os << "/" << t;
    }
    LLVM::LLVMFuncOp &loop = loops[key];
    if (loop)
      return loop;
    Type ptr = LLVM::LLVMPointerType::get(ctx), i64 = IntegerType::get(ctx, 64);
    SmallVector<Type> inputs;
    for (auto [i, s] : llvm::enumerate(sources))
      if (s == Source::Shared || s == Source::Offset)
        inputs.push_back(like.getArgOperands()[i].getType());
    inputs.append({i64, ptr, ptr, ptr});
    auto type =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), inputs);
    OpBuilder b = OpBuilder::atBlockEnd(getOperation().getBody());
    Location loc = like.getLoc();
    loop = LLVM::LLVMFuncOp::create(
        b, loc, freshName(like.getCallee()->str() + "_run"), type,
        LLVM::Linkage::Private);
    symbols->insert(loop);
    Block *entry = loop.addEntryBlock(b);
    unsigned numShared = inputs.size() - 4;
    Value count = entry->getArgument(numShared);
    Value table = entry->getArgument(numShared + 1);
    Value addresses = entry->getArgument(numShared + 2);
    Value stored = entry->getArgument(numShared + 3);
    Region &body = loop.getBody();
    Block *header = b.createBlock(&body, body.end(), {i64}, {loc});
    Block *each = b.createBlock(&body, body.end());
    Block *exit = b.createBlock(&body, body.end());

    b.setInsertionPointToEnd(entry);
    Value zero = LLVM::ConstantOp::create(b, loc, i64, 0);
    LLVM::BrOp::create(b, loc, ValueRange{zero}, header);

    b.setInsertionPointToEnd(header);
    Value i = header->getArgument(0);
    Value more =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, i, count);
    LLVM::CondBrOp::create(b, loc, more, each, ValueRange{}, exit,
                           ValueRange{});

    b.setInsertionPointToEnd(each);
    auto row = LLVM::LLVMArrayType::get(i64, columns);
    SmallVector<Value> args;
    int32_t column = 0, storedField = 0;
    unsigned shared = 0, offset = 0;
    for (auto [n, s] : llvm::enumerate(sources)) {
      Type t = like.getArgOperands()[n].getType();
      switch (s) {
      case Source::Shared:
        args.push_back(entry->getArgument(shared++));
        break;
      case Source::Offset: {
        Value at = LLVM::GEPOp::create(b, loc, ptr, row, table,
                                       ArrayRef<LLVM::GEPArg>{i, column++});
        Value index = LLVM::LoadOp::create(b, loc, i64, at);
        args.push_back(LLVM::GEPOp::create(b, loc, t, offsetElements[offset++],
                                           entry->getArgument(shared++),
                                           ArrayRef<LLVM::GEPArg>{index}));
        break;
      }
      case Source::Integer:
      case Source::Address: {
        Value at = LLVM::GEPOp::create(
            b, loc, ptr, row, table,
            ArrayRef<LLVM::GEPArg>{i, column++});
        Value v = LLVM::LoadOp::create(b, loc, i64, at);
        if (s == Source::Address) {
          Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, addresses,
                                           ArrayRef<LLVM::GEPArg>{v});
          v = LLVM::LoadOp::create(b, loc, ptr, slot);
        } else if (t != i64) {
          v = LLVM::TruncOp::create(b, loc, t, v);
        }
        args.push_back(v);
        break;
      }
      case Source::Stored: {
        Value at = LLVM::GEPOp::create(
            b, loc, ptr, storedRecord, stored,
            ArrayRef<LLVM::GEPArg>{i, storedField++});
        args.push_back(LLVM::LoadOp::create(b, loc, t, at));
        break;
      }
      }
    }
    auto callee = symbols->lookup<LLVM::LLVMFuncOp>(*like.getCallee());
    LLVM::CallOp::create(b, loc, callee, args);
    Value next = LLVM::AddOp::create(
        b, loc, i, LLVM::ConstantOp::create(b, loc, i64, 1));
    LLVM::BrOp::create(b, loc, ValueRange{next}, header);

    b.setInsertionPointToEnd(exit);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return loop;
  }

  std::string freshName(const std::string &base) { return (*names)(base); }

  MLIRContext *ctx = nullptr;
  std::optional<SymbolTable> symbols;
  std::optional<muon::FreshSymbolNames> names;
  std::map<std::string, LLVM::LLVMFuncOp> loops;
  DenseMap<Type, LLVM::AllocaOp> slots;
};

} // namespace
