//===- ScalariseAggregates.cpp - Descriptors as scalars across blocks -----===//
//
// Why: the JIT compiles a step's glue with LLVM's fast instruction
// selector, which handles scalars only. A memref descriptor (a struct) that
// flows into a block as an argument becomes an aggregate PHI, which the fast
// selector refuses at the predecessor's branch; LLVM then selects that
// predecessor's whole block with SelectionDAG, whose cost grows faster than
// the block. A step's blocks hold tens of thousands of instructions (each
// participation `scf.if` yields descriptors), so on a 405B step 85% of the
// JIT was instruction selection. A whole-struct store (a descriptor put in
// a stack slot for an unranked runtime argument) is refused the same way,
// one instruction at a time.
//
// The rewrite: a struct or array block argument becomes one argument per
// scalar field (predecessors pass `extractvalue`s, folded through the
// `insertvalue` chains that built the descriptor), a struct store or load
// one per field, and every field read is folded through the chain it
// reads from. The insert chains left without users are erased. And the
// stack slots of runtime arguments move to the entry block, where the fast
// selector takes them.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/AggregateLeaves.h"
#include "muon/Support/BlocksOnCycles.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

#include "llvm/ADT/SmallBitVector.h"

namespace muon {
#define GEN_PASS_DEF_MUONSCALARISEAGGREGATES
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

using Leaf = muon::AggregateLeaf;
using muon::extractLeaf;
using muon::insertedAt;

/// Aggregates with more fields than this are left alone (a descriptor of
/// rank r has 3 + 2r).
constexpr size_t kMaxLeaves = 64;

bool isAggregate(Type type) {
  return isa<LLVM::LLVMStructType, LLVM::LLVMArrayType>(type);
}

SmallVector<Leaf> leavesOf(Type type) {
  return muon::aggregateLeaves(type, kMaxLeaves);
}

/// Splits block argument `index` of `block` into its scalar fields.
/// Returns false (and changes nothing) where a predecessor's terminator
/// does not forward the argument as an operand it holds.
bool scalariseArgument(Block &block, unsigned index) {
  BlockArgument arg = block.getArgument(index);
  SmallVector<Leaf> leaves = leavesOf(arg.getType());
  if (leaves.empty())
    return false;
  // An invoke's successors may have to start with a landingpad, where a
  // rebuilt descriptor could not go: left alone.
  for (BlockOperand &use : block.getUses()) {
    auto branch = dyn_cast<BranchOpInterface>(use.getOwner());
    if (!branch || isa<LLVM::InvokeOp>(use.getOwner()) ||
        branch.getSuccessorOperands(use.getOperandNumber())
            .isOperandProduced(index))
      return false;
  }

  Location loc = arg.getLoc();
  SmallVector<Value> leafArgs;
  for (const Leaf &leaf : leaves)
    leafArgs.push_back(block.addArgument(leaf.type, loc));

  for (BlockOperand &use : block.getUses()) {
    auto branch = cast<BranchOpInterface>(use.getOwner());
    SuccessorOperands operands =
        branch.getSuccessorOperands(use.getOperandNumber());
    Value incoming = operands[index];
    OpBuilder b(branch);
    SmallVector<Value> fields;
    for (const Leaf &leaf : leaves)
      fields.push_back(extractLeaf(b, branch.getLoc(), incoming, leaf.position));
    operands.erase(index);
    operands.append(fields);
  }

  // The struct is put together again at the top of the block; the field
  // reads of the function then fold through it to the new arguments, and
  // it stays only for users of the whole descriptor (a call taking it).
  if (!arg.use_empty()) {
    OpBuilder b = OpBuilder::atBlockBegin(&block);
    Value rebuilt = LLVM::PoisonOp::create(b, loc, arg.getType());
    for (auto [leaf, leafArg] : llvm::zip(leaves, leafArgs))
      rebuilt = LLVM::InsertValueOp::create(b, loc, rebuilt, leafArg,
                                            leaf.position);
    arg.replaceAllUsesWith(rebuilt);
  }
  block.eraseArgument(index);
  return true;
}

/// The scalar fields of a struct that a plain load or store of
/// `alignment` may move one by one, or none. A descriptor's fields are
/// pointers and 64-bit integers: an access aligned to 8 (or to the
/// struct's natural alignment, the default) keeps each of them naturally
/// aligned.
SmallVector<Leaf> accessLeaves(Type type, std::optional<int64_t> alignment,
                               bool isVolatile, LLVM::AtomicOrdering ordering) {
  if (!isa<LLVM::LLVMStructType>(type) || isVolatile ||
      ordering != LLVM::AtomicOrdering::not_atomic ||
      (alignment && *alignment < 8))
    return {};
  SmallVector<Leaf> leaves = leavesOf(type);
  for (const Leaf &leaf : leaves)
    if (!isa<LLVM::LLVMPointerType>(leaf.type) && !leaf.type.isInteger(64))
      return {};
  return leaves;
}

Value fieldAddress(OpBuilder &b, Location loc, Value addr, Type type,
                   const Leaf &leaf) {
  SmallVector<LLVM::GEPArg> indices{0};
  for (int64_t i : leaf.position)
    indices.push_back(static_cast<int32_t>(i));
  return LLVM::GEPOp::create(b, loc, addr.getType(), type, addr, indices);
}

/// A store of a whole struct becomes one store per scalar field.
void scalariseStore(LLVM::StoreOp store) {
  Type type = store.getValue().getType();
  SmallVector<Leaf> leaves = accessLeaves(
      type, store.getAlignment(), store.getVolatile_(), store.getOrdering());
  if (leaves.empty())
    return;
  OpBuilder b(store);
  Location loc = store.getLoc();
  for (const Leaf &leaf : leaves) {
    Value field = fieldAddress(b, loc, store.getAddr(), type, leaf);
    Value value = extractLeaf(b, loc, store.getValue(), leaf.position);
    LLVM::StoreOp::create(b, loc, value, field);
  }
  store.erase();
}

/// A load of a whole struct becomes one load per scalar field that is
/// read (in field order); the struct is put together again only for other
/// users.
void scalariseLoad(LLVM::LoadOp load) {
  Type type = load.getType();
  SmallVector<Leaf> leaves = accessLeaves(
      type, load.getAlignment(), load.getVolatile_(), load.getOrdering());
  if (leaves.empty())
    return;
  auto leafOf = [&](LLVM::ExtractValueOp extract) -> std::optional<size_t> {
    for (auto [i, leaf] : llvm::enumerate(leaves))
      if (ArrayRef<int64_t>(leaf.position) == extract.getPosition())
        return i;
    return std::nullopt;
  };
  bool whole = false;
  llvm::SmallBitVector read(leaves.size());
  for (Operation *user : load->getUsers()) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    std::optional<size_t> i = extract ? leafOf(extract) : std::nullopt;
    if (i)
      read.set(*i);
    else
      whole = true;
  }
  OpBuilder b(load);
  Location loc = load.getLoc();
  SmallVector<Value> fields(leaves.size());
  for (auto [i, leaf] : llvm::enumerate(leaves))
    if (whole || read.test(i))
      fields[i] = LLVM::LoadOp::create(
          b, loc, leaf.type, fieldAddress(b, loc, load.getAddr(), type, leaf));
  for (Operation *user : llvm::make_early_inc_range(load->getUsers()))
    if (auto extract = dyn_cast<LLVM::ExtractValueOp>(user))
      if (std::optional<size_t> i = leafOf(extract)) {
        extract.replaceAllUsesWith(fields[*i]);
        extract.erase();
      }
  if (whole) {
    Value rebuilt = LLVM::PoisonOp::create(b, loc, type);
    for (auto [leaf, field] : llvm::zip(leaves, fields))
      rebuilt = LLVM::InsertValueOp::create(b, loc, rebuilt, field,
                                            leaf.position);
    load.replaceAllUsesWith(rebuilt);
  }
  load.erase();
}

