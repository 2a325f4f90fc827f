//===- Schedule.h - Order of a step's parameters, and its cost -*- C++ -*-===//
//
// Which order the parameters of a step are updated in (rounds, or one at a
// time), and an estimate of what a schedule costs per rank: an alpha-beta
// model of every collective of the plans (plan::planSteps) plus the
// Newton-Schulz FLOP model, simulated rank by rank. Plain C++ over the plan
// and layout libraries: muon-expand-step orders its code with
// scheduleRounds, muon-report prints estimates, bench/schedule compares
// schedules.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_PLAN_SCHEDULE_H
#define MUON_PLAN_SCHEDULE_H

#include "muon/Plan/Batch.h"
#include "muon/Plan/ParamPlan.h"
#include "muon/Plan/Trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace muon {
namespace plan {

/// What lets parameters of one owner share one batched Newton-Schulz call:
/// the same `kind` (e.g. the matrix's shape and element type; empty: never
/// stacked), and the bytes one matrix adds to the stack (a parameter with
/// `bytes` <= 0 is never stacked either).
struct NsStackKey {
  std::vector<int64_t> kind;
  int64_t bytes = 0;
};

/// The bytes of `elements` f32 values, saturating at INT64_MAX: a tensor
/// may hold up to 2^62 elements, whose bytes do not fit an int64 (such a
/// matrix is then never stacked, as it exceeds every stack bound).
inline int64_t f32BytesSaturating(int64_t elements) {
  return elements > INT64_MAX / 4 ? INT64_MAX : elements * 4;
}

/// The order parameters are updated in, as rounds of parameter indices.
/// With `rounds`, each owner's stacks are taken in order and packed into
/// rounds by time: a round's anchor is the largest cost of any owner's next
/// stack; every owner with stacks left takes its next stack, then its
/// following ones while their costs summed with what it took stay within
/// the anchor (a stack's cost: the sum of its parameters' `cost`). Each
/// round lists its parameters in index order. An owner's stacks: its
/// parameters by descending `cost` (ties in index order), each one a stack
/// of its own, except that one joins the owner's last stack of its `kind`
/// (`keys`, one per parameter) while that stack then holds at most
/// `stackBytes` bytes (its size plus one, times the joining parameter's
/// `bytes`); without stacking (`keys` empty or `stackBytes` <= 0) every
/// parameter is a stack. Without `rounds`: one parameter per round, in
/// index order. `keys`, when not empty, has one entry per parameter.
std::vector<std::vector<size_t>>
scheduleRounds(const std::vector<int64_t> &owners,
               const std::vector<double> &cost, bool rounds,
               const std::vector<NsStackKey> &keys = {},
               int64_t stackBytes = 0);

/// One action of a step's code, in program order (roundProgram). A phase
/// (a round's gathers, or its steps after Newton-Schulz) runs level by
/// level (plan::roundCalls): a level is issued only after the rank has
/// waited for the level before it, and with prefetch its batchable calls
/// are asynchronous, every other call blocking.
struct RoundAction {
  enum Kind {
    /// Momentum of the round's parameters (their gradient reductions
    /// blocking), then the first level of their gathers.
    StartGathers,
    /// Wait for the round's gathers in flight, then issue their next level.
    AdvanceGathers,
    /// The round's remaining levels of gathers, each after waiting for the
    /// one before, then wait for the last.
    CompleteGathers,
    /// Newton-Schulz of the round's parameters.
    Orthogonalise,
    /// The first level of the round's steps after Newton-Schulz.
    StartRedistributes,
    /// Wait for the round's steps after Newton-Schulz in flight, then
    /// issue their next level.
    AdvanceRedistributes,
    /// Their remaining levels as CompleteGathers does, then the round's
    /// updates are applied.
    CompleteRedistributes,
  };
  Kind kind;
  size_t round;
  /// The release group (releaseGroups) of Orthogonalise and of the
  /// Redistributes actions: each group's steps after Newton-Schulz are a
  /// phase of their own. 0 for the gathers, which are the round's.
  size_t group = 0;
};

/// The order muon-expand-step emits `numRounds` rounds in, and the
/// estimate simulates. Prefetch k = min(`prefetch`, numRounds) > 0: rounds
/// 0 .. k-1 start first; then for each round i: start round i + k (if
/// any), advance rounds i + 1 .. i + k - 1 by a level each, complete
/// round i's gathers, advance round i + 1's gathers (if any) and round
/// i - 1's redistributes (if any) by a level, orthogonalise round i,
/// start its redistributes, and complete round i - 1's; the last round's
/// redistributes complete at the end. So a chain's second level leaves
/// before the Newton-Schulz that it can overlap: the next round's second
/// gather level (a TP x FSDP parameter's dp gather after its tp gather)
/// and the last round's second level after Newton-Schulz (an HSDP
/// broadcast to the other replicas after the scatter). k = 0: each round
/// starts, completes its gathers, is orthogonalised, and starts and
/// completes its redistributes before the next one starts. A round of
/// several release groups (`groups[i]` of them; releaseGroups) runs each
/// group's Orthogonalise and StartRedistributes in turn, and advances a
/// group's redistributes by a level before the next group's Newton-Schulz;
/// the other actions on its redistributes apply to every group, in group
/// order.
std::vector<RoundAction> roundProgram(const std::vector<size_t> &groups,
                                      int64_t prefetch);
/// roundProgram of `numRounds` rounds of one release group each.
std::vector<RoundAction> roundProgram(size_t numRounds, int64_t prefetch);

/// Latency (seconds) and bandwidth (bytes per second) of one link.
struct Link {
  double latency = 0;
  double bandwidth = 1;
};

/// An alpha-beta model of the machine: a collective on a communicator costs
/// latency + (the most bytes one member sends or receives) / bandwidth,
/// with the intra-node link when every member shares a node (ranks are
/// numbered node by node, `ranksPerNode` each) and the inter-node link
/// otherwise; Newton-Schulz runs at `nsFlopRate`. Defaults: 8 H100 per
/// node, NVLink all-gather bus bandwidth ~360 GB/s, 400 Gb/s InfiniBand
/// per GPU (50 GB/s), dense bf16 989 TFLOP/s.
struct CostModel {
  int64_t ranksPerNode = 8;
  Link intraNode{3e-6, 360e9};
  Link interNode{10e-6, 50e9};
  double nsFlopRate = 989e12;
  double bytesPerElement = 4;

