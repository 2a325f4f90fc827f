//===- OutlineElementwise.cpp - One function per kind of elementwise op ---===//
//
// The step's momentum and update are one elementwise linalg.generic per
// matrix; they are the only loops of the step's own code (everything else
// is runtime calls and their buffers). Each kind of op (the same body and
// operand kinds; shapes and captured scalars differ) becomes one private
// function over dynamically shaped buffers, with the captured scalars
// (beta, lr, ...) as arguments, and each op a call to it. The loops then
// live in a handful of small functions, which the JIT optimises, and the
// large function that calls them needs no optimisation
// (muon-optimise-kernels-only).
//
// A kernel takes each buffer as an unranked memref (a rank and a pointer
// to the descriptor) and casts it back to the ranked type inside. A ranked
// memref argument would be passed as its seven descriptor fields, each
// read out of the descriptor at every call site: about half the operations
// of a matrix's code in the step. The buffers are cast to unranked memrefs
// anyway for the runtime calls, so the step's function already holds their
// descriptors in memory (one per buffer, muon-share-buffer-views; the
// caller's own for an argument, muon-forward-argument-descriptors); the
// kernel reads the fields once, before its loops.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace muon {
#define GEN_PASS_DEF_MUONOUTLINEELEMENTWISE
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {
/// The type an outlined function takes for operand type `type`: a memref
/// with every size dynamic (strides and offset too unless the layout is
/// the identity), anything else as it is.
Type generalised(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return type;
  SmallVector<int64_t> shape(memref.getRank(), ShapedType::kDynamic);
  if (memref.getLayout().isIdentity())
    return MemRefType::get(shape, memref.getElementType(), nullptr,
                           memref.getMemorySpace());
  SmallVector<int64_t> strides(memref.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                       strides);
  return MemRefType::get(shape, memref.getElementType(), layout,
                         memref.getMemorySpace());
}

/// How a kernel is passed an operand of (generalised) type `type`: a
/// memref as an unranked one of the same element type and memory space.
Type passedAs(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return type;
  return UnrankedMemRefType::get(memref.getElementType(),
                                 memref.getMemorySpace());
}

struct MuonOutlineElementwise
    : muon::impl::MuonOutlineElementwiseBase<MuonOutlineElementwise> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && op->getParentOfType<func::FuncOp>())
        ops.push_back(op);
    });
    // Kernels go into the module nearest to their ops (a call is resolved
    // in the nearest symbol table). Per module, the printed form of each
    // kernel (its name left out) -> the kernel: equal ops share one.
    SymbolTableCollection tables;
    llvm::DenseMap<Operation *, llvm::StringMap<func::FuncOp>> byForm;
    for (linalg::GenericOp op : ops) {
      auto into = op->getParentOfType<ModuleOp>();
      outline(op, tables.getSymbolTable(into), byForm[into]);
    }
  }

  void outline(linalg::GenericOp op, SymbolTable &symbols,
               llvm::StringMap<func::FuncOp> &byForm) {
    MLIRContext *ctx = op.getContext();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    SmallVector<Value> args(op->getOperands());
    args.append(captured.begin(), captured.end());
    // What the kernel computes on (ranked) and what it is passed.
    SmallVector<Type> argTypes, passedTypes;
    for (Value v : args) {
      argTypes.push_back(generalised(v.getType()));
      passedTypes.push_back(passedAs(argTypes.back()));
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
    b.clone(*op, mapping);
    func::ReturnOp::create(b, op.getLoc());
    std::string form;
    {
      llvm::raw_string_ostream os(form);
      fn->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
    }
    func::FuncOp &shared = byForm[form];
    if (shared) {
      fn.erase();
    } else {
      fn.setPrivate();
      fn->setAttr(muon::kKernelAttrName, UnitAttr::get(ctx));
      symbols.insert(fn); // renames it if the name is taken
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
