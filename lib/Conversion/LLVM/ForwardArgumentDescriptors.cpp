//===- ForwardArgumentDescriptors.cpp - No stack copy of an argument ------===//
//
// Why: every runtime call takes its tensors as unranked memrefs, and the
// lowering of a ranked-to-unranked cast copies the whole descriptor into a
// stack slot and points the unranked descriptor at that slot. For a buffer
// the step receives, the caller already holds that descriptor in memory and
// the entry (`_mlir_ciface_F`) has a pointer to it: the copy is a slot and a
// store per field for each of the step's arguments (five per matrix), pure
// weight for the JIT. The slot is replaced by the argument where this
// function provably neither writes nor leaks the caller's descriptor and
// the slot holds exactly what was loaded from it; that the caller leaves
// its descriptors alone during the call, and that callees only read them,
// is the entry's and the runtime's ABI (see the pass description in
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/AggregateLeaves.h"
#include "muon/Support/EraseDead.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

namespace muon {
#define GEN_PASS_DEF_MUONFORWARDARGUMENTDESCRIPTORS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// True when every use of `arg` is a plain (non-volatile, non-atomic) load
/// from it: nothing in the function writes through it or lets it escape.
/// Arguments with attributes (nocapture, noalias, ...) are left alone: the
/// rewrite would hand them to callees, which such attributes may forbid.
bool onlyLoaded(LLVM::LLVMFuncOp fn, BlockArgument arg) {
  DictionaryAttr attrs = fn.getArgAttrDict(arg.getArgNumber());
  if (!isa<LLVM::LLVMPointerType>(arg.getType()) || (attrs && !attrs.empty()))
    return false;
  for (Operation *user : arg.getUsers()) {
    auto load = dyn_cast<LLVM::LoadOp>(user);
    if (!load || load.getAddr() != arg || load.getVolatile_() ||
        load.getOrdering() != LLVM::AtomicOrdering::not_atomic)
      return false;
  }
  return !arg.use_empty();
}

/// The load whose value `v` equals: `v` is the load, or a chain of
/// `insertvalue`s, each inserting the `extractvalue` of one load at the
/// same position, over that load or over poison/undef with every leaf set.
/// Null otherwise.
LLVM::LoadOp rebuiltLoad(Value v) {
  LLVM::LoadOp source;
  SmallVector<ArrayRef<int64_t>> set;
  auto agree = [&](LLVM::LoadOp load) {
    if (!load || (source && source != load))
      return false;
    source = load;
    return true;
  };
  while (auto insert = v.getDefiningOp<LLVM::InsertValueOp>()) {
    auto extract = insert.getValue().getDefiningOp<LLVM::ExtractValueOp>();
    if (!extract || extract.getPosition() != insert.getPosition() ||
        !agree(extract.getContainer().getDefiningOp<LLVM::LoadOp>()))
      return {};
    set.push_back(insert.getPosition());
    v = insert.getContainer();
  }
  if (auto load = v.getDefiningOp<LLVM::LoadOp>())
    return agree(load) ? load : LLVM::LoadOp();
  if (!source ||
      (!v.getDefiningOp<LLVM::PoisonOp>() && !v.getDefiningOp<LLVM::UndefOp>()))
    return {};
  // Over poison: every leaf must lie under a set position (a descriptor
  // has 3 + 2 * rank of them).
  SmallVector<muon::AggregateLeaf> leaves =
      muon::aggregateLeaves(v.getType(), /*maxLeaves=*/64);
  if (leaves.empty())
    return {};
  for (const muon::AggregateLeaf &leaf : leaves)
    if (!llvm::any_of(set, [&](ArrayRef<int64_t> pos) {
          return pos.size() <= leaf.position.size() &&
                 ArrayRef<int64_t>(leaf.position).take_front(pos.size()) ==
                     pos;
        }))
      return {};
  return source;
}

/// True when `use` hands its value to a call as an argument.
bool isCallArgument(OpOperand &use) {
  auto call = dyn_cast<LLVM::CallOp>(use.getOwner());
  // An indirect call's first operand is its callee, not an argument.
  return call && (call.getCallee() || use.getOperandNumber() != 0);
}

/// True when `desc`, an unranked memref descriptor, is only taken apart
/// and its pointer field only passed as an argument to calls: nothing in
/// this function writes through the pointer, stores it or passes it on in
/// another form (callees read it: the runtime's ABI, see the pass
/// description).
bool onlyPassedToCalls(LLVM::InsertValueOp desc) {
  for (Operation *user : desc->getUsers()) {
    auto field = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!field || field.getContainer() != desc.getResult())
      return false;
    if (field.getPosition() == ArrayRef<int64_t>{0})
      continue; // the rank
    if (field.getPosition() != ArrayRef<int64_t>{1} ||
        !llvm::all_of(field->getUses(), isCallArgument))
      return false;
  }
  return true;
}

