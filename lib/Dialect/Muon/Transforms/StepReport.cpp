//===- StepReport.cpp - The tables of a muon.step, as data and as text ----===//
//
// buildStepReport computes what muon-report shows (per parameter, per rank,
// balance, schedule, optionally every schedule's estimate); the text and
// JSON printers only format it, so both forms always agree.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Dialect/Muon/Transforms/StepReport.h"
#include "StepCost.h"
#include "muon/Plan/Schedule.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;

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

/// The estimate row of one schedule.
ScheduleRow rowOf(const char *name, const plan::Estimate &e, double bound) {
  ScheduleRow row;
  row.name = name;
  row.stepSeconds = e.stepSeconds;
  row.timesBound = bound > 0 ? e.stepSeconds / bound : 1.0;
  row.collectivesPerRank =
      *std::max_element(e.collectives.begin(), e.collectives.end());
  row.peakBytesPerRank = *std::max_element(e.peakBytes.begin(),
                                           e.peakBytes.end());
  return row;
}
} // namespace

StepReport muon::optim::buildStepReport(StepOp step, const StepFacts &facts,
                                        bool schedules, int64_t nsStackBytes,
                                        const CostModelOptions &model) {
  const layout::Mesh &mesh = facts.mesh;
  ArrayRef<int64_t> owners = *step.getOwners();
  int64_t nr = mesh.numRanks();
  StepReport report;
  {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    os << step.getLoc();
    report.location = loc;
  }
  report.mesh = dist::MeshOp(facts.meshOp).getSymName().str();
  report.numRanks = nr;
  report.strategy = stringifyStrategy(step.getStrategy()).str();
  report.nsSteps = step.getNsSteps();
  std::vector<double> load(nr, 0.0);
  std::vector<int64_t> count(nr, 0);
  Traffic t{std::vector<double>(nr, 0.0), std::vector<double>(nr, 0.0)};
  for (auto [i, p] : llvm::enumerate(facts.params)) {
    int64_t elementBytes = std::max<int64_t>(
        1, p.type.getElementType().getIntOrFloatBitWidth() / 8);
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
    ParamRow row;
    row.index = static_cast<int64_t>(i);
    row.name = step.getParamInfoOf(i).getName().getValue().str();
    row.shape = p.shape;
    row.owner = owners[i];
    row.ownerRanks = static_cast<int64_t>(ranks.size());
    row.nsFlops = flops * static_cast<double>(ranks.size());
    row.gatheredBytes = t.gathered - g0;
    row.scatteredBytes = t.scattered - s0;
    row.chain = chainStr(steps, mesh);
    if (!p.plan.blocks.sizes.empty()) {
      row.blocks = static_cast<int64_t>(p.plan.blocks.sizes.size());
      row.blockDim = p.plan.blocks.dim;
      if (p.plan.blockAxis >= 0) {
        row.blockAxis = mesh.axisNames[p.plan.blockAxis];
        // The same parameter orthogonalised whole-matrix-wise: every split
        // gathered.
        plan::LocalTo local;
        for (int a = 0; a < mesh.numAxes(); ++a)
          if (p.plan.roles[a] == plan::AxisRole::Local)
            local = {a, p.plan.fixed[a]};
        plan::ParamPlan gathered;
        plan::planParam(p.shape, p.layout, mesh, local, gathered);
        Traffic whole{std::vector<double>(nr, 0.0),
                      std::vector<double>(nr, 0.0)};
        addTraffic(
            p,
            plan::planSteps(gathered, p.layout, p.gradLayout, mesh, owners[i]),
            mesh, owners[i], elementBytes, whole);
        row.blockSavedBytes = whole.gathered + whole.scattered -
                              row.gatheredBytes - row.scatteredBytes;
      }
    }
    plan::CommStep allReduce = plan::allReduceOfGradient(p.gradLayout, mesh);
    for (int64_t r = 0; r < nr; ++r) {
      std::vector<int64_t> c = mesh.coords(r);
      if (!plan::inGroup(p.plan, c))
        continue;
      for (const plan::CommStep &s : steps)
        if (s.kind == plan::CommStep::Kind::ReduceGrad)
          row.reduceBytes +=
              plan::reductionElements(s, p.shape, mesh, c) * elementBytes;
      row.allReduceBytes +=
          plan::reductionElements(allReduce, p.shape, mesh, c) * elementBytes;
    }
    report.params.push_back(std::move(row));
  }
  // What the compiled code does: its schedule, batching and prefetch.
  std::unique_ptr<plan::ScheduleEstimator> owned =
      estimatorOf(step, facts, nsStackBytes, model);
  plan::ScheduleEstimator &estimator = *owned;
  int64_t prefetch = step.getPrefetchCount();
  plan::Estimate est = estimator.estimate(scheduleOf(step), prefetch);
  double total = 0, peak = 0;
  for (int64_t r = 0; r < nr; ++r) {
    RankRow row;
    row.rank = r;
    row.coords = mesh.coords(r);
    row.params = count[r];
    row.nsFlops = load[r];
    row.sentBytes = t.sent[r];
    row.receivedBytes = t.received[r];
    row.estimatedSeconds = est.finish[r];
    row.exposedSeconds = est.exposed(r);
    row.collectives = est.collectives[r];
    row.peakBytes = est.peakBytes[r];
    report.ranks.push_back(std::move(row));
    total += load[r];
    peak = std::max(peak, load[r]);
  }
  report.axisNames = mesh.axisNames;
  double mean = total / static_cast<double>(nr);
  report.balance = mean > 0 ? peak / mean : 1.0;
  report.rounds =
      static_cast<int64_t>(roundsOf(step, facts, nsStackBytes).size());
  // One parameter at a time never stacks (rounds of one).
  report.nsStackBytes = step.getAsyncGpuParallelism() ? nsStackBytes : 0;
  report.roundsSchedule = step.getAsyncGpuParallelism();
  report.prefetch = prefetch;
  report.defaultModel = model.isDefault();
  report.earlyReleaseRounds =
      std::count_if(est.releaseGroups.begin(), est.releaseGroups.end(),
                    [](size_t groups) { return groups > 1; });
  auto mostCalls = [](const plan::Estimate &e) {
    return *std::max_element(e.collectives.begin(), e.collectives.end());
  };
  report.collectivesPerRank = mostCalls(est);
  report.unbatchedCollectivesPerRank = mostCalls(
      estimator.estimate(scheduleOf(step), prefetch, false, /*batch=*/false));
  report.estimatedStepSeconds = est.stepSeconds;
  if (schedules) {
    plan::Estimate rounds = estimator.estimate(plan::ScheduleKind::Rounds, 0);
    double bound = plan::lowerBound(rounds);
    report.hasSchedules = true;
    report.model = costModelFor(step, model);
    report.lowerBoundSeconds = bound;
    report.pathBoundSeconds = std::max(bound, estimator.ownerPathBound());
    report.schedules = {
        rowOf("naive", estimator.estimate(plan::ScheduleKind::Naive, 0),
              bound),
        rowOf("sequential",
              estimator.estimate(plan::ScheduleKind::Sequential, 0), bound),
        rowOf("rounds", rounds, bound),
        rowOf("rounds-unbatched",
              estimator.estimate(plan::ScheduleKind::Rounds, 0, false, false),
              bound),
        rowOf("rounds+prefetch1",
              estimator.estimate(plan::ScheduleKind::Rounds, 1), bound),
        rowOf("rounds+prefetch2",
              estimator.estimate(plan::ScheduleKind::Rounds, 2), bound)};
  }
  return report;
}

