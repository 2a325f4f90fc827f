//===- OutlineElementwise.cpp - One function per kind of elementwise op ---===//
//
// The step's momentum and update are one elementwise linalg.generic per
// matrix; they are the only loops of the step's own code (everything else
// is runtime calls and their buffers). Named linalg ops other than copies
// are generalised first, so they are kernels too. Each kind of op (the same
// body and operand kinds; shapes and captured scalars differ) becomes one
// private function over dynamically shaped buffers, with the captured scalars
// (beta, lr, ...) as arguments, and each op a call to it. The loops then
// live in a handful of small functions, which the JIT optimises, and the
// large function that calls them needs no optimisation
// (muon-optimise-kernels-only).
//
// A kernel takes each buffer as an unranked memref (a rank and a pointer
// to the descriptor) and casts it back to the ranked type inside. A ranked
// memref argument would be passed as its seven descriptor fields, each
// read out of the descriptor at every call site: about a quarter of the
// operations of a matrix's code in the step. The buffers are cast to
// unranked memrefs anyway for the runtime calls, so the step's function
// already holds their descriptors in memory (one per buffer,
// muon-share-buffer-views; the caller's own for an argument,
// muon-forward-argument-descriptors); the kernel reads the fields once,
// before its loops. Two exceptions pass buffers ranked, as before: an op
// that may run more than once per call (in a loop, or in a block on a
// cycle), where each call would fill a stack slot of its own and the stack
// would grow per iteration; and a buffer in a memory space that is not an
// address space (an integer), which the conversion to LLVM rejects with a
// diagnostic for ranked memrefs but not for unranked ones.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"
#include "muon/Conversion/Passes.h"
#include "muon/Support/AddressSpace.h"
#include "muon/Support/BlocksOnCycles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace muon {
#define GEN_PASS_DEF_MUONOUTLINEELEMENTWISE
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {
/// How a kernel is passed an operand of (generalised) type `type`: a
/// memref as an unranked one of the same element type and memory space,
/// where that space is the default or an address space.
Type passedAs(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !muon::isLLVMAddressSpace(memref.getMemorySpace()))
    return type;
  return UnrankedMemRefType::get(memref.getElementType(),
                                 memref.getMemorySpace());
}

/// Whether `op` may run more than once per call of its function: inside a
/// loop, or in a block on a cycle of its region's control flow, up to the
/// function.
/// `cyclic` caches the blocks on cycles of each multi-block region seen.
bool mayRepeat(
    Operation *op,
    llvm::DenseMap<Region *, llvm::SmallPtrSet<Block *, 16>> &cyclic) {
  for (Operation *at = op; at && !isa<func::FuncOp>(at);
       at = at->getParentOp()) {
    if (at != op && isa<LoopLikeOpInterface>(at))
      return true;
    Region *region = at->getParentRegion();
    if (!region || region->hasOneBlock())
      continue;
    auto [it, inserted] = cyclic.try_emplace(region);
    if (inserted)
      it->second = muon::blocksOnCycles(*region);
    if (it->second.contains(at->getBlock()))
      return true;
  }
  return false;
}

struct MuonOutlineElementwise
    : muon::impl::MuonOutlineElementwiseBase<MuonOutlineElementwise> {
  /// Blocks on cycles per region (outlining adds no block).
  llvm::DenseMap<Region *, llvm::SmallPtrSet<Block *, 16>> cyclic;

  void runOnOperation() override {
    cyclic.clear();
    // Named ops (linalg.fill, linalg.mul, ...) as generics first, so that
    // they become kernels too instead of scalar loops in unoptimised code.
    // A copy stays as it is: it lowers to memrefCopy (memcpy).
    SmallVector<linalg::LinalgOp> named;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp, linalg::CopyOp>(op) &&
          op.hasPureBufferSemantics() && op->getParentOfType<func::FuncOp>())
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op); // else left as it is
    }
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && op->getParentOfType<func::FuncOp>())
        ops.push_back(op);
    });
    // Kernels go into the module nearest to their ops (a call is resolved
    // in the nearest symbol table). Per module, the kernels by a hash of
    // their signature and op: equal kernels (the same body, block
    // arguments matched in order, locations aside) share one.
    SymbolTableCollection tables;
    llvm::DenseMap<Operation *, KernelsByHash> byForm;
    for (linalg::GenericOp op : ops) {
      auto into = op->getParentOfType<ModuleOp>();
      outline(op, tables.getSymbolTable(into), byForm[into]);
    }
  }

  using KernelsByHash = muon::KernelsByForm<func::FuncOp>;

  void outline(linalg::GenericOp op, SymbolTable &symbols,
               KernelsByHash &byForm) {
    MLIRContext *ctx = op.getContext();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    SmallVector<Value> args(op->getOperands());
    args.append(captured.begin(), captured.end());
    // What the kernel computes on (ranked) and what it is passed.
    bool byPointer = !mayRepeat(op, cyclic);
    SmallVector<Type> argTypes, passedTypes;
    for (Value v : args) {
      argTypes.push_back(muon::generalisedKernelType(v.getType()));
      passedTypes.push_back(byPointer ? passedAs(argTypes.back())
                                      : argTypes.back());
    }

    // The candidate function, built detached and printed to find its kind.
    OpBuilder b(ctx);
    auto fn = func::FuncOp::create(b, op.getLoc(), "__muon_kernel",
                                   FunctionType::get(ctx, passedTypes, {}));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping mapping;
    for (auto [v, arg, t] : llvm::zip(args, entry->getArguments(), argTypes))
      mapping.map(v, arg.getType() == t
                         ? Value(arg)
                         : memref::CastOp::create(b, op.getLoc(), t, arg)
                               .getResult());
    Operation *body = b.clone(*op, mapping);
    func::ReturnOp::create(b, op.getLoc());
    // The hash takes the signature and the op (attributes, types), not its
    // region: equality, region included, is checked within a bucket.
    llvm::hash_code hash = KernelsByHash::hashOf(fn, body);
    func::FuncOp shared = byForm.findEqual(fn, hash);
    if (shared) {
      fn.erase();
    } else {
      fn.setPrivate();
      fn->setAttr(muon::kKernelAttrName, UnitAttr::get(ctx));
      symbols.insert(fn); // renames it if the name is taken
      byForm.keep(fn, hash);
      shared = fn;
    }

    b.setInsertionPoint(op);
    SmallVector<Value> callArgs;
    for (auto [v, t] : llvm::zip(args, passedTypes))
      callArgs.push_back(v.getType() == t
                             ? v
                             : memref::CastOp::create(b, op.getLoc(), t, v)
                                   .getResult());
    func::CallOp::create(b, op.getLoc(), shared, callArgs);
    op.erase();
  }
};
} // namespace
