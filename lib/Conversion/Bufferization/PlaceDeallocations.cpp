//===- PlaceDeallocations.cpp - Free buffers after their last use ---------===//
//
// MLIR's ownership-based deallocation frees a block's buffers at the end of
// the block: in a step's entry function (one block, every parameter's
// gathers and Newton-Schulz inline) every gathered matrix stayed allocated
// until the step returned, and the pipeline's simplification compares the
// buffers pairwise. Generated step code has a simple structure -- buffers
// are `memref.alloc`s or results of participation `scf.if`s whose branches
// each allocate their own -- so this pass frees each one after its last use
// in one walk over what is derived from it, and hands each function of
// another structure to the upstream pipeline, which handles every
// structure (the other functions' bodies are set aside meanwhile: upstream's
// pass refuses a function that already frees buffers).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/RuntimeCalls.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace muon {
#define GEN_PASS_DEF_MUONPLACEDEALLOCATIONS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// The upstream pipeline, for functions this pass does not take.
void buildFallback(OpPassManager &pm) {
  bufferization::buildBufferDeallocationPipeline(pm);
}

/// Where one buffer is freed: after `after`, in the buffer's block; when
/// `condition` is set, only if it holds (`negate`: only if it does not).
struct Placement {
  Value buffer;
  Operation *after;
  Value condition = {};
  bool negate = false;
};

class Lifetimes {
public:
  explicit Lifetimes(MLIRContext *ctx)
      : batchBegin(
            muon::runtimeSignature(ctx, muon::RuntimeFn::muon_rt_batch_begin)
                .name) {}

  /// Computes a placement for every buffer of `func`; false when the
  /// function has a structure the rules below do not cover.
  bool analyse(func::FuncOp func, SmallVectorImpl<Placement> &out);

private:
  bool isFresh(Value v);
  /// Whether `region` of an `scf.if` yields, at `index`, a fresh buffer of
  /// its own (which the `scf.if` result then owns).
  bool yieldsOwn(Region &region, unsigned index);
  /// The buffers of the branches that `scf.if` result `v` owns.
  void constituents(Value v, SmallVectorImpl<Value> &out);
  bool place(Placement root, SmallVectorImpl<Placement> &out);
  /// The last op of `scope` that uses what is derived from `roots`,
  /// starting from `last` (which may be null); null when something leaves
  /// `scope` (or nothing uses them and `last` is null).
  /// `shareHandles`: a batch handle's uses are taken from `handleLast`.
  Operation *lastUse(ArrayRef<Value> roots, Block *scope, Operation *last,
                     bool shareHandles);
  /// Whether `v` is a batch handle (`muon_rt_batch_begin`'s result): a call
  /// that takes a buffer and a handle registers the buffer in the batch,
  /// which moves it when the batch ends, so the handle's uses belong to the
  /// buffer.
  bool isBatchHandle(Value v) const {
    auto call = v.getDefiningOp<func::CallOp>();
    return call && call.getCallee() == batchBegin;
  }

  StringRef batchBegin;
  /// Per batch handle and block: the last use of what derives from the
  /// handle (null: it leaves the block).
  DenseMap<std::pair<Value, Block *>, Operation *> handleLast;
  DenseMap<Value, bool> fresh;
  DenseSet<Value> isConstituent;
  /// Per `scf.yield`: how many of its operands are views of each buffer
  /// (counted once, not once per operand: a batch's branch yields many).
  DenseMap<Operation *, DenseMap<Value, unsigned>> yieldedViews;
};

/// A buffer this function allocated and nothing else refers to: a
/// `memref.alloc`, or an `scf.if` result each of whose branches yields
/// (once) a fresh buffer defined in that branch.
bool Lifetimes::isFresh(Value v) {
  auto it = fresh.find(v);
  if (it != fresh.end())
    return it->second;
  bool result = false;
  if (v.getDefiningOp<memref::AllocOp>()) {
    result = true;
  } else if (auto ifOp = v.getDefiningOp<scf::IfOp>();
             ifOp && !ifOp.getElseRegion().empty() &&
             isa<BaseMemRefType>(v.getType())) {
    unsigned index = cast<OpResult>(v).getResultNumber();
    result = yieldsOwn(ifOp.getThenRegion(), index) &&
             yieldsOwn(ifOp.getElseRegion(), index);
  }
  fresh[v] = result;
  return result;
}

/// The buffer `v` is a view of (a cast, reshape or subview: each keeps the
/// buffer's allocated pointer, which is what is freed).
Value stripViews(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

bool Lifetimes::yieldsOwn(Region &region, unsigned index) {
  if (region.empty())
    return false;
  Operation *yield = region.front().getTerminator();
  Value y = stripViews(yield->getOperand(index));
  auto [it, first] = yieldedViews.try_emplace(yield);
  if (first)
    for (Value o : yield->getOperands())
      ++it->second[stripViews(o)];
  return y.getParentBlock() == &region.front() && it->second.lookup(y) == 1 &&
         isFresh(y);
}

void Lifetimes::constituents(Value v, SmallVectorImpl<Value> &out) {
  auto ifOp = v.getDefiningOp<scf::IfOp>();
  if (!ifOp)
    return;
  unsigned index = cast<OpResult>(v).getResultNumber();
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    if (!yieldsOwn(*region, index))
      continue;
    Value y = stripViews(region->front().getTerminator()->getOperand(index));
    out.push_back(y);
    constituents(y, out);
  }
}

