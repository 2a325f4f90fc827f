//===- RuntimeCalls.cpp - Building calls into the step runtime ------------===//

#include "muon/Conversion/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace muon;

static constexpr llvm::StringLiteral kTablePrefix = "__muon_table_";

RuntimeCalls::RuntimeCalls(ModuleOp module) : module(module) {
  module.walk([&](ModuleOp m) {
    for (auto g : m.getOps<memref::GlobalOp>())
      if (g.getConstant() && g.getSymName().starts_with(kTablePrefix) &&
          g.getInitialValue())
        globals[{m.getOperation(), *g.getInitialValue()}] =
            g.getSymName().str();
  });
}

ModuleOp RuntimeCalls::moduleAt(OpBuilder &b) const {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto nearest = dyn_cast<ModuleOp>(parent);
  if (!nearest)
    nearest = parent->getParentOfType<ModuleOp>();
  return nearest ? nearest : module;
}

namespace {
enum class Kind { VOID, I64, F64, MEMREF, I64_ARRAY, F64_ARRAY, PTR, I64_PTR };

struct TableRow {
  const char *name;
  bool cInterface;
  Kind result;
  std::vector<Kind> args;
};

const std::vector<TableRow> &table() {
  constexpr Kind VOID = Kind::VOID, I64 = Kind::I64, F64 = Kind::F64,
                 MEMREF = Kind::MEMREF, I64_ARRAY = Kind::I64_ARRAY,
                 F64_ARRAY = Kind::F64_ARRAY, PTR = Kind::PTR,
                 I64_PTR = Kind::I64_PTR;
  (void)VOID, (void)I64, (void)F64, (void)MEMREF, (void)I64_ARRAY,
      (void)F64_ARRAY, (void)PTR, (void)I64_PTR;
#define MUON_RT_ARGS(...) {__VA_ARGS__}
#define MUON_RT_FUNCTION(name, cInterface, result, args)                       \
  {#name, cInterface != 0, result, std::vector<Kind> MUON_RT_ARGS args},
  static const std::vector<TableRow> rows = {
#include "muon/Runtime/muon_runtime_functions.def"
  };
#undef MUON_RT_FUNCTION
#undef MUON_RT_ARGS
  return rows;
}

Type typeOf(MLIRContext *ctx, Kind k) {
  Builder b(ctx);
  switch (k) {
  case Kind::VOID:
    return {};
  case Kind::I64:
    return b.getI64Type();
  case Kind::F64:
    return b.getF64Type();
  case Kind::MEMREF:
    return UnrankedMemRefType::get(b.getF32Type(), 0);
  case Kind::I64_ARRAY:
    return MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  case Kind::F64_ARRAY:
    return MemRefType::get({ShapedType::kDynamic}, b.getF64Type());
  case Kind::PTR:
  case Kind::I64_PTR:
    return LLVM::LLVMPointerType::get(ctx);
  }
  llvm_unreachable("unknown runtime argument kind");
}
} // namespace

LogicalResult muon::requireF32Operand(Operation *op, Type type) {
  auto tt = dyn_cast<RankedTensorType>(type);
  if (!tt || tt.getElementType().isF32())
    return success();
  return op->emitOpError("operand type ")
         << type << " is not lowered to the host runtime: only f32 tensors are";
}

RuntimeSignature muon::runtimeSignature(MLIRContext *ctx, RuntimeFn fn) {
  const TableRow &row = table()[static_cast<size_t>(fn)];
  SmallVector<Type> args, results;
  for (Kind k : row.args)
    args.push_back(typeOf(ctx, k));
  if (row.result != Kind::VOID)
    results.push_back(typeOf(ctx, row.result));
  return {row.name, row.cInterface, FunctionType::get(ctx, args, results)};
}

func::CallOp RuntimeCalls::call(OpBuilder &b, Location loc, RuntimeFn fnId,
                                ValueRange args) {
  auto [sigIt, newSig] = signatures.try_emplace(static_cast<unsigned>(fnId));
  if (newSig)
    sigIt->second = runtimeSignature(b.getContext(), fnId);
  const RuntimeSignature &sig = sigIt->second;
  if (TypeRange(args) != sig.type.getInputs()) {
    // A caller that did not check its operands (e.g. a non-f32 tensor):
    // report it at the op being lowered; the pass fails on failed().
    if (!conflict)
      mlir::emitError(loc, "cannot call runtime function @")
          << sig.name << " with arguments of types " << TypeRange(args)
          << ": its table entry takes " << sig.type.getInputs();
    conflict = true;
  }
  ModuleOp into = moduleAt(b);
  std::pair<Operation *, unsigned> key{into.getOperation(),
                                       static_cast<unsigned>(fnId)};
  if (func::FuncOp known = declarations.lookup(key))
    return func::CallOp::create(b, loc, known, args);
  Operation *existing = into.lookupSymbol(sig.name);
  auto fn = dyn_cast_or_null<func::FuncOp>(existing);
  if (existing && !fn) {
    // Another kind of symbol (an llvm.func, a global) holds the name.
    if (!conflict)
      existing->emitOpError("takes the name of runtime function @")
          << sig.name << ", which the lowering declares as a func.func of "
          << "type " << sig.type;
    conflict = true;
    // The caller still gets a call, to that name; its pass fails on
    // failed() before anything reads the IR.
    return func::CallOp::create(b, loc, sig.name, sig.type.getResults(),
                                args);
  }
  if (!fn) {
    OpBuilder mb(into.getBodyRegion());
    mb.setInsertionPointToStart(into.getBody());
    fn = func::FuncOp::create(mb, into.getLoc(), sig.name, sig.type);
    fn.setPrivate();
    if (sig.cInterface)
      fn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
  } else if (fn.getFunctionType() != sig.type) {
    if (!conflict)
      fn.emitOpError("declares runtime function @")
          << sig.name << " with type " << fn.getFunctionType()
          << ", but the runtime's function table says " << sig.type;
    conflict = true;
  } else if (fn->hasAttr("llvm.emit_c_interface") != sig.cInterface) {
    // The call would go to _mlir_ciface_<name> where the runtime exports
    // <name>, or the other way round: a missing symbol at JIT time.
    if (!conflict)
      fn.emitOpError("declares runtime function @")
          << sig.name << (sig.cInterface ? " without" : " with")
          << " llvm.emit_c_interface, but the runtime exports it "
          << (sig.cInterface ? "with" : "without")
          << " a C interface (declare it as the runtime's function table "
             "does, or leave the declaration to the lowering)";
    conflict = true;
  } else if (!fn.isExternal()) {
    // A body would be called instead of the runtime's function: the
    // lowered step would silently compute something else.
    if (!conflict)
      fn.emitOpError("defines runtime function @")
          << sig.name << ", which the lowering calls: the name is the "
          << "runtime's (declare it without a body, or rename it)";
    conflict = true;
  }
  declarations[key] = fn;
  return func::CallOp::create(b, loc, fn, args);
}

Value RuntimeCalls::table(OpBuilder &b, Location loc,
                          DenseElementsAttr values) {
  auto type = cast<MemRefType>(
      MemRefType::get(values.getType().getShape(),
                      values.getType().getElementType()));
  ModuleOp into = moduleAt(b);
  std::string &sym = globals[{into.getOperation(), values}];
  if (sym.empty()) {
    do
      sym = (kTablePrefix + llvm::Twine(nextTable++)).str();
    while (into.lookupSymbol(sym));
    OpBuilder mb(into.getBodyRegion());
    mb.setInsertionPointToStart(into.getBody());
    memref::GlobalOp::create(mb, into.getLoc(), sym,
                             mb.getStringAttr("private"), type, values,
                             /*constant=*/true, /*alignment=*/nullptr);
  }
  Value g = memref::GetGlobalOp::create(b, loc, type, sym);
  auto dyn = MemRefType::get({ShapedType::kDynamic}, type.getElementType());
  return memref::CastOp::create(b, loc, dyn, g);
}

Value RuntimeCalls::i64Table(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> values) {
  auto t = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                 b.getI64Type());
  return table(b, loc, DenseElementsAttr::get(t, values));
}

Value RuntimeCalls::f64Table(OpBuilder &b, Location loc,
                             ArrayRef<double> values) {
  auto t = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                 b.getF64Type());
  return table(b, loc, DenseElementsAttr::get(t, values));
}

Value RuntimeCalls::unrankedBufferOf(OpBuilder &b, Location loc, Value t) {
  auto tt = cast<RankedTensorType>(t.getType());
  auto mt = MemRefType::get(tt.getShape(), tt.getElementType());
  Value buf = bufferization::ToBufferOp::create(b, loc, mt, t,
                                                /*read_only=*/true);
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(tt.getElementType(), 0), buf);
}

std::pair<Value, Value> RuntimeCalls::allocate(OpBuilder &b, Location loc,
                                               RankedTensorType type,
                                               ValueRange dynamicSizes) {
  auto mt = MemRefType::get(type.getShape(), type.getElementType());
  Value buf = memref::AllocOp::create(b, loc, mt, dynamicSizes,
                                      b.getI64IntegerAttr(64));
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buf);
  return {buf, unranked};
}

Value RuntimeCalls::tensorOf(OpBuilder &b, Location loc, Value buffer,
                             RankedTensorType type) {
  return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value RuntimeCalls::i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}
