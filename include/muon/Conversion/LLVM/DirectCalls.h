//===- DirectCalls.h - Calls to declared LLVM functions ---------*- C++ -*-===//
//
// A func.call whose callee's LLVM signature is known before the
// conversion (the runtime's functions, once muon-convert-step-to-llvm has
// converted the external declarations, and the step's kernels) lowered
// straight to llvm.call. A memref operand is passed field by field, as the
// upstream call lowering passes it (an unranked one as its rank and
// descriptor pointer); where the IR has just built the descriptor (a
// buffer's {rank, pointer} view, a constant table), the fields are taken
// as they are instead of being extracted again.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_CONVERSION_LLVM_DIRECTCALLS_H
#define MUON_CONVERSION_LLVM_DIRECTCALLS_H

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace muon {

/// The functions of `module` a call can be lowered to directly, with their
/// LLVM function types: every llvm.func, and every func.func with a body
/// that the conversion will turn into an llvm.func of the signature
/// `converter` gives it (not those with bare-pointer arguments).
void collectDirectCallees(
    mlir::ModuleOp module, const mlir::LLVMTypeConverter &converter,
    llvm::DenseMap<mlir::StringAttr, mlir::LLVM::LLVMFunctionType> &callees);

/// Adds the direct call lowering for calls, in functions of `module`
/// itself (not of a nested symbol table), to the functions of `callees`
/// (name -> LLVM function type, collected from `module`), with a benefit
/// above the upstream call lowering. A call it does not take (several
/// results, a returned memref, operand or result types that do not match)
/// is left to the upstream pattern, which reports what it always did.
/// `callees` must outlive the conversion.
void populateDirectCallPatterns(
    const mlir::LLVMTypeConverter &converter, mlir::ModuleOp module,
    const llvm::DenseMap<mlir::StringAttr, mlir::LLVM::LLVMFunctionType>
        &callees,
    mlir::RewritePatternSet &patterns);

} // namespace muon

#endif // MUON_CONVERSION_LLVM_DIRECTCALLS_H