namespace {
std::string coordsStr(const StepReport &report, const RankRow &row) {
  std::string s;
  for (size_t a = 0; a < report.axisNames.size(); ++a)
    s += (a ? "," : "") + report.axisNames[a] + "=" +
         std::to_string(row.coords[a]);
  return s;
}
} // namespace

/// A parameter's name as a table shows it: `-` when it has none, bytes that
/// would break the table (control characters, quotes, backslashes, non-ASCII)
/// escaped as MLIR strings write them (`\0A`).
static std::string displayName(StringRef name) {
  if (name.empty())
    return "-";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::printEscapedString(name, os);
  return text;
}

void muon::optim::printStepReport(const StepReport &report, raw_ostream &os) {
  os << "muon.step at " << report.location << ": " << report.params.size()
     << " parameters on mesh @" << report.mesh << " (" << report.numRanks
     << " ranks), strategy " << report.strategy << ", ns_steps "
     << report.nsSteps << "\n";
  os << llvm::format("%-5s %-28s %-14s %-8s %12s %12s %12s %12s %12s  %s\n",
                     "param", "name", "shape", "owner", "ns_flops", "gather_B",
                     "scatter_B", "reduce_B", "allreduce_B",
                     "chain (inner first)");
  for (const ParamRow &p : report.params) {
    std::string owner = std::to_string(p.owner);
    if (p.ownerRanks > 1)
      owner += "x" + std::to_string(p.ownerRanks);
    os << llvm::format(
        "%-5lld %-28s %-14s %-8s %12.6g %12.0f %12.0f %12.0f %12.0f  %s\n",
        static_cast<long long>(p.index), displayName(p.name).c_str(),
        layout::shapeString(p.shape).c_str(), owner.c_str(), p.nsFlops,
        p.gatheredBytes, p.scatteredBytes, p.reduceBytes, p.allReduceBytes,
        p.chain.c_str());
  }
  for (const ParamRow &p : report.params) {
    if (!p.blocks)
      continue;
    os << "blocked Newton-Schulz: param " << p.index << " ("
       << displayName(p.name) << "): " << p.blocks << " blocks along dim "
       << p.blockDim;
    if (!p.blockAxis.empty())
      os << llvm::format("; %s holds whole blocks, orthogonalised where they "
                         "are: %.0f B of gathers and scatters saved",
                         p.blockAxis.c_str(), p.blockSavedBytes);
    os << "\n";
  }
  os << llvm::format("%-5s %-24s %8s %12s %12s %12s %10s %10s %6s %12s\n",
                     "rank", "coords", "params", "ns_flops", "sent_B",
                     "recv_B", "est_us", "exposed_us", "colls", "peak_B");
  for (const RankRow &r : report.ranks)
    os << llvm::format("%-5lld %-24s %8lld %12.6g %12.0f %12.0f %10.1f "
                       "%10.1f %6lld %12.0f\n",
                       static_cast<long long>(r.rank),
                       coordsStr(report, r).c_str(),
                       static_cast<long long>(r.params), r.nsFlops,
                       r.sentBytes, r.receivedBytes, r.estimatedSeconds * 1e6,
                       r.exposedSeconds * 1e6,
                       static_cast<long long>(r.collectives), r.peakBytes);
  os << llvm::format("balance: max/mean NS load = %.4f (%.2f%% above "
                     "perfect)\n",
                     report.balance, (report.balance - 1.0) * 100.0);
  std::string collectives =
      report.prefetch > 0 ? "prefetch " + std::to_string(report.prefetch)
                          : std::string("blocking collectives");
  if (prefetchPastLastRound(report.prefetch, report.rounds))
    collectives += " (past the last round: every round in flight)";
  if (report.earlyReleaseRounds > 0)
    collectives += ", " + std::to_string(report.earlyReleaseRounds) +
                   (report.earlyReleaseRounds == 1 ? " round releases"
                                                   : " rounds release") +
                   " lighter owners' results first";
  if (report.nsStackBytes > 0)
    collectives += ", Newton-Schulz stacked up to " +
                   std::to_string(report.nsStackBytes) + " bytes";
  os << llvm::format(
      "schedule: %s, %lld round%s, %s; "
      "at most %lld collective calls per rank (%lld without "
      "batching); estimated step %.1f us on the %s "
      "(docs/schedule.md)\n",
      report.roundsSchedule ? "rounds" : "one parameter at a time",
      static_cast<long long>(report.rounds), report.rounds == 1 ? "" : "s",
      collectives.c_str(), static_cast<long long>(report.collectivesPerRank),
      static_cast<long long>(report.unbatchedCollectivesPerRank),
      report.estimatedStepSeconds * 1e6,
      report.defaultModel ? "H100 model" : "cost model of the options");
  if (!report.hasSchedules)
    return;
  const plan::CostModel &model = report.model;
  os << llvm::format("schedule estimates (%lld ranks per node, %g GB/s and "
                     "%g us in a node, %g GB/s and %g us between nodes, NS "
                     "at %g TFLOP/s):\n",
                     static_cast<long long>(model.ranksPerNode),
                     model.intraNode.bandwidth / 1e9,
                     model.intraNode.latency * 1e6,
                     model.interNode.bandwidth / 1e9,
                     model.interNode.latency * 1e6, model.nsFlopRate / 1e12);
  os << llvm::format("  %-18s %12s %10s %14s %14s\n", "schedule", "step_us",
                     "x_bound", "colls/rank", "peak_B/rank");
  for (const ScheduleRow &s : report.schedules)
    os << llvm::format("  %-18s %12.1f %10.3f %14lld %14.0f\n",
                       s.name.c_str(), s.stepSeconds * 1e6, s.timesBound,
                       static_cast<long long>(s.collectivesPerRank),
                       s.peakBytesPerRank);
  os << llvm::format("  %-18s %12.1f %10.3f\n", "lower bound",
                     report.lowerBoundSeconds * 1e6, 1.0);
  os << llvm::format("  %-18s %12.1f %10.3f\n", "owner path bound",
                     report.pathBoundSeconds * 1e6,
                     report.lowerBoundSeconds > 0
                         ? report.pathBoundSeconds / report.lowerBoundSeconds
                         : 1.0);
}