  /// The link a communicator instance of these members (world ranks) uses:
  /// the intra-node one when they all share a node.
  Link linkFor(const std::vector<int64_t> &members) const;
};

/// The order each round's results leave in (docs/schedule.md, "Early
/// release"): per round, its parameters in release groups, each group
/// orthogonalised and its redistributes started before the next group's
/// Newton-Schulz. One group (the round) unless the calls after
/// Newton-Schulz are asynchronous (`prefetch` > 0 and `batch`) and all of
/// these hold:
/// - the owners whose Newton-Schulz cost in the round (`cost` summed per
///   owner of `owners`) is at most half of the largest owner's form a first
///   group E, the others a second group L, both non-empty;
/// - every step after Newton-Schulz of E's parameters is batchable
///   (asynchronous);
/// - no rank that runs a Newton-Schulz of L takes part in a call of the
///   first level after Newton-Schulz of E (plan::roundCalls, by
///   participants), so that waiting for that level before L's
///   Newton-Schulz holds up no rank of L;
/// - E has a call after Newton-Schulz, and both the time the results of
///   E's owner with the most (`resultBytes` summed over its E parameters:
///   per parameter, what its owner orthogonalises) take through the faster
///   link (more bandwidth) and the time L's Newton-Schulz outlasts E's
///   (the largest owner's cost against E's largest, at
///   `model.nsFlopRate`) are longer than E's levels of calls after
///   Newton-Schulz (levels of reshapes only not counted) take in latency
///   on the slower link (less bandwidth; the link between nodes on a
///   tie): splitting adds that many calls, and gains at most the smaller
///   of the two.
/// Then E's results leave while L's Newton-Schulz runs, instead of after
/// it. These are candidates: ScheduleEstimator::releaseGroups keeps them
/// only where the estimated step is shorter. `params` has one entry per
/// parameter (indexed as in `rounds`); each group lists its parameters in
/// index order.
using ReleaseGroups = std::vector<std::vector<std::vector<size_t>>>;

/// Each of `rounds` as one release group.
ReleaseGroups oneGroupPerRound(const std::vector<std::vector<size_t>> &rounds);

ReleaseGroups releaseGroups(const std::vector<std::vector<size_t>> &rounds,
                            const std::vector<RoundParam> &params,
                            const std::vector<int64_t> &owners,
                            const std::vector<double> &cost,
                            const std::vector<double> &resultBytes,
                            const CostModel &model, int64_t prefetch,
                            bool batch);

/// One parameter as the estimate needs it.
struct ParamCostInput {
  ParamPlan plan;
  std::vector<int64_t> shape;
  layout::Layout layout, gradLayout;
  int64_t owner = 0;
  std::string name; // for timelines
};

enum class ScheduleKind {
  /// Every rank gathers every matrix whole (all-gathers) and orthogonalises
  /// all of them: the redundant baseline.
  Naive,
  /// One parameter at a time (a round of one); with `prefetch` as below.
  Sequential,
  /// Rounds (scheduleRounds), blocking collectives; with `prefetch` k > 0,
  /// batchable collectives are asynchronous on one communication lane per
  /// rank: round i + k's gathers (a chain's later levels) are in flight
  /// during round i's Newton-Schulz, and round i's redistribute overlaps
  /// round i + 1's, level by level in the order roundProgram gives (what
  /// muon-expand-step emits for prefetch_count = k).
  Rounds,
};

/// Per-rank figures of one schedule.
struct Estimate {
  double stepSeconds = 0;           // when the last rank finishes
  std::vector<double> finish;       // per rank: when it finishes
  std::vector<double> compute;      // per rank: Newton-Schulz seconds
  std::vector<double> comm;         // per rank: seconds its link is busy
  std::vector<int64_t> collectives; // per rank: collective calls
  std::vector<double> peakBytes;    // per rank: gathered matrices held at once
  std::vector<TraceEvent> trace;    // when asked for: every op on every rank
  /// Per round of the schedule, its release groups (releaseGroups; empty
  /// for the naive schedule).
  std::vector<size_t> releaseGroups;
  /// finish - compute, per rank: time not hidden behind compute.
  double exposed(int64_t rank) const { return finish[rank] - compute[rank]; }
};

/// Simulates `kind` over every rank of `mesh`.
/// Estimates schedules of one set of parameters: their steps over the mesh
/// are built once and simulated for each schedule asked for.
class ScheduleEstimator {
public:
  ScheduleEstimator(const std::vector<ParamCostInput> &params,
                    const layout::Mesh &mesh, int64_t nsSteps,
                    const CostModel &model);
  ~ScheduleEstimator();

