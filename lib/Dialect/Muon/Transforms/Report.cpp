//===- Report.cpp - The muon-report pass ----------------------------------===//
//
// Prints the tables of every muon.step (StepReport.cpp builds and formats
// them) as text or JSON.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Dialect/Muon/Transforms/StepReport.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace muon {
namespace optim {
#define GEN_PASS_DEF_MUONREPORT
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"
} // namespace optim
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;

namespace {
struct MuonReportPass : public ::muon::optim::impl::MuonReportBase<MuonReportPass> {
  using MuonReportBase::MuonReportBase;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      mlir::emitError(getOperation().getLoc(), "muon-report: unknown format '")
          << format << "'; expected 'text' or 'json'";
      return signalPassFailure();
    }
    if (nsStackBytes < 0) {
      mlir::emitError(getOperation().getLoc(),
                      "muon-report: ns-stack-bytes must be 0 (no "
                      "stacks) or a byte count, got ")
          << static_cast<int64_t>(nsStackBytes);
      return signalPassFailure();
    }
    FailureOr<CostModelOptions> model = costModelOptions(
        getOperation().getLoc(), getArgument(), ranksPerNode, intraNodeGBps,
        intraNodeLatencyUs, interNodeGBps, interNodeLatencyUs, nsTflops);
    if (failed(model))
      return signalPassFailure();
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      mlir::emitError(getOperation().getLoc(), "muon-report: ") << error;
      return signalPassFailure();
    }
    SymbolTableCollection tables;
    llvm::json::Array reports;
    WalkResult result = getOperation().walk([&](StepOp step) {
      // Layouts first: a global-view step is told to import them, which
      // comes before assigning owners.
      FailureOr<StepFacts> facts = analyzeStep(step, &tables);
      if (succeeded(facts) && !step.getOwners()) {
        step.emitOpError("has no owners; run muon-assign-owners before "
                         "muon-report");
        return WalkResult::interrupt();
      }
      if (failed(facts) ||
          failed(dist::checkEnumerableMesh(step, facts->meshOp, "muon-report")))
        return WalkResult::interrupt();
      StepReport report =
          buildStepReport(step, *facts, schedules, nsStackBytes, *model);
      if (format == "json")
        reports.push_back(stepReportJson(report));
      else
        printStepReport(report, file->os());
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (format == "json")
      printStepReportsJson(std::move(reports), file->os());
    file->keep();
  }
};
} // namespace