Operation *Lifetimes::lastUse(ArrayRef<Value> roots, Block *scope,
                               Operation *last, bool shareHandles) {
  SmallVector<Value> worklist(roots.begin(), roots.end());
  DenseSet<Value> seen(worklist.begin(), worklist.end());
  auto add = [&](Value v) {
    if (seen.insert(v).second)
      worklist.push_back(v);
  };
  auto later = [&](Operation *op) {
    if (!last || last->isBeforeInBlock(op))
      last = op;
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      Operation *inScope = scope->findAncestorOpInBlock(*user);
      // Used outside its block, or leaving it through the terminator
      // (returned, yielded out of a loop or a branch): not ours.
      if (!inScope || inScope == scope->getTerminator())
        return nullptr;
      later(inScope);
      if (user->hasTrait<OpTrait::IsTerminator>()) {
        // A branch yields it: the parent's result carries it on.
        auto ifOp = dyn_cast<scf::IfOp>(user->getParentOp());
        if (!ifOp || !isa<scf::YieldOp>(user))
          return nullptr;
        add(ifOp.getResult(use.getOperandNumber()));
        continue;
      }
      // Views, requests of non-blocking calls, anything computed from it.
      for (Value result : user->getResults())
        add(result);
      if (!isa<func::CallOp>(user))
        continue;
      for (Value operand : user->getOperands()) {
        if (!isBatchHandle(operand))
          continue;
        if (!shareHandles) {
          add(operand);
          continue;
        }
        // Every buffer of a batch reaches its handle, and the handle's
        // uses are the same for each: followed once per handle and block
        // (a batch holds many buffers).
        auto [it, fresh] = handleLast.try_emplace({operand, scope}, nullptr);
        if (fresh)
          it->second = lastUse({operand}, scope, /*last=*/nullptr,
                               /*shareHandles=*/false);
        if (!it->second)
          return nullptr;
        later(it->second);
      }
    }
  }
  return last;
}

bool Lifetimes::place(Placement placement, SmallVectorImpl<Placement> &out) {
  Value root = placement.buffer;
  SmallVector<Value> roots{root};
  constituents(root, roots);
  Operation *last = lastUse(roots, root.getParentBlock(), root.getDefiningOp(),
                            /*shareHandles=*/true);
  if (!last)
    return false;
  placement.after = last;
  out.push_back(placement);
  return true;
}

bool Lifetimes::analyse(func::FuncOp func, SmallVectorImpl<Placement> &out) {
  SmallVector<Placement> buffers;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<memref::DeallocOp, bufferization::DeallocOp>(op))
      return WalkResult::interrupt();
    if (isa<memref::AllocOp>(op)) {
      buffers.push_back({op->getResult(0), nullptr});
      return WalkResult::advance();
    }
    bool memrefResult = llvm::any_of(
        op->getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); });
    if (!memrefResult)
      return WalkResult::advance();
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      // A result owns the buffer of each branch that yields its own; when
      // only one branch does (the other yields a buffer from outside, as a
      // rank that takes no part does), it is freed on that branch's
      // condition.
      for (Value r : ifOp.getResults()) {
        if (!isa<BaseMemRefType>(r.getType()))
          continue;
        unsigned i = cast<OpResult>(r).getResultNumber();
        bool thenOwns = yieldsOwn(ifOp.getThenRegion(), i);
        bool elseOwns = yieldsOwn(ifOp.getElseRegion(), i);
        if (thenOwns || elseOwns)
          buffers.push_back(
              {r, nullptr, thenOwns && elseOwns ? Value() : ifOp.getCondition(),
               !thenOwns});
      }
      return WalkResult::advance();
    }
    // Any other op returning a buffer must say it does not allocate one
    // on the heap (views, casts, globals, stack buffers).
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || op->getNumRegions() != 0)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &e : list)
      if (isa<MemoryEffects::Allocate>(e.getEffect()) &&
          e.getResource() == SideEffects::DefaultResource::get())
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return false;
  // A buffer a parent `scf.if` result takes over is freed through it.
  for (const Placement &b : buffers) {
    SmallVector<Value> parts;
    constituents(b.buffer, parts);
    isConstituent.insert(parts.begin(), parts.end());
  }
  for (const Placement &b : buffers)
    if (!isConstituent.contains(b.buffer) && !place(b, out))
      return false;
  return true;
}