/// True when `alloca` holds one element and every use but `store` passes
/// it to a call as an argument, or puts it in the pointer field of an
/// unranked memref descriptor that is only passed to calls (the call
/// lowering passes an unranked memref as its rank and that pointer).
bool onlyNamedByUnrankedDescriptors(LLVM::AllocaOp alloca,
                                    LLVM::StoreOp store) {
  IntegerAttr one;
  if (!matchPattern(alloca.getArraySize(), m_Constant(&one)) ||
      one.getValue() != 1)
    return false;
  for (OpOperand &use : alloca.getResult().getUses()) {
    if (use.getOwner() == store.getOperation() || isCallArgument(use))
      continue;
    auto insert = dyn_cast<LLVM::InsertValueOp>(use.getOwner());
    if (!insert || use.getOperandNumber() != 1 /* the inserted value */)
      return false;
    auto desc = dyn_cast<LLVM::LLVMStructType>(insert.getType());
    if (!desc || desc.isPacked() || desc.getBody().size() != 2 ||
        !desc.getBody()[0].isInteger(64) ||
        !isa<LLVM::LLVMPointerType>(desc.getBody()[1]) ||
        insert.getPosition() != ArrayRef<int64_t>{1} ||
        !onlyPassedToCalls(insert))
      return false;
  }
  return true;
}

/// The single plain store into `alloca` (as address), or null.
LLVM::StoreOp singleStore(LLVM::AllocaOp alloca) {
  LLVM::StoreOp found;
  for (OpOperand &use : alloca.getResult().getUses()) {
    auto store = dyn_cast<LLVM::StoreOp>(use.getOwner());
    if (!store)
      continue;
    if (found || store.getAddr() != alloca.getResult() ||
        store.getVolatile_() ||
        store.getOrdering() != LLVM::AtomicOrdering::not_atomic)
      return {};
    found = store;
  }
  return found;
}

struct MuonForwardArgumentDescriptors
    : muon::impl::MuonForwardArgumentDescriptorsBase<
          MuonForwardArgumentDescriptors> {
  void runOnOperation() override {
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (!fn)
        return WalkResult::advance();
      if (!fn.isExternal())
        forward(fn);
      return WalkResult::skip();
    });
  }

  void forward(LLVM::LLVMFuncOp fn) {
    llvm::DenseSet<Value> readOnly;
    for (BlockArgument arg : fn.getArguments())
      if (onlyLoaded(fn, arg))
        readOnly.insert(arg);
    if (readOnly.empty())
      return;
    SmallVector<LLVM::AllocaOp> slots;
    fn.walk([&](LLVM::AllocaOp alloca) { slots.push_back(alloca); });
    for (LLVM::AllocaOp alloca : slots) {
      LLVM::StoreOp store = singleStore(alloca);
      if (!store || !onlyNamedByUnrankedDescriptors(alloca, store))
        continue;
      LLVM::LoadOp load = rebuiltLoad(store.getValue());
      if (!load || load.getType() != alloca.getElemType() ||
          load.getAddr().getType() != alloca.getType() ||
          !readOnly.contains(load.getAddr()))
        continue;
      Operation *value = store.getValue().getDefiningOp();
      store.erase();
      alloca.getResult().replaceAllUsesWith(load.getAddr());
      muon::eraseDeadDefinitions({alloca.getOperation(), value});
    }
  }
};

} // namespace