  /// Simulates `kind` over every rank; with `trace`, records every
  /// collective and Newton-Schulz of every rank in Estimate::trace. With
  /// `batch`, a round's gathers and scatters are the calls
  /// plan::roundCalls makes of them (what muon-expand-step emits by
  /// default); without, one rooted call per step.
  Estimate estimate(ScheduleKind kind, int64_t prefetch = 0,
                    bool trace = false, bool batch = true);

  /// The release groups of `kind`'s rounds that estimate() simulates (and
  /// muon-expand-step emits): plan::releaseGroups's candidates when the
  /// step they give is estimated shorter than one group per round, else
  /// one group per round.
  ReleaseGroups releaseGroups(ScheduleKind kind, int64_t prefetch, bool batch);
  /// The same choice between `candidates` (one entry per round of
  /// `rounds`) and one group per round, over the caller's own rounds
  /// (muon-expand-step's: what it emits is what is simulated).
  ReleaseGroups releaseGroups(ScheduleKind kind, int64_t prefetch, bool batch,
                              const std::vector<std::vector<size_t>> &rounds,
                              const ReleaseGroups &candidates);

  /// From now on, the Rounds estimates stack an owner's matrices as
  /// muon-expand-step{ns-stack-bytes} does: scheduleRounds with `keys` (one
  /// per parameter) and `stackBytes` (0: no stacks, the default). A stack's
  /// matrices are orthogonalised one after another in its round (the model
  /// has no per-call cost); the rounds, their batched calls and the memory
  /// held follow the stacks.
  void stackNewtonSchulz(std::vector<NsStackKey> keys, int64_t stackBytes);

