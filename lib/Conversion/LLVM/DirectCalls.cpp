//===- DirectCalls.cpp - Calls to declared LLVM functions -----------------===//
//
// Why: a step makes one runtime call per buffer operation, tens of
// thousands on a large model, and most operands are buffer views the
// previous pass built as a {rank, descriptor pointer} struct. The upstream
// call lowering extracts both fields again from every such operand (two
// extractvalue operations each, which later passes fold away), looks the
// callee up in the symbol table and checks the operands' layouts; on a
// 405B step that was a third of the conversion's instructions.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/LLVM/DirectCalls.h"
#include "muon/Support/AggregateLeaves.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace {

/// Descriptors with more scalar fields than this (a rank-r memref has
/// 3 + 2r) keep the upstream lowering.
constexpr size_t kMaxFields = 64;

/// The value `v` stands for, looking through the unrealized casts that
/// connect a view built in the LLVM dialect to its memref uses.
Value throughCasts(Value v) {
  while (auto cast = v.getDefiningOp<UnrealizedConversionCastOp>()) {
    if (cast->getNumOperands() != 1)
      break;
    v = cast->getOperand(0);
  }
  return v;
}

struct DirectCallLowering : ConvertOpToLLVMPattern<func::CallOp> {
  DirectCallLowering(
      const LLVMTypeConverter &converter, ModuleOp module,
      const DenseMap<StringAttr, LLVM::LLVMFunctionType> &callees)
      : ConvertOpToLLVMPattern(converter, /*benefit=*/2), module(module),
        callees(callees) {}

  LogicalResult
  matchAndRewrite(func::CallOp call, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The names are the module's: a call in a nested symbol table (another
    // module) may name another function.
    if (SymbolTable::getNearestSymbolTable(call->getParentOp()) != module)
      return failure();
    auto found = callees.find(call.getCalleeAttr().getAttr());
    // A returned unranked memref is copied off the callee's heap by the
    // upstream lowering; returned memrefs stay with it.
    if (found == callees.end() || call.getNumResults() > 1 ||
        llvm::any_of(call.getResultTypes(), llvm::IsaPred<BaseMemRefType>))
      return failure();
    LLVM::LLVMFunctionType type = found->second;
    if (type.isVarArg())
      return failure();
    Type result = LLVM::LLVMVoidType::get(getContext());
    if (call.getNumResults() == 1)
      result = getTypeConverter()->convertType(call.getResult(0).getType());
    if (result != type.getReturnType())
      return failure();

    // Check every operand against the declaration before creating
    // anything: a call this pattern does not take is left as it was. A
    // memref is passed as the scalar fields of its descriptor, in order.
    SmallVector<Type> types;
    SmallVector<SmallVector<muon::AggregateLeaf>> fields(call.getNumOperands());
    for (auto [i, original, converted] : llvm::enumerate(
             call.getOperands(), adaptor.getOperands())) {
      if (!isa<BaseMemRefType>(original.getType()) ||
          !isa<LLVM::LLVMStructType>(converted.getType())) {
        types.push_back(converted.getType());
        continue;
      }
      fields[i] = muon::aggregateLeaves(converted.getType(), kMaxFields);
      if (fields[i].empty())
        return failure();
      for (const muon::AggregateLeaf &leaf : fields[i])
        types.push_back(leaf.type);
    }
    if (!llvm::equal(types, type.getParams()))
      return failure();

    Location loc = call.getLoc();
    SmallVector<Value> operands;
    operands.reserve(types.size());
    for (auto [converted, leaves] :
         llvm::zip_equal(adaptor.getOperands(), fields)) {
      if (leaves.empty()) {
        operands.push_back(converted);
        continue;
      }
      // Where a chain of insertions just built the descriptor (a buffer's
      // view, a constant table), its fields are taken as they are.
      Value built = throughCasts(converted);
      if (built.getType() != converted.getType())
        built = converted;
      for (const muon::AggregateLeaf &leaf : leaves) {
        Value field = muon::insertedAt(built, leaf.position);
        operands.push_back(field ? field
                                 : LLVM::ExtractValueOp::create(
                                       rewriter, loc, converted,
                                       leaf.position));
      }
    }
    auto lowered =
        LLVM::CallOp::create(rewriter, loc, type, found->first, operands);
    rewriter.replaceOp(call, lowered->getResults());
    return success();
  }

  Operation *module;
  const DenseMap<StringAttr, LLVM::LLVMFunctionType> &callees;
};

} // namespace

void muon::collectDirectCallees(
    ModuleOp module, const LLVMTypeConverter &converter,
    DenseMap<StringAttr, LLVM::LLVMFunctionType> &callees) {
  // Under the bare-pointer convention a memref is passed as one pointer,
  // not field by field: the upstream lowering knows it.
  if (converter.getOptions().useBarePtrCallConv)
    return;
  for (Operation &op : module.getOps()) {
    if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      callees.try_emplace(fn.getSymNameAttr(), fn.getFunctionType());
      continue;
    }
    // A function the conversion turns into an llvm.func of the signature
    // the converter gives it; "llvm.bareptr" asks the func lowering for
    // the bare-pointer convention, "func.varargs" for a variadic one.
    auto fn = dyn_cast<func::FuncOp>(op);
    if (!fn || fn.isExternal() || fn->hasAttr("llvm.bareptr") ||
        fn->hasAttr("func.varargs"))
      continue;
    // A signature the converter cannot convert (a memory space that is
    // not an address space) is reported where the function is converted,
    // with the pass's own diagnostic; here it only means no direct calls.
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    TypeConverter::SignatureConversion unused(fn.getNumArguments());
    if (auto type = dyn_cast_if_present<LLVM::LLVMFunctionType>(
            converter.convertFunctionSignature(fn.getFunctionType(),
                                               /*isVariadic=*/false,
                                               /*useBarePtrCallConv=*/false,
                                               unused)))
      callees.try_emplace(fn.getSymNameAttr(), type);
  }
}

void muon::populateDirectCallPatterns(
    const LLVMTypeConverter &converter, ModuleOp module,
    const DenseMap<StringAttr, LLVM::LLVMFunctionType> &callees,
    RewritePatternSet &patterns) {
  patterns.add<DirectCallLowering>(converter, module, callees);
}
