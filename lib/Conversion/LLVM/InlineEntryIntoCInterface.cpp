//===- InlineEntryIntoCInterface.cpp - One function per entry -------------===//
//
// Why: `convert-func-to-llvm` exports an entry with memref arguments twice:
// `F`, taking every descriptor field as a scalar argument, and its C
// interface `_mlir_ciface_F`, taking one descriptor pointer per memref,
// which loads the fields and calls `F`. The runtime, muon-run, Python and
// the C API call the C interface only. A step's `F` takes seven scalars per
// buffer (five buffers per matrix: 30,870 arguments on a 405B step), and
// LLVM's lowering of that many arguments and of the call that passes them
// grows faster than linearly: 2.4 of a 405B step's 7.8 s of JIT. Moving
// `F`'s body into its C interface, where the fields are loaded, leaves one
// function with one pointer argument per buffer.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/SymbolReferences.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace muon {
#define GEN_PASS_DEF_MUONINLINEENTRYINTOCINTERFACE
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kCInterfacePrefix = "_mlir_ciface_";

/// The call of `wrapper` to the function it wraps when `wrapper` is exactly
/// "compute the arguments; call; return" (what func-to-llvm generates for a
/// function without results), else null.
LLVM::CallOp wrappedCall(LLVM::LLVMFuncOp wrapper) {
  if (wrapper.isExternal() || !wrapper.getBody().hasOneBlock())
    return {};
  Block &block = wrapper.getBody().front();
  auto ret = dyn_cast<LLVM::ReturnOp>(block.getTerminator());
  if (!ret || ret.getNumOperands() != 0 || &block.front() == ret)
    return {};
  auto call = dyn_cast<LLVM::CallOp>(ret->getPrevNode());
  if (!call || call.getNumResults() != 0 || !call.getCallee())
    return {};
  return call;
}

/// The references to each symbol in `module` by root name (calls,
/// invokes, address-of, a function's personality, any attribute), or none
/// when an op of unknown meaning may hold some. Counted once: inlining an
/// entry moves its body's references, it adds none.
std::optional<llvm::StringMap<unsigned>> countUses(ModuleOp module) {
  llvm::StringMap<unsigned> counts;
  if (failed(muon::walkSymbolReferences(module, [&](SymbolRefAttr ref) {
        ++counts[ref.getRootReference()];
      })))
    return std::nullopt;
  return counts;
}

/// Whether `entry`'s body means the same in another function: no
/// attribute beyond what func-to-llvm gives a plain entry (an argument
/// attribute such as byval, varargs, a personality, target features or a
/// frame-pointer policy would be lost or wrong in the C interface).
bool isPlainEntry(LLVM::LLVMFuncOp entry) {
  if (entry.isVarArg())
    return false;
  static const llvm::StringLiteral kPlain[] = {
      "CConv",        "function_type",  "linkage",
      "sym_name",     "visibility_",    "sym_visibility",
      "unnamed_addr", "llvm.emit_c_interface"};
  for (NamedAttribute attr : entry->getAttrs())
    if (!llvm::is_contained(kPlain, attr.getName().strref()))
      return false;
  return true;
}

/// Moves `entry`'s body into `wrapper` in place of its call `call`, and
/// erases `entry`.
void inlineInto(LLVM::LLVMFuncOp entry, LLVM::LLVMFuncOp wrapper,
                LLVM::CallOp call) {
  Block &head = wrapper.getBody().front();
  Block &body = entry.getBody().front();
  for (auto [arg, value] : llvm::zip(body.getArguments(), call.getArgOperands()))
    arg.replaceAllUsesWith(value);
  body.eraseArguments(0, body.getNumArguments());
  Operation *ret = head.getTerminator();
  Location loc = call.getLoc();
  call.erase();
  ret->erase();
  wrapper.getBody().getBlocks().splice(wrapper.getBody().end(),
                                       entry.getBody().getBlocks());
  OpBuilder b = OpBuilder::atBlockEnd(&head);
  LLVM::BrOp::create(b, loc, &body);
  entry.erase();
}

struct MuonInlineEntryIntoCInterface
    : muon::impl::MuonInlineEntryIntoCInterfaceBase<
          MuonInlineEntryIntoCInterface> {
  void runOnOperation() override {
    // Each module (nested ones too) is its own symbol table.
    getOperation().walk([&](ModuleOp module) {
      SmallVector<LLVM::LLVMFuncOp> wrappers;
      for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
        if (fn.getName().starts_with(kCInterfacePrefix))
          wrappers.push_back(fn);
      if (wrappers.empty())
        return;
      SymbolTable symbols(module);
      std::optional<llvm::StringMap<unsigned>> uses = countUses(module);
      if (!uses)
        return;
      for (LLVM::LLVMFuncOp wrapper : wrappers) {
        LLVM::CallOp call = wrappedCall(wrapper);
        if (!call)
          continue;
        StringRef name = wrapper.getName().drop_front(kCInterfacePrefix.size());
        // A wrapper of a wrapper is left alone: the inner one is in
        // `wrappers` too and must not be erased under it.
        if (name.starts_with(kCInterfacePrefix))
          continue;
        auto entry = symbols.lookup<LLVM::LLVMFuncOp>(name);
        if (!entry || entry.isExternal() || *call.getCallee() != name ||
            entry.getFunctionType().getNumParams() !=
                call.getArgOperands().size() ||
            !isPlainEntry(entry))
          continue;
        // Only the wrapper's call may use the entry: anything else calling
        // or taking the address of `F` would lose it.
        if (uses->lookup(entry.getName()) != 1u)
          continue;
        inlineInto(entry, wrapper, call);
      }
    });
  }
};

} // namespace