/// Moves the fixed-size allocas of blocks outside any cycle to the entry
/// block: the fast selector takes static allocas only (those of the entry
/// block), and memref-to-llvm puts the stack slot of an unranked runtime
/// argument at its call. Outside a cycle a block runs at most once, so one
/// slot per alloca for the whole function is the same program.
void hoistAllocas(LLVM::LLVMFuncOp fn) {
  Region &body = fn.getBody();
  llvm::SmallPtrSet<Block *, 16> cyclic = muon::blocksOnCycles(body);
  Block &entry = body.front();
  // Copies in the entry block of size constants that other ops use too.
  llvm::DenseMap<Operation *, Operation *> entryCopies;
  for (Block &block : llvm::drop_begin(body)) {
    if (cyclic.contains(&block))
      continue;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto alloca = dyn_cast<LLVM::AllocaOp>(op);
      if (!alloca)
        continue;
      auto size = alloca.getArraySize().getDefiningOp<LLVM::ConstantOp>();
      if (!size)
        continue;
      // The size's constant goes too (or a copy of it, when it has other
      // users), unless the entry block holds it.
      Operation *sizeOp = size;
      if (size->getBlock() != &entry) {
        if (size->hasOneUse()) {
          size->moveBefore(&entry, entry.begin());
        } else {
          Operation *&copy = entryCopies[size];
          if (!copy) {
            copy = size->clone();
            entry.getOperations().push_front(copy);
          }
          alloca.getArraySizeMutable().assign(copy->getResult(0));
          sizeOp = copy;
        }
      }
      alloca->moveAfter(sizeOp);
    }
  }
}

