//===- StepReport.h - The tables of a muon.step as data ---------*- C++ -*-===//
//
// What muon-report shows, computed once (buildStepReport) and printed as
// text or as JSON (the C API and the Python package read the JSON).
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_MUON_TRANSFORMS_STEPREPORT_H
#define MUON_DIALECT_MUON_TRANSFORMS_STEPREPORT_H

#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Muon/Transforms/CostModelOptions.h"
#include "muon/Plan/Schedule.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace muon {
namespace optim {

struct StepFacts;

/// One row of muon-report's parameter table.
struct ParamRow {
  int64_t index = 0;
  std::string name; ///< "" when the parameter has none.
  std::vector<int64_t> shape;
  int64_t owner = 0;
  int64_t ownerRanks = 1; ///< Ranks that orthogonalise a part (experts).
  double nsFlops = 0, gatheredBytes = 0, scatteredBytes = 0;
  /// Bytes all ranks send to reduce a partial gradient: as the plan does it
  /// (reduce-scatters into the storage, then all-reduces), and as one
  /// all-reduce of the whole gradient would (ring algorithms).
  double reduceBytes = 0, allReduceBytes = 0;
  /// Blocked Newton-Schulz (a `split` annotation): the blocks along
  /// `blockDim`, the axis whose shards hold whole blocks ("" when none),
  /// and the gather and scatter bytes that saves against gathering it.
  int64_t blocks = 0, blockDim = -1;
  std::string blockAxis;
  double blockSavedBytes = 0;
  std::string chain; ///< Gathers innermost first, then broadcasts.
};

/// One row of the rank table; times in seconds on the cost model.
struct RankRow {
  int64_t rank = 0;
  std::vector<int64_t> coords;
  int64_t params = 0;
  double nsFlops = 0, sentBytes = 0, receivedBytes = 0;
  double estimatedSeconds = 0, exposedSeconds = 0;
  int64_t collectives = 0;
  double peakBytes = 0;
};

/// The estimate of one schedule of the step's owners.
struct ScheduleRow {
  std::string name;
  double stepSeconds = 0, timesBound = 0;
  int64_t collectivesPerRank = 0;
  double peakBytesPerRank = 0;
};

/// What muon-report shows for one step with owners, as data.
struct StepReport {
  std::string location, mesh, strategy;
  int64_t numRanks = 0, nsSteps = 0;
  std::vector<std::string> axisNames;
  std::vector<ParamRow> params;
  std::vector<RankRow> ranks;
  double balance = 1; ///< max / mean NS load.
  bool roundsSchedule = true;
  int64_t rounds = 0, prefetch = 0;
  /// Rounds whose results leave in two release groups
  /// (plan::releaseGroups).
  int64_t earlyReleaseRounds = 0;
  int64_t nsStackBytes = 0; // the stacks the rounds were made with (0: none)
  int64_t collectivesPerRank = 0, unbatchedCollectivesPerRank = 0;
  double estimatedStepSeconds = 0;
  /// Whether the estimates ran on the default (H100) cost model.
  bool defaultModel = true;
  bool hasSchedules = false;
  ::muon::plan::CostModel model;
  std::vector<ScheduleRow> schedules;
  double lowerBoundSeconds = 0;
  /// max(lowerBoundSeconds, plan::ScheduleEstimator::ownerPathBound): the
  /// bound for schedules that orthogonalise each matrix whole on its owner.
  double pathBoundSeconds = 0;
};

/// The tables of one step with owners (per parameter, per rank with the
/// estimate of its schedule, balance, schedule), from the step's collective
/// plans. With `schedules`, also the estimated step time of every schedule
/// of the step's owners (naive, one at a time, rounds, rounds unbatched,
/// rounds with prefetch 1 and 2) against the lower bound. Every estimate
/// runs on the cost model of `model` (the H100 model by default). With
/// `nsStackBytes` > 0 the rounds (and their estimates) stack an owner's
/// matrices as muon-expand-step{ns-stack-bytes} does.
StepReport buildStepReport(StepOp step, const StepFacts &facts,
                           bool schedules = false, int64_t nsStackBytes = 0,
                           const CostModelOptions &model = {});

/// muon-report's text, and the same report as JSON (docs/muon-dialect.md).
void printStepReport(const StepReport &report, llvm::raw_ostream &os);
llvm::json::Value stepReportJson(const StepReport &report);
/// Reports (one stepReportJson per step) as muon-report{format=json} and
/// the C API print them: one array, indented by two, then a newline.
void printStepReportsJson(llvm::json::Array reports, llvm::raw_ostream &os);

} // namespace optim
} // namespace muon

#endif // MUON_DIALECT_MUON_TRANSFORMS_STEPREPORT_H
