//===- Report.cpp - Per-parameter and per-rank tables of a muon.step ------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "StepCost.h"
#include "muon/Plan/Schedule.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>

namespace muon {
namespace optim {
#define GEN_PASS_DEF_MUONREPORT
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"
} // namespace optim
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;
using ::muon::plan::AxisRole;

namespace {
struct Traffic {
  std::vector<double> sent, received;
  double gathered = 0, scattered = 0;
};

/// Bytes every rank sends and receives for one parameter: the transfers of
/// its collective plan (the steps muon-expand-step emits). Gradient
/// reductions are not counted; gathers count as gathered bytes, scatters and
/// the broadcast to replicas as scattered bytes.
void addTraffic(const ParamFacts &p, const std::vector<plan::CommStep> &steps,
                const layout::Mesh &mesh, int64_t owner, int64_t elementBytes,
                Traffic &t) {
  for (const plan::CommStep &step : steps) {
    for (const plan::Transfer &x :
         plan::transfersOf(p.plan, step, p.shape, mesh, owner)) {
      double bytes = static_cast<double>(x.elements) * elementBytes;
      t.sent[x.from] += bytes;
      t.received[x.to] += bytes;
      (step.kind == plan::CommStep::Kind::Gather ? t.gathered : t.scattered) +=
          bytes;
    }
  }
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

/// The chain column: the plan's gathers (innermost first) and broadcast.
std::string chainStr(const std::vector<plan::CommStep> &steps,
                     const layout::Mesh &mesh) {
  std::string s, bcast;
  for (const plan::CommStep &step : steps) {
    if (step.kind == plan::CommStep::Kind::Gather) {
      s += (s.empty() ? "" : ",") + mesh.axisNames[step.axes[0]];
      s += step.split == plan::Split::Kind::Flat
               ? "(flat)"
               : "(d" + std::to_string(step.dim) + ")";
    }
    if (step.kind == plan::CommStep::Kind::Broadcast)
      for (int a : step.axes)
        bcast += (bcast.empty() ? "" : ",") + mesh.axisNames[a];
  }
  if (!bcast.empty())
    s += (s.empty() ? "" : " ") + std::string("bcast ") + bcast;
  return s.empty() ? "-" : s;
}

std::string coordsStr(const layout::Mesh &mesh, int64_t rank) {
  std::string s;
  std::vector<int64_t> c = mesh.coords(rank);
  for (int a = 0; a < mesh.numAxes(); ++a)
    s += (a ? "," : "") + mesh.axisNames[a] + "=" + std::to_string(c[a]);
  return s;
}

/// The estimates of every schedule of the step's owners against the lower
/// bound (the steps over the mesh are built once, in `estimator`).
void printScheduleEstimates(const plan::CostModel &model,
                            plan::ScheduleEstimator &estimator,
                            raw_ostream &os) {
  plan::Estimate rounds = estimator.estimate(plan::ScheduleKind::Rounds, 0);
  double bound = plan::lowerBound(rounds);
  os << llvm::format("schedule estimates (%lld ranks per node, %.0f GB/s in "
                     "a node, %.0f GB/s between nodes, NS at %.0f TFLOP/s):\n",
                     static_cast<long long>(model.ranksPerNode),
                     model.intraNode.bandwidth / 1e9,
                     model.interNode.bandwidth / 1e9,
                     model.nsFlopRate / 1e12);
  os << llvm::format("  %-18s %12s %10s %14s %14s\n", "schedule", "step_us",
                     "x_bound", "colls/rank", "peak_B/rank");
  auto row = [&](const char *name, const plan::Estimate &e) {
    int64_t colls = *std::max_element(e.collectives.begin(),
                                      e.collectives.end());
    double peak = *std::max_element(e.peakBytes.begin(), e.peakBytes.end());
    os << llvm::format("  %-18s %12.1f %10.3f %14lld %14.0f\n", name,
                       e.stepSeconds * 1e6,
                       bound > 0 ? e.stepSeconds / bound : 1.0,
                       static_cast<long long>(colls), peak);
  };
  row("naive", estimator.estimate(plan::ScheduleKind::Naive, 0));
  row("sequential", estimator.estimate(plan::ScheduleKind::Sequential, 0));
  row("rounds", rounds);
  row("rounds-unbatched",
      estimator.estimate(plan::ScheduleKind::Rounds, 0, false, false));
  row("rounds+prefetch1", estimator.estimate(plan::ScheduleKind::Rounds, 1));
  row("rounds+prefetch2", estimator.estimate(plan::ScheduleKind::Rounds, 2));
  os << llvm::format("  %-18s %12.1f %10.3f\n", "lower bound", bound * 1e6,
                     1.0);
}

} // namespace

void muon::optim::printStepReport(StepOp step, const StepFacts &facts,
                                 raw_ostream &os, bool schedules) {
  const layout::Mesh &mesh = facts.mesh;
  ArrayRef<int64_t> owners = *step.getOwners();
  int64_t nr = mesh.numRanks();
  std::vector<double> load(nr, 0.0);
  std::vector<int64_t> count(nr, 0);
  Traffic t{std::vector<double>(nr, 0.0), std::vector<double>(nr, 0.0)};

  os << "muon.step at " << step.getLoc() << ": " << facts.params.size()
     << " parameters on mesh @" << dist::MeshOp(facts.meshOp).getSymName() << " (" << nr
     << " ranks), strategy " << stringifyStrategy(step.getStrategy())
     << ", ns_steps " << step.getNsSteps() << "\n";
  os << llvm::format("%-5s %-28s %-14s %-8s %12s %12s %12s  %s\n", "param",
                     "name", "shape", "owner", "ns_flops", "gather_B",
                     "scatter_B", "chain (inner first)");
  for (auto [i, p] : llvm::enumerate(facts.params)) {
    int64_t elementBytes =
        std::max<int64_t>(1, p.type.getElementType().getIntOrFloatBitWidth() / 8);
    double flops = plan::ownerFlops(p.plan, p.shape, p.layout, mesh,
                                    step.getNsSteps());
    std::vector<int64_t> ranks = plan::ownerRanks(p.plan, mesh, owners[i]);
    for (int64_t r : ranks) {
      load[r] += flops;
      ++count[r];
    }
    std::vector<plan::CommStep> steps =
        plan::planSteps(p.plan, p.layout, p.gradLayout, mesh, owners[i]);
    double g0 = t.gathered, s0 = t.scattered;
    addTraffic(p, steps, mesh, owners[i], elementBytes, t);
    std::string owner = std::to_string(owners[i]);
    if (ranks.size() > 1)
      owner += "x" + std::to_string(ranks.size());
    std::string name = step.getParamInfoOf(i).getName().getValue().str();
    os << llvm::format("%-5zu %-28s %-14s %-8s %12.6g %12.0f %12.0f  %s\n", i,
                       name.empty() ? "-" : name.c_str(),
                       shapeStr(p.shape).c_str(), owner.c_str(),
                       flops * ranks.size(), t.gathered - g0,
                       t.scattered - s0,
                       chainStr(steps, mesh).c_str());
  }
  // What the compiled code does: rounds or one parameter at a time, with
  // blocking collectives.
  plan::CostModel model = costModelFor(step);
  plan::ScheduleEstimator estimator(costInputs(step, facts), mesh,
                                    step.getNsSteps(), model);
  int64_t prefetch = step.getPrefetchCount();
  plan::Estimate est = estimator.estimate(scheduleOf(step), prefetch);
  os << llvm::format("%-5s %-24s %8s %12s %12s %12s %10s %10s %6s %12s\n",
                     "rank", "coords", "params", "ns_flops", "sent_B",
                     "recv_B", "est_us", "exposed_us", "colls", "peak_B");
  double total = 0, peak = 0;
  for (int64_t r = 0; r < nr; ++r) {
    os << llvm::format("%-5lld %-24s %8lld %12.6g %12.0f %12.0f %10.1f "
                       "%10.1f %6lld %12.0f\n",
                       static_cast<long long>(r),
                       coordsStr(mesh, r).c_str(),
                       static_cast<long long>(count[r]), load[r], t.sent[r],
                       t.received[r], est.finish[r] * 1e6,
                       est.exposed(r) * 1e6,
                       static_cast<long long>(est.collectives[r]),
                       est.peakBytes[r]);
    total += load[r];
    peak = std::max(peak, load[r]);
  }
  double mean = total / static_cast<double>(nr);
  os << llvm::format("balance: max/mean NS load = %.4f (%.2f%% above "
                     "perfect)\n",
                     mean > 0 ? peak / mean : 1.0,
                     mean > 0 ? (peak / mean - 1.0) * 100.0 : 0.0);
  size_t rounds = plan::scheduleRounds(
                      std::vector<int64_t>(owners.begin(), owners.end()),
                      std::vector<double>(owners.size(), 0),
                      step.getAsyncGpuParallelism())
                      .size();
  // Collective calls per rank, batched as muon-expand-step emits them and
  // with one rooted call per gather and scatter.
  auto mostCalls = [](const plan::Estimate &e) {
    return static_cast<long long>(
        *std::max_element(e.collectives.begin(), e.collectives.end()));
  };
  plan::Estimate unbatched =
      estimator.estimate(scheduleOf(step), prefetch, false, /*batch=*/false);
  std::string collectives =
      prefetch > 0 ? "prefetch " + std::to_string(prefetch)
                   : std::string("blocking collectives");
  os << llvm::format("schedule: %s, %zu round%s, %s; "
                     "at most %lld collective calls per rank (%lld without "
                     "batching); estimated step %.1f us on the H100 model "
                     "(docs/schedule.md)\n",
                     step.getAsyncGpuParallelism() ? "rounds"
                                                   : "one parameter at a time",
                     rounds, rounds == 1 ? "" : "s", collectives.c_str(),
                     mostCalls(est), mostCalls(unbatched),
                     est.stepSeconds * 1e6);
  if (schedules)
    printScheduleEstimates(model, estimator, os);
}

namespace {
struct MuonReportPass : public ::muon::optim::impl::MuonReportBase<MuonReportPass> {
  using MuonReportBase::MuonReportBase;

  void runOnOperation() override {
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      getOperation().emitError("muon-report: ") << error;
      return signalPassFailure();
    }
    SymbolTableCollection tables;
    WalkResult result = getOperation().walk([&](StepOp step) {
      if (!step.getOwners()) {
        step.emitOpError("has no owners; run muon-assign-owners before "
                         "muon-report");
        return WalkResult::interrupt();
      }
      FailureOr<StepFacts> facts = analyzeStep(step, &tables);
      if (failed(facts) ||
          failed(dist::checkEnumerableMesh(step, facts->meshOp, "muon-report")))
        return WalkResult::interrupt();
      printStepReport(step, *facts, file->os(), schedules);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    file->keep();
  }
};
} // namespace
