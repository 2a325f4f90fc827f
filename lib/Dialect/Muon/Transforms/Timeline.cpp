//===- Timeline.cpp - The estimated timeline of a muon.step ---------------===//

#include "StepCost.h"

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Plan/Trace.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace muon {
namespace optim {
#define GEN_PASS_DEF_MUONTIMELINE
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"
} // namespace optim
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace plan = ::muon::plan;

namespace {
struct MuonTimelinePass
    : public ::muon::optim::impl::MuonTimelineBase<MuonTimelinePass> {
  using MuonTimelineBase::MuonTimelineBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (output.empty()) {
      mlir::emitError(module.getLoc(),
                      "muon-timeline: no output file (pass output=FILE, "
                      "or output=- for stdout)");
      return signalPassFailure();
    }
    std::optional<plan::ScheduleKind> kind;
    if (schedule == "naive")
      kind = plan::ScheduleKind::Naive;
    else if (schedule == "sequential")
      kind = plan::ScheduleKind::Sequential;
    else if (schedule == "rounds")
      kind = plan::ScheduleKind::Rounds;
    else if (schedule != "step") {
      mlir::emitError(module.getLoc(), "muon-timeline: unknown schedule '")
          << schedule << "'; expected step, naive, sequential or rounds";
      return signalPassFailure();
    }
    if (prefetch < 0 || prefetch > 64) {
      mlir::emitError(module.getLoc(),
                      "muon-timeline: prefetch must be in [0, 64], got ")
          << static_cast<int64_t>(prefetch);
      return signalPassFailure();
    }
    if (nsStackBytes < 0) {
      mlir::emitError(module.getLoc(),
                      "muon-timeline: ns-stack-bytes must be 0 (no stacks) "
                      "or a byte count, got ")
          << static_cast<int64_t>(nsStackBytes);
      return signalPassFailure();
    }
    FailureOr<CostModelOptions> model = costModelOptions(
        module.getLoc(), getArgument(), ranksPerNode, intraNodeGBps,
        intraNodeLatencyUs, interNodeGBps, interNodeLatencyUs, nsTflops);
    if (failed(model))
      return signalPassFailure();
    if (failed(dist::verifyDistTypesIn(module)))
      return signalPassFailure();

    std::vector<plan::TraceEvent> events;
    int64_t numRanks = 0;
    double offset = 0;
    WalkResult result = module.walk([&](StepOp step) {
      // Layouts first: a global-view step is told to import them, which
      // comes before assigning owners.
      FailureOr<StepFacts> facts = analyzeStep(step);
      if (succeeded(facts) && !step.getOwners()) {
        step.emitOpError("has no owners; run muon-assign-owners before "
                         "muon-timeline");
        return WalkResult::interrupt();
      }
      if (failed(facts) || failed(dist::checkEnumerableMesh(
                               step, facts->meshOp, "muon-timeline")))
        return WalkResult::interrupt();
      plan::ScheduleKind k = kind ? *kind : scheduleOf(step);
      // What the step compiles to prefetches by its own attribute unless
      // the option says otherwise.
      int64_t depth = !kind && prefetch.getNumOccurrences() == 0
                          ? step.getPrefetchCount()
                          : static_cast<int64_t>(prefetch);
      plan::Estimate est =
          estimatorOf(step, *facts, nsStackBytes, *model)
              ->estimate(k, k == plan::ScheduleKind::Naive ? 0 : depth,
                         /*trace=*/true);
      for (plan::TraceEvent &e : est.trace) {
        e.start += offset;
        e.end += offset;
        events.push_back(std::move(e));
      }
      offset += est.stepSeconds;
      numRanks = std::max(numRanks, facts->mesh.numRanks());
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      mlir::emitError(module.getLoc(), "muon-timeline: ") << error;
      return signalPassFailure();
    }
    file->os() << plan::chromeTraceJson(events, numRanks,
                                        "muon-timeline estimate");
    file->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
