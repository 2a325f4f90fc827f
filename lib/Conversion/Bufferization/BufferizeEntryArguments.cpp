//===- BufferizeEntryArguments.cpp - Memref arguments for uncalled functions ===//
//
// Why: one-shot bufferization with `bufferize-function-boundaries` records,
// for every function, which tensor arguments each returned tensor aliases
// and which one it equals. It does so by comparing every return operand
// with every tensor argument: a step takes three tensors per matrix and
// returns two, so on a 405B step (882 matrices) that is millions of
// comparisons, the one part of the lowering that grew with the square of
// the parameters. The answer is only needed where a function is called.
//
// The rewrite gives each ranked tensor argument of a function that nothing
// refers to the memref one-shot bufferization would give it (identity
// layout, default memory space) and reads it back with
// `bufferization.to_tensor restrict [writable]`: the same assumptions the
// function-boundary bufferization makes of an argument (arguments never
// alias one another; writable unless `bufferization.writable = false`).
// The bufferized function is the same; there is no tensor argument left
// to compare.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/SymbolReferences.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace muon {
#define GEN_PASS_DEF_MUONBUFFERIZEENTRYARGUMENTS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// The memref an argument of `type` gets, or null where the argument is
/// left to one-shot bufferization (unranked, an encoding, a requested
/// layout).
MemRefType bufferTypeOf(func::FuncOp fn, unsigned index) {
  auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[index]);
  if (!type || type.getEncoding() ||
      fn.getArgAttr(index,
                    bufferization::BufferizationDialect::kBufferLayoutAttrName))
    return {};
  return MemRefType::get(type.getShape(), type.getElementType());
}

bool isWritable(func::FuncOp fn, unsigned index) {
  auto writable = fn.getArgAttrOfType<BoolAttr>(
      index, bufferization::BufferizationDialect::kWritableAttrName);
  return !writable || writable.getValue();
}

void bufferizeArguments(func::FuncOp fn) {
  Block &entry = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs(fn.getArgumentTypes());
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    MemRefType bufferType = bufferTypeOf(fn, i);
    if (!bufferType)
      continue;
    BlockArgument arg = entry.getArgument(i);
    auto tensorType = cast<RankedTensorType>(arg.getType());
    arg.setType(bufferType);
    inputs[i] = bufferType;
    auto tensor = bufferization::ToTensorOp::create(
        b, arg.getLoc(), tensorType, arg, /*restrict=*/true,
        /*writable=*/isWritable(fn, i));
    arg.replaceAllUsesExcept(tensor.getResult(), tensor);
  }
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
}

struct MuonBufferizeEntryArguments
    : muon::impl::MuonBufferizeEntryArgumentsBase<
          MuonBufferizeEntryArguments> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every symbol any op refers to, by its root name: a function named
    // there may be called (or its address taken), and keeps the
    // function-boundary analysis its callers rely on.
    FailureOr<DenseSet<StringAttr>> referenced =
        muon::referencedRootNames(module);
    if (failed(referenced))
      return; // An op that may refer to symbols unknown to us: left alone.
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && !referenced->contains(fn.getSymNameAttr()))
        bufferizeArguments(fn);
  }
};

} // namespace
