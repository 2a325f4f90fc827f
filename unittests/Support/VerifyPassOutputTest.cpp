//===- VerifyPassOutputTest.cpp - Generated IR that does not verify -------===//
//
// A pass that generates invalid IR must report its own bug, not let the
// verifier blame the user's op: the error names the pass, and the
// verifier's message follows as a note.
//
//===----------------------------------------------------------------------===//

#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

constexpr const char *kModule = R"mlir(
  func.func @f() -> i32 {
    %c = arith.constant 1 : i32
    return %c : i32
  }
)mlir";

struct Seen {
  std::string message;
  std::vector<std::string> notes;
};

class VerifyPassOutputTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<func::FuncDialect, arith::ArithDialect>();
    module = parseSourceString<ModuleOp>(kModule, &context);
    ASSERT_TRUE(module);
  }

  LogicalResult run(std::vector<Seen> &seen) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      Seen s{d.str(), {}};
      for (Diagnostic &note : d.getNotes())
        s.notes.push_back(note.str());
      seen.push_back(std::move(s));
      return success();
    });
    return muon::verifyPassOutput(*module, "some-pass");
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(VerifyPassOutputTest, ValidOutputPassesSilently) {
  std::vector<Seen> seen;
  EXPECT_TRUE(succeeded(run(seen)));
  EXPECT_TRUE(seen.empty());
}

TEST_F(VerifyPassOutputTest, InvalidOutputIsTheCompilersBug) {
  // What a buggy pass might leave: a return with no value for an i32 result.
  module->walk([](func::ReturnOp ret) { ret->setOperands({}); });
  std::vector<Seen> seen;
  EXPECT_TRUE(failed(run(seen)));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].message,
            "internal error: some-pass generated IR that does not verify (a "
            "compiler bug, not a problem with this input; please report it "
            "with the input)");
  ASSERT_EQ(seen[0].notes.size(), 1u);
  EXPECT_NE(seen[0].notes[0].find("the verifier said: 'func.return' op has 0 "
                                  "operands, but enclosing function (@f) "
                                  "returns 1"),
            std::string::npos)
      << seen[0].notes[0];
}

} // namespace
