//===- SymbolReferencesTest.cpp - Every symbol reference under an op ------===//
//
// The walk must see what SymbolTable::getSymbolUses sees: references in
// inherent attributes (read one by one), in discardable ones, nested in
// arrays, dictionaries and types, on ops with and without properties, and
// in nested symbol tables; and it must give up at an unregistered op with
// regions.
//
//===----------------------------------------------------------------------===//

#include "muon/Support/SymbolReferences.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace mlir;

namespace {

std::map<std::string, int> countReferences(MLIRContext &context,
                                           const char *text, bool &ok) {
  context.allowUnregisteredDialects();
  context.loadDialect<func::FuncDialect, LLVM::LLVMDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  EXPECT_TRUE(module);
  std::map<std::string, int> counts;
  ok = succeeded(muon::walkSymbolReferences(*module, [&](SymbolRefAttr ref) {
    ++counts[ref.getRootReference().str()];
  }));
  // What upstream finds, where it can.
  if (ok) {
    std::map<std::string, int> upstream;
    if (auto uses = SymbolTable::getSymbolUses(&module->getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *uses)
        ++upstream[use.getSymbolRef().getRootReference().str()];
    for (auto &[name, n] : upstream)
      EXPECT_GE(counts[name], n) << name;
  }
  return counts;
}

TEST(SymbolReferencesTest, EveryKindOfHolder) {
  MLIRContext context;
  bool ok = false;
  auto counts = countReferences(context, R"mlir(
    func.func private @callee()
    llvm.func @target()
    func.func @f() {
      func.call @callee() : () -> ()
      func.call @callee() {note = {inner = [@noted]}} : () -> ()
      "test.again"() {note = {inner = [@noted]}} : () -> ()
      %p = llvm.mlir.addressof @target : !llvm.ptr
      "test.plain"() {ref = @plain, nested = [[@deep]]} : () -> ()
      return
    }
    module @inner {
      func.func private @callee()
      func.func @g() {
        func.call @callee() : () -> ()
        return
      }
    }
  )mlir", ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(counts["callee"], 3);
  // The same (uniqued) attribute on two ops: both references.
  EXPECT_EQ(counts["noted"], 2);
  EXPECT_EQ(counts["target"], 1);
  EXPECT_EQ(counts["plain"], 1);
  EXPECT_EQ(counts["deep"], 1);
}

TEST(SymbolReferencesTest, UnregisteredRegionsAreUnknown) {
  MLIRContext context;
  bool ok = true;
  countReferences(context, R"mlir(
    func.func private @callee()
    "test.region"() ({
      "test.use"() {ref = @callee} : () -> ()
    }) : () -> ()
  )mlir", ok);
  EXPECT_FALSE(ok);
}

} // namespace