  /// No schedule that orthogonalises each matrix whole on its owners
  /// beats this: for each rank that runs Newton-Schulz, the shortest of its
  /// matrices' steps before Newton-Schulz (alone on an idle network), plus
  /// all of its Newton-Schulz, plus the shortest of its matrices' steps
  /// after; the largest over ranks. A rank's first orthogonalisation waits
  /// for some matrix to arrive and its last result still has to leave, so
  /// with few matrices per rank (one to three rounds) this is above
  /// lowerBound, which only a schedule that overlaps every byte with
  /// compute could reach. It also counts what every rank receives after
  /// Newton-Schulz: each result it lacks is released no earlier than the
  /// shortest way in of its matrix plus its Newton-Schulz, and the rank's
  /// link receives one at a time (bytes / bandwidth), so the rank ends no
  /// earlier than any release plus all the receiving released at or after
  /// it. The larger of the two.
  double ownerPathBound();

private:
  /// plan::releaseGroups of `rounds` of these parameters (candidates).
  ReleaseGroups releaseGroupsOf(const std::vector<std::vector<size_t>> &rounds,
                                int64_t prefetch, bool batch) const;
  /// The rounds of `kind` (scheduleRounds).
  std::vector<std::vector<size_t>> roundsOf(ScheduleKind kind) const;
  /// releaseGroups(): `candidates` when the step is estimated shorter with
  /// them (by more than a relative 1e-9), else one group per round; in
  /// `estimate` (when not null) the estimate of the step with them, without
  /// a trace.
  ReleaseGroups chooseReleaseGroups(ScheduleKind kind, int64_t prefetch,
                                    bool batch, Estimate *estimate);
  ReleaseGroups
  chooseReleaseGroups(ScheduleKind kind, int64_t prefetch, bool batch,
                      const std::vector<std::vector<size_t>> &rounds,
                      const ReleaseGroups &candidates, Estimate *estimate);
  /// The step of `kind` over `rounds` with `releases` (one entry per
  /// round).
  Estimate simulate(ScheduleKind kind, int64_t prefetch, bool trace, bool batch,
                    const std::vector<std::vector<size_t>> &rounds,
                    const ReleaseGroups &releases);

  struct Steps;
  std::unique_ptr<Steps> steps;
};

/// One estimate (ScheduleEstimator for a single schedule).
Estimate estimateSchedule(const std::vector<ParamCostInput> &params,
                          const layout::Mesh &mesh, int64_t nsSteps,
                          const CostModel &model, ScheduleKind kind,
                          int64_t prefetch = 0, bool trace = false,
                          bool batch = true);

/// Per rank: the most bytes of gathered matrices (the Newton-Schulz inputs
/// of the parameters the rank orthogonalises) alive at once when round i's
/// matrices are held together with those of the `prefetch` rounds after it
/// (their gathers are in flight). What prefetch costs in memory.
std::vector<double>
gatheredPeakBytes(const std::vector<ParamCostInput> &params,
                  const layout::Mesh &mesh,
                  const std::vector<std::vector<size_t>> &rounds,
                  int64_t prefetch, double bytesPerElement);

/// No schedule of these owners beats this: the busiest rank's link time or
/// Newton-Schulz time, whichever is larger (max over ranks of
/// max(comm, compute) of the blocking rounds estimate `rounds`).
double lowerBound(const Estimate &rounds);

} // namespace plan
} // namespace muon

#endif // MUON_PLAN_SCHEDULE_H