/// CSE merges identical `tensor.empty`s, so a branch that yields
/// placeholders (a rank that takes no part) may yield one uninitialised
/// buffer at several positions. Each extra position gets its own buffer,
/// so that every result of the `scf.if` owns one and is freed once.
void splitSharedPlaceholders(func::FuncOp func) {
  func.walk([](scf::YieldOp yield) {
    if (!isa<scf::IfOp>(yield->getParentOp()))
      return;
    DenseSet<Value> yielded;
    for (OpOperand &operand : yield->getOpOperands()) {
      Value v = operand.get();
      auto alloc = v.getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != yield->getBlock() ||
          yielded.insert(v).second)
        continue;
      bool onlyYielded = llvm::all_of(v.getUsers(), [&](Operation *user) {
        return user == yield.getOperation();
      });
      if (!onlyYielded)
        continue;
      OpBuilder b(yield);
      operand.set(b.clone(*alloc)->getResult(0));
    }
  });
}

struct MuonPlaceDeallocations
    : muon::impl::MuonPlaceDeallocationsBase<MuonPlaceDeallocations> {
  void getDependentDialects(DialectRegistry &registry) const override {
    MuonPlaceDeallocationsBase::getDependentDialects(registry);
    OpPassManager fallback(ModuleOp::getOperationName());
    buildFallback(fallback);
    fallback.getDependentDialects(registry);
  }

  /// Runs the upstream pipeline on `module` with the bodies of `hidden`
  /// set aside (each a private declaration meanwhile): it frees the
  /// buffers of the other functions, and `hidden` keep what this pass
  /// gives them.
  LogicalResult runFallback(ModuleOp module, ArrayRef<func::FuncOp> hidden) {
    struct SetAside {
      func::FuncOp func;
      func::FuncOp holder;
      SymbolTable::Visibility visibility;
    };
    SmallVector<SetAside> aside;
    for (func::FuncOp f : hidden) {
      auto holder =
          func::FuncOp::create(f.getLoc(), f.getName(), f.getFunctionType());
      holder.getBody().takeBody(f.getBody());
      aside.push_back({f, holder, f.getVisibility()});
      f.setVisibility(SymbolTable::Visibility::Private);
    }
    OpPassManager fallback(ModuleOp::getOperationName());
    buildFallback(fallback);
    LogicalResult result = runPipeline(fallback, module);
    for (SetAside &a : aside) {
      a.func.getBody().takeBody(a.holder.getBody());
      a.func.setVisibility(a.visibility);
      a.holder.erase();
    }
    return result;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The functions this pass takes, each with its placements.
    SmallVector<std::pair<func::FuncOp, SmallVector<Placement>>> taken;
    bool others = false, nested = false;
    for (Operation &op : module.getBody()->getOperations()) {
      auto func = dyn_cast<func::FuncOp>(op);
      if (!func) {
        // Functions of nested modules are left to the upstream pipeline,
        // with the whole module.
        nested = nested ||
                 (op.getNumRegions() != 0 && op.walk([](func::FuncOp) {
                                                 return WalkResult::interrupt();
                                               }).wasInterrupted());
        continue;
      }
      if (func.isExternal())
        continue;
      splitSharedPlaceholders(func);
      SmallVector<Placement> placements;
      if (Lifetimes(&getContext()).analyse(func, placements))
        taken.push_back({func, std::move(placements)});
      else
        others = true;
    }
    if (nested)
      taken.clear();
    if (others || nested) {
      // Upstream's function boundary: a caller owns what a call returns.
      // A function taken here may return a buffer it does not own (a view
      // of an argument), so beside upstream's functions one that returns a
      // buffer goes to upstream too, which returns one the caller owns.
      llvm::erase_if(taken, [](auto &entry) {
        return llvm::any_of(entry.first.getResultTypes(),
                            [](Type t) { return isa<BaseMemRefType>(t); });
      });
      SmallVector<func::FuncOp> hidden;
      for (auto &entry : taken)
        hidden.push_back(entry.first);
      if (failed(runFallback(module, hidden)))
        return signalPassFailure();
    }
    for (auto &entry : taken)
      place(entry.second);
  }

  /// Frees each buffer where its placement says.
  static void place(ArrayRef<Placement> placements) {
    for (const Placement &p : placements) {
      OpBuilder b(p.after->getContext());
      b.setInsertionPointAfter(p.after);
      Location loc = p.buffer.getLoc();
      if (p.condition) {
        auto guard = scf::IfOp::create(b, loc, p.condition,
                                       /*withElseRegion=*/p.negate);
        b.setInsertionPointToStart(p.negate ? guard.elseBlock()
                                            : guard.thenBlock());
      }
      // A view's base buffer is what was allocated.
      Value buffer = p.buffer;
      if (!buffer.getDefiningOp<memref::AllocOp>())
        buffer = memref::ExtractStridedMetadataOp::create(b, loc, buffer)
                     .getBaseBuffer();
      memref::DeallocOp::create(b, loc, buffer);
    }
  }
};

} // namespace