void muon::optim::printStepReport(StepOp step, const StepFacts &facts,
                                  raw_ostream &os, bool schedules) {
  printStepReport(buildStepReport(step, facts, schedules), os);
}

/// A byte count (a whole number, held as a double) as a JSON integer, so
/// that it keeps every digit the text report prints; a double would print
/// 2^61 as 2.305843009213694e+18. Past 2^64 it stays a double.
static llvm::json::Value byteCount(double bytes) {
  constexpr double twoTo63 = 9223372036854775808.0;
  if (bytes >= 0 && bytes < twoTo63)
    return static_cast<int64_t>(bytes);
  if (bytes >= twoTo63 && bytes < 2 * twoTo63)
    return static_cast<uint64_t>(bytes);
  return bytes;
}

llvm::json::Value muon::optim::stepReportJson(const StepReport &report) {
  namespace json = llvm::json;
  json::Array params, ranks, schedules;
  for (const ParamRow &p : report.params)
    params.push_back(
        json::Object{{"index", p.index},
                     {"name", p.name},
                     {"shape", json::Array(p.shape)},
                     {"owner", p.owner},
                     {"owner_ranks", p.ownerRanks},
                     {"ns_flops", p.nsFlops},
                     {"gather_bytes", byteCount(p.gatheredBytes)},
                     {"scatter_bytes", byteCount(p.scatteredBytes)},
                     {"reduce_bytes", byteCount(p.reduceBytes)},
                     {"ns_blocks", p.blocks},
                     {"block_axis", p.blockAxis},
                     {"block_saved_bytes", byteCount(p.blockSavedBytes)},
                     {"allreduce_bytes", byteCount(p.allReduceBytes)},
                     {"chain", p.chain}});
  for (const RankRow &r : report.ranks) {
    json::Object coords;
    for (size_t a = 0; a < report.axisNames.size(); ++a)
      coords[report.axisNames[a]] = r.coords[a];
    ranks.push_back(json::Object{{"rank", r.rank},
                                 {"coords", std::move(coords)},
                                 {"params", r.params},
                                 {"ns_flops", r.nsFlops},
                                 {"sent_bytes", byteCount(r.sentBytes)},
                                 {"recv_bytes", byteCount(r.receivedBytes)},
                                 {"est_us", r.estimatedSeconds * 1e6},
                                 {"exposed_us", r.exposedSeconds * 1e6},
                                 {"collectives", r.collectives},
                                 {"peak_bytes", byteCount(r.peakBytes)}});
  }
  json::Object out{
      {"location", report.location},
      {"mesh", report.mesh},
      {"num_ranks", report.numRanks},
      {"axes", json::Array(report.axisNames)},
      {"strategy", report.strategy},
      {"ns_steps", report.nsSteps},
      {"params", std::move(params)},
      {"ranks", std::move(ranks)},
      {"balance", report.balance},
      {"schedule",
       json::Object{{"kind", report.roundsSchedule ? "rounds" : "sequential"},
                    {"rounds", report.rounds},
                    {"prefetch", report.prefetch},
                    {"early_release_rounds", report.earlyReleaseRounds},
                    {"ns_stack_bytes", report.nsStackBytes},
                    {"collectives_per_rank", report.collectivesPerRank},
                    {"collectives_per_rank_unbatched",
                     report.unbatchedCollectivesPerRank},
                    {"est_step_us", report.estimatedStepSeconds * 1e6}}}};
  if (report.hasSchedules) {
    for (const ScheduleRow &s : report.schedules)
      schedules.push_back(
          json::Object{{"schedule", s.name},
                       {"step_us", s.stepSeconds * 1e6},
                       {"x_bound", s.timesBound},
                       {"collectives_per_rank", s.collectivesPerRank},
                       {"peak_bytes_per_rank", byteCount(s.peakBytesPerRank)}});
    out["schedule_estimates"] = std::move(schedules);
    out["lower_bound_us"] = report.lowerBoundSeconds * 1e6;
    out["owner_path_bound_us"] = report.pathBoundSeconds * 1e6;
  }
  return out;
}

void muon::optim::printStepReportsJson(llvm::json::Array reports,
                                       llvm::raw_ostream &os) {
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(reports))) << "\n";
}
