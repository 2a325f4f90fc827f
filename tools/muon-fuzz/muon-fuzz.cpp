//===- muon-fuzz.cpp - libFuzzer target: parse, verify, lower -------------===//
//
// Every input goes through what a user's file goes through: parse, verify,
// the checking passes a user runs on their own (dist-verify-spmd,
// dist-verify-reduced, dist-propagate-reduced then dist-lower-redistribute),
// and the whole muon-to-llvm pipeline, with the verifier after each pass.
// Any outcome but a crash, a sanitizer report, a hang or a runaway
// allocation is fine: a diagnostic is the expected end of a bad input.
// Except two, which are compiler bugs and abort (a finding): a pass that
// succeeds but leaves IR that does not verify (our own passes report that
// as an "internal error" diagnostic; upstream ones are checked after each
// pass here), and any "internal error" diagnostic.
//
// Inputs beyond the envelope below are skipped, not run: the compiler's
// cost still grows with the number of ranks and elements
// (docs/reliability.md, "Not promised yet"), and a fuzzer that spends its
// time on a 2^31-rank mesh finds nothing else.
//
// At exit the target prints how many inputs ended in each way.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Dist/IR/DistOps.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"
#include "muon/InitAll.h"
#include "muon/Support/LargeStack.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace {
MLIRContext *context;

struct Counts {
  long inputs = 0, tooLarge = 0, parseFailed = 0, verifyFailed = 0,
       outsideEnvelope = 0, loweringFailed = 0, lowered = 0;
} counts;

constexpr int64_t kMaxRanks = 64;
constexpr int64_t kMaxElements = int64_t(1) << 20;
constexpr size_t kMaxBytes = 1 << 16;

/// Whether every mesh and distributed tensor is small enough to lower fast.
bool withinEnvelope(ModuleOp module) {
  bool ok = true;
  auto checkType = [&](Type t) {
    if (auto dt = dyn_cast<muon::dist::DistTensorType>(t)) {
      int64_t n = 1;
      for (int64_t d : dt.getShape())
        if (d < 0 || (d && n > kMaxElements / d) || (n *= d) > kMaxElements)
          ok = false;
    }
  };
  module.walk([&](Operation *op) {
    if (auto mesh = dyn_cast<muon::dist::MeshOp>(op)) {
      int64_t n = 1;
      for (int64_t s : mesh.getShape())
        if (s <= 0 || n > kMaxRanks / s || (n *= s) > kMaxRanks)
          ok = false;
    }
    if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
      for (Type t : fn.getArgumentTypes())
        checkType(t);
      for (Type t : fn.getResultTypes())
        checkType(t);
    }
    for (Type t : op->getResultTypes())
      checkType(t);
  });
  return ok;
}

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "muon-fuzz: finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Verifies the IR after every pass that succeeded (the pass manager's own
/// verifier is off, so that a failure can be told apart from a diagnostic).
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      finding(std::string("pass '") + pass->getArgument().str() +
              "' succeeded but left IR that does not verify");
  }
};

void printCounts() {
  std::fprintf(stderr,
               "muon-fuzz: %ld inputs: %ld too large, %ld did not parse, %ld "
               "did not verify, %ld outside the envelope, %ld ended in a "
               "lowering diagnostic, %ld lowered\n",
               counts.inputs, counts.tooLarge, counts.parseFailed,
               counts.verifyFailed, counts.outsideEnvelope,
               counts.loweringFailed, counts.lowered);
}
} // namespace

/// LLVM's BumpPtrAllocator poisons its free space when compiled with ASan:
/// our instrumented copy of the template would then trip over writes from
/// the uninstrumented libMLIR.so into the same slabs (a false
/// use-after-poison). Turn manual poisoning off; leaks in MLIR's global
/// uniquers are not findings either.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  DialectRegistry registry;
  muon::registerAllDialects(registry);
  context = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // Diagnostics are the expected outcome: count them, do not print them.
  context->getDiagEngine().registerHandler([](Diagnostic &d) {
    std::string message = d.str();
    if (llvm::StringRef(message).contains("internal error"))
      finding("diagnostic: " + message);
    return success();
  });
  std::atexit(printCounts);
  return 0;
}

namespace {
/// One input: parsed, verified and lowered.
int parseAndLower(const uint8_t *data, size_t size) {
  // As a file is read: into a NUL-terminated buffer. MLIR's lexer looks
  // past the end of an unterminated one (parseSourceString on libFuzzer's
  // exact-size input reads out of bounds in upstream code).
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz-input"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sources, ParserConfig(context));
  if (!module) {
    ++counts.parseFailed;
    return 0;
  }
  if (failed(verify(*module))) {
    ++counts.verifyFailed;
    return 0;
  }
  if (!withinEnvelope(*module)) {
    ++counts.outsideEnvelope;
    return -1;
  }
  // The checking passes, each on its own (one's diagnostic must not hide
  // another's crash), the rewriting ones on a copy.
  for (int check = 0; check < 3; ++check) {
    PassManager checks(context);
    checks.enableVerifier(false);
    checks.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
    OwningOpRef<ModuleOp> copy = module->clone();
    if (check == 0)
      checks.addPass(muon::dist::createDistVerifySpmd());
    if (check == 1)
      checks.addPass(muon::dist::createDistVerifyReduced());
    if (check == 2) {
      checks.addPass(muon::dist::createDistPropagateReduced());
      checks.addPass(muon::dist::createDistLowerRedistribute());
    }
    (void)checks.run(*copy);
  }
  PassManager pm(context);
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
  muon::buildMuonToLLVMPipeline(pm, muon::MuonToLLVMOptions());
  if (failed(pm.run(*module)))
    ++counts.loweringFailed;
  else
    ++counts.lowered;
  return 0;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++counts.inputs;
  if (size > kMaxBytes) {
    ++counts.tooLarge;
    return -1;
  }
  // On a large stack, as muon-opt and muon-run parse and lower: what
  // nests deeper than the default stack takes is not a finding there.
  return muon::runOnLargeStack("muon-fuzz",
                               [&] { return parseAndLower(data, size); });
}
