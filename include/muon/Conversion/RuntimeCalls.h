//===- RuntimeCalls.h - Building calls into the step runtime ---*- C++ -*-===//
//
// The one place that knows how the lowering talks to the runtime's C ABI
// (runtime/include/muon/Runtime/muon_runtime.h): every call is declared from
// the runtime's function table (muon_runtime_functions.def), never from the
// types of a call site; tensors are handed over as unranked f32 buffers,
// integer and float tables as constant 1-D memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_CONVERSION_RUNTIMECALLS_H
#define MUON_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"

namespace muon {

/// The runtime functions compiled code may call, one per table row.
enum class RuntimeFn {
#define MUON_RT_FUNCTION(name, cInterface, result, args) name,
#include "muon/Runtime/muon_runtime_functions.def"
#undef MUON_RT_FUNCTION
};

/// How many rows the table has.
inline constexpr unsigned kNumRuntimeFns =
#define MUON_RT_FUNCTION(name, cInterface, result, args) 1 +
#include "muon/Runtime/muon_runtime_functions.def"
#undef MUON_RT_FUNCTION
    0;

/// The MLIR function type and C-interface flag of a runtime function, from
/// the table.
struct RuntimeSignature {
  llvm::StringRef name;
  bool cInterface;
  mlir::FunctionType type;
};
RuntimeSignature runtimeSignature(mlir::MLIRContext *ctx, RuntimeFn fn);

/// The runtime takes f32 tensors only: success for a ranked tensor type with
/// f32 elements (or a non-tensor type), else the error every conversion
/// reports at `op` ("operand type T is not lowered to the CPU runtime...").
mlir::LogicalResult requireF32Operand(mlir::Operation *op, mlir::Type type);

class RuntimeCalls {
public:
  /// Calls and tables go into the module nearest to where they are built
  /// (`module` or one nested in it): a symbol is looked up in the nearest
  /// symbol table. Tables the modules already hold (from an earlier pass)
  /// are reused.
  explicit RuntimeCalls(mlir::ModuleOp module);

  /// Calls runtime function `fn`, declared on first use from the table.
  /// Arguments whose types differ from the table's, or a function of that
  /// name already declared with another type, are reported (at `loc` / the
  /// declaration) and make failed() true; the caller's pass must then fail.
  mlir::func::CallOp call(mlir::OpBuilder &b, mlir::Location loc,
                          RuntimeFn fn, mlir::ValueRange args);
  /// The single result of a call to `fn`.
  mlir::Value callValue(mlir::OpBuilder &b, mlir::Location loc, RuntimeFn fn,
                        mlir::ValueRange args) {
    return call(b, loc, fn, args).getResult(0);
  }

  /// memref<?xi64> / memref<?xf64> holding `values` (a private constant
  /// global, shared between identical tables).
  mlir::Value i64Table(mlir::OpBuilder &b, mlir::Location loc,
                       llvm::ArrayRef<int64_t> values);
  mlir::Value f64Table(mlir::OpBuilder &b, mlir::Location loc,
                       llvm::ArrayRef<double> values);

  /// The buffer of tensor `t` as memref<*xf32> (read only).
  static mlir::Value unrankedBufferOf(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value t);
  /// A fresh buffer of `type` (dynamic sizes in order) and its unranked view.
  static std::pair<mlir::Value, mlir::Value>
  allocate(mlir::OpBuilder &b, mlir::Location loc,
           mlir::RankedTensorType type, mlir::ValueRange dynamicSizes);
  /// The tensor a freshly written buffer holds.
  static mlir::Value tensorOf(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value buffer, mlir::RankedTensorType type);
  static mlir::Value i64(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

  /// Whether a call found a conflicting declaration (reported already).
  bool failed() const { return conflict; }

private:
  mlir::Value table(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::DenseElementsAttr values);
  /// The module the declarations and tables of code built at `b` go into.
  mlir::ModuleOp moduleAt(mlir::OpBuilder &b) const;

  mlir::ModuleOp module;
  // Attributes are uniqued: equal tables are the same attribute (printing
  // each table to compare them cost a second on a 70B step at 512 ranks).
  // (module, value) -> symbol.
  llvm::DenseMap<std::pair<mlir::Operation *, mlir::Attribute>, std::string>
      globals;
  int64_t nextTable = 0;
  bool conflict = false;
  // Each runtime function's signature, and its declaration per module,
  // found or made once: a module's symbol lookup scans its ops, and a
  // step makes tens of thousands of calls. Declarations are never erased
  // while a pass holds this object.
  llvm::DenseMap<unsigned, RuntimeSignature> signatures;
  llvm::DenseMap<std::pair<mlir::Operation *, unsigned>, mlir::func::FuncOp>
      declarations;
};

} // namespace muon

#endif // MUON_CONVERSION_RUNTIMECALLS_H