/// Erases the aggregate-building ops of `fn` left without users, and the
/// chains behind them. The worklist is built here, after every rewrite
/// (the rewrites erase ops, so pointers collected during them could
/// dangle).
void eraseDeadAggregates(LLVM::LLVMFuncOp fn) {
  auto isAggregateOp = [](Operation *op) {
    return isa<LLVM::InsertValueOp, LLVM::ExtractValueOp, LLVM::PoisonOp,
               LLVM::UndefOp>(op);
  };
  SmallVector<Operation *> worklist;
  fn.walk([&](Operation *op) {
    if (isAggregateOp(op) && op->use_empty())
      worklist.push_back(op);
  });
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    SmallVector<Operation *, 2> defs;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !llvm::is_contained(defs, def))
        defs.push_back(def);
    op->erase();
    // An op is pushed once: when its last user goes.
    for (Operation *def : defs)
      if (isAggregateOp(def) && def->use_empty())
        worklist.push_back(def);
  }
}

struct MuonScalariseAggregates
    : muon::impl::MuonScalariseAggregatesBase<MuonScalariseAggregates> {
  void runOnOperation() override {
    // Functions sit in modules (nested ones too), never in other functions.
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (!fn)
        return WalkResult::advance();
      // Kernels are optimised by LLVM (whose SROA does the same); the
      // rewrite is for the unoptimised glue.
      if (!fn.isExternal() && !fn->hasAttr(muon::kKernelAttrName))
        runOnFunction(fn);
      return WalkResult::skip();
    });
  }

  void runOnFunction(LLVM::LLVMFuncOp fn) {
    for (Block &block : llvm::drop_begin(fn.getBody())) {
      // From the last argument: erasing one renumbers those after it.
      for (unsigned i = block.getNumArguments(); i-- > 0;)
        if (isAggregate(block.getArgument(i).getType()))
          scalariseArgument(block, i);
    }
    SmallVector<LLVM::StoreOp> stores;
    SmallVector<LLVM::LoadOp> loads;
    fn.walk([&](Operation *op) {
      if (auto store = dyn_cast<LLVM::StoreOp>(op))
        stores.push_back(store);
      else if (auto load = dyn_cast<LLVM::LoadOp>(op))
        loads.push_back(load);
    });
    for (LLVM::StoreOp store : stores)
      scalariseStore(store);
    for (LLVM::LoadOp load : loads)
      scalariseLoad(load);
    // Every other field read straight from the value inserted (the
    // unranked descriptors of runtime calls, rank-0 descriptors), so that
    // no insertvalue is left for the fast selector to refuse: one refusal
    // sends the rest of its block to SelectionDAG.
    fn.walk([&](LLVM::ExtractValueOp extract) {
      if (Value value =
              insertedAt(extract.getContainer(), extract.getPosition())) {
        extract.replaceAllUsesWith(value);
        extract.erase();
      }
    });
    eraseDeadAggregates(fn);
    hoistAllocas(fn);
  }
};

} // namespace
