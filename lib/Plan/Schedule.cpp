//===- Schedule.cpp - Order of a step's parameters, and its cost ----------===//

#include "muon/Plan/Schedule.h"
#include "muon/Plan/Batch.h"
#include "muon/Runtime/BroadcastBatch.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

using namespace muon;
using namespace muon::plan;

std::vector<plan::RoundAction>
plan::roundProgram(const std::vector<size_t> &groups, int64_t prefetch) {
  using A = RoundAction;
  std::vector<A> out;
  size_t r = groups.size();
  size_t k =
      std::min<size_t>(static_cast<size_t>(std::max<int64_t>(0, prefetch)), r);
  // An action on round i's redistributes, once per release group.
  auto redistributes = [&](A::Kind kind, size_t i) {
    for (size_t g = 0; g < std::max<size_t>(1, groups[i]); ++g)
      out.push_back({kind, i, g});
  };
  for (size_t j = 0; j < k; ++j)
    out.push_back({A::StartGathers, j});
  for (size_t i = 0; i < r; ++i) {
    if (k == 0 || i + k < r)
      out.push_back({A::StartGathers, i + k});
    for (size_t j = i + 1; j < std::min(i + k, r); ++j)
      out.push_back({A::AdvanceGathers, j});
    out.push_back({A::CompleteGathers, i});
    // Before the Newton-Schulz, the next round's gathers and the last
    // round's redistributes go one level further, so that level overlaps
    // this Newton-Schulz instead of waiting for the next program point
    // (after it). The price is the wait for the level before each, here
    // rather than after the Newton-Schulz (docs/schedule.md, "Prefetch").
    if (k > 0 && i + 1 < r)
      out.push_back({A::AdvanceGathers, i + 1});
    if (k > 0 && i > 0)
      redistributes(A::AdvanceRedistributes, i - 1);
    size_t n = std::max<size_t>(1, groups[i]);
    for (size_t g = 0; g < n; ++g) {
      out.push_back({A::Orthogonalise, i, g});
      out.push_back({A::StartRedistributes, i, g});
      // A group's second level leaves before the next group's
      // Newton-Schulz, for the same reason.
      if (g + 1 < n)
        out.push_back({A::AdvanceRedistributes, i, g});
    }
    if (k == 0)
      redistributes(A::CompleteRedistributes, i);
    else if (i > 0)
      redistributes(A::CompleteRedistributes, i - 1);
  }
  if (k > 0 && r > 0)
    redistributes(A::CompleteRedistributes, r - 1);
  return out;
}

std::vector<plan::RoundAction> plan::roundProgram(size_t numRounds,
                                                  int64_t prefetch) {
  return roundProgram(std::vector<size_t>(numRounds, 1), prefetch);
}

namespace {
/// `values` summed per owner (`owners`) over the parameters `which`, and
/// the largest sum.
std::pair<std::map<int64_t, double>, double>
sumPerOwner(const std::vector<size_t> &which,
            const std::vector<int64_t> &owners,
            const std::vector<double> &values) {
  std::map<int64_t, double> sums;
  for (size_t p : which)
    sums[owners[p]] += values[p];
  double most = 0;
  for (const auto &[owner, sum] : sums)
    most = std::max(most, sum);
  return {sums, most};
}
} // namespace

ReleaseGroups
plan::oneGroupPerRound(const std::vector<std::vector<size_t>> &rounds) {
  ReleaseGroups groups;
  for (const std::vector<size_t> &round : rounds)
    groups.push_back({round});
  return groups;
}

ReleaseGroups plan::releaseGroups(
    const std::vector<std::vector<size_t>> &rounds,
    const std::vector<RoundParam> &params, const std::vector<int64_t> &owners,
    const std::vector<double> &cost, const std::vector<double> &resultBytes,
    const CostModel &model, int64_t prefetch, bool batch) {
  std::vector<std::vector<std::vector<size_t>>> result;
  for (const std::vector<size_t> &round : rounds) {
    std::vector<std::vector<size_t>> &groups = result.emplace_back();
    groups.push_back(round);
    if (prefetch <= 0 || !batch)
      continue;
    auto [work, anchor] = sumPerOwner(round, owners, cost);
    std::vector<size_t> early, late;
    for (size_t p : round)
      (work[owners[p]] <= anchor / 2 ? early : late).push_back(p);
    if (early.empty() || late.empty())
      continue;
    auto nsStepOf = [&](size_t p) {
      const std::vector<CommStep> &steps = *params[p].steps;
      return static_cast<size_t>(
          std::find_if(steps.begin(), steps.end(),
                       [](const CommStep &s) {
                         return s.kind == CommStep::Kind::NewtonSchulz;
                       }) -
          steps.begin());
    };
    // Every step of E after Newton-Schulz asynchronous (or a reshape, which
    // holds no one): a blocking one would hold its members until E's owners
    // release.
    bool async = std::all_of(early.begin(), early.end(), [&](size_t p) {
      const std::vector<CommStep> &steps = *params[p].steps;
      for (size_t s = nsStepOf(p) + 1; s < steps.size(); ++s)
        if (!batchable(steps[s]) && !steps[s].reshapeOnly)
          return false;
      return true;
    });
    if (!async)
      continue;
    // The ranks of E's first level after Newton-Schulz, and those of L's
    // Newton-Schulz, as coordinate patterns (-1: any); two patterns share
    // a rank when they agree wherever both pin an axis.
    std::vector<RoundParam> earlyParams;
    for (size_t p : early)
      earlyParams.push_back(params[p]);
    // A reshape only is no call: it holds no one and costs no latency.
    std::vector<RoundCall> earlyCalls;
    for (RoundCall &call : roundCalls(earlyParams, /*afterNs=*/true, batch)) {
      auto [i, s] = call.items.front();
      if (!(*earlyParams[i].steps)[s].reshapeOnly)
        earlyCalls.push_back(std::move(call));
    }
    if (earlyCalls.empty())
      continue; // nothing to release early
    // The calls of the first level, which every rank waits for before L's
    // Newton-Schulz (none when that level is reshapes only: the next
    // level then goes without a wait).
    std::vector<std::vector<int64_t>> firstLevel;
    for (const RoundCall &call : earlyCalls)
      if (call.level == 0) {
        auto [i, s] = call.items.front();
        firstLevel.push_back(participants(*earlyParams[i].plan,
                                          (*earlyParams[i].steps)[s],
                                          earlyParams[i].ownerCoords));
      }
    auto share = [](const std::vector<int64_t> &a,
                    const std::vector<int64_t> &b) {
      for (size_t x = 0; x < a.size(); ++x)
        if (a[x] >= 0 && b[x] >= 0 && a[x] != b[x])
          return false;
      return true;
    };
    bool heldUp = std::any_of(late.begin(), late.end(), [&](size_t p) {
      size_t ns = nsStepOf(p);
      if (ns >= params[p].steps->size())
        return false;
      std::vector<int64_t> nsRanks = participants(
          *params[p].plan, (*params[p].steps)[ns], params[p].ownerCoords);
      return std::any_of(firstLevel.begin(), firstLevel.end(),
                         [&](const std::vector<int64_t> &call) {
                           return share(call, nsRanks);
                         });
    });
    if (heldUp)
      continue;
    std::set<size_t> levelsOfCalls;
    for (const RoundCall &call : earlyCalls)
      levelsOfCalls.insert(call.level);
    size_t levels = levelsOfCalls.size();
    double most = sumPerOwner(early, owners, resultBytes).second;
    // The slower link is the one of less bandwidth (between nodes on a
    // tie).
    const Link &fast = model.intraNode.bandwidth >= model.interNode.bandwidth
                           ? model.intraNode
                           : model.interNode;
    const Link &slow =
        &fast == &model.intraNode ? model.interNode : model.intraNode;
    // What the split can gain: E's results travel during L's
    // Newton-Schulz, for no longer than it outlasts E's (the largest
    // owner's work in the round against E's largest, at the model's rate).
    double outlasts =
        (anchor - sumPerOwner(early, owners, cost).second) / model.nsFlopRate;
    double gain = std::min(most / fast.bandwidth, outlasts);
    if (gain <= static_cast<double>(levels) * slow.latency)
      continue;
    groups = {std::move(early), std::move(late)};
  }
  return result;
}

std::vector<std::vector<size_t>>
plan::scheduleRounds(const std::vector<int64_t> &owners,
                     const std::vector<double> &cost, bool rounds,
                     const std::vector<NsStackKey> &keys,
                     int64_t stackBytes) {
  std::vector<std::vector<size_t>> result;
  if (!rounds) {
    for (size_t i = 0; i < owners.size(); ++i)
      result.push_back({i});
    return result;
  }
  assert((keys.empty() || keys.size() == owners.size()) &&
         "one stack key per parameter");
  bool stacking = stackBytes > 0 && !keys.empty();
  // Each owner's stacks, in the order it orthogonalises them.
  std::vector<std::vector<std::vector<size_t>>> stacksOf;
  std::map<int64_t, std::vector<size_t>> byOwner;
  for (size_t i = 0; i < owners.size(); ++i)
    byOwner[owners[i]].push_back(i);
  for (auto &[owner, list] : byOwner) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return cost[a] > cost[b]; });
    std::vector<std::vector<size_t>> stacks;
    std::map<std::vector<int64_t>, size_t> lastOfKind;
    for (size_t p : list) {
      if (stacking && !keys[p].kind.empty() && keys[p].bytes > 0) {
        auto last = lastOfKind.find(keys[p].kind);
        if (last != lastOfKind.end()) {
          std::vector<size_t> &stack = stacks[last->second];
          // (stack.size() + 1) * bytes <= stackBytes, without overflow.
          if (static_cast<int64_t>(stack.size()) <
              stackBytes / keys[p].bytes) {
            stack.push_back(p);
            continue;
          }
        }
        lastOfKind[keys[p].kind] = stacks.size();
      }
      stacks.push_back({p});
    }
    stacksOf.push_back(std::move(stacks));
  }
  // Rounds by time: a round is as long as the largest next stack of any
  // owner (its anchor); every owner with stacks left takes its next one and
  // then as many more as fit in the anchor's cost. An owner whose
  // remaining stacks are small thus does several of them while another
  // does one large one, instead of leaving the later rounds to the owners
  // with many small stacks (whose collectives would wait for the large
  // ones: every round's calls involve all members).
  auto costOf = [&](const std::vector<size_t> &stack) {
    double c = 0;
    for (size_t p : stack)
      c += cost[p];
    return c;
  };
  std::vector<size_t> next(stacksOf.size(), 0);
  while (true) {
    double anchor = 0;
    bool left = false;
    for (size_t o = 0; o < stacksOf.size(); ++o)
      if (next[o] < stacksOf[o].size()) {
        left = true;
        anchor = std::max(anchor, costOf(stacksOf[o][next[o]]));
      }
    if (!left)
      break;
    std::vector<size_t> &round = result.emplace_back();
    for (size_t o = 0; o < stacksOf.size(); ++o) {
      double used = 0;
      for (bool first = true; next[o] < stacksOf[o].size(); first = false) {
        const std::vector<size_t> &stack = stacksOf[o][next[o]];
        double c = costOf(stack);
        // A relative slack so that equal sums are not split by rounding.
        if (!first && used + c > anchor * (1 + 1e-9))
          break;
        round.insert(round.end(), stack.begin(), stack.end());
        used += c;
        ++next[o];
      }
    }
  }
  for (std::vector<size_t> &round : result)
    std::sort(round.begin(), round.end());
  return result;
}

Link CostModel::linkFor(const std::vector<int64_t> &members) const {
  // Ranks are numbered node by node. Any instance is checked, not only the
  // aligned blocks of power-of-two meshes: on [dp = 4, tp = 3], tp's
  // instance {6, 7, 8} spans two nodes while {3, 4, 5} does not.
  for (int64_t m : members)
    if (m / ranksPerNode != members.front() / ranksPerNode)
      return interNode;
  return intraNode; // also for no members: nothing crosses a node
}

namespace {

/// One communicator instance of a collective: its members and how long it
/// takes.
struct Instance {
  std::vector<int64_t> members;
  std::vector<double> sent, received; // bytes, per member
  Link link;
  /// A broadcast's items (root as an index into `members`): the runtime
  /// picks its exchange from them (muon/Runtime/BroadcastBatch.h).
  std::vector<rt::BroadcastItem> broadcasts;
  double seconds = 0;
  /// The faster of a broadcast's two exchanges, whichever the runtime
  /// picks (`seconds` otherwise): what a bound may count, since a batch
  /// that merges this instance with others never takes less.
  double fastest = 0;
};

/// One step of one parameter over the whole mesh: a collective (one
/// instance per communicator) or Newton-Schulz on some ranks.
struct Op {
  bool compute = false;
  std::string label;
  std::vector<Instance> instances;
  std::vector<std::pair<int64_t, double>> work; // (rank, seconds)
  double bytesPerElement = 4;

  /// Every instance takes latency + (the most bytes one member sends or
  /// receives) / bandwidth of its link; a broadcast that runs as scatter +
  /// all-gather takes two latencies and the busiest member of each
  /// exchange.
  void time() {
    for (Instance &inst : instances) {
      const Link &link = inst.link;
      double most = 0;
      for (size_t m = 0; m < inst.members.size(); ++m)
        most = std::max({most, inst.sent[m], inst.received[m]});
      inst.seconds = inst.fastest = link.latency + most / link.bandwidth;
      if (inst.broadcasts.empty())
        continue;
      rt::BroadcastLoads loads = rt::broadcastLoads(
          inst.broadcasts, static_cast<int64_t>(inst.members.size()));
      double split = 2 * link.latency +
                     static_cast<double>(loads.scatter + loads.allGather) *
                         bytesPerElement / link.bandwidth;
      inst.fastest = std::min(inst.seconds, split);
      if (rt::broadcastByScatterAllGather(loads))
        inst.seconds = split;
    }
  }
};

/// One call made of several steps (a batch): every member sends and
/// receives what it would in each, in one latency.
Op merged(const std::vector<const Op *> &ops, const std::string &label) {
  Op out = *ops.front();
  out.label = label;
  for (size_t i = 1; i < ops.size(); ++i)
    for (const Instance &inst : ops[i]->instances) {
      auto same = std::find_if(
          out.instances.begin(), out.instances.end(),
          [&](const Instance &o) { return o.members == inst.members; });
      if (same == out.instances.end()) {
        out.instances.push_back(inst);
        continue;
      }
      for (size_t m = 0; m < inst.members.size(); ++m) {
        same->sent[m] += inst.sent[m];
        same->received[m] += inst.received[m];
      }
      same->broadcasts.insert(same->broadcasts.end(), inst.broadcasts.begin(),
                              inst.broadcasts.end());
    }
  out.time();
  return out;
}

/// A parameter's steps: before Newton-Schulz, Newton-Schulz, after; and
/// the plan steps they come from (for batching).
struct ParamOps {
  std::vector<Op> before, after;
  Op ns;
  double matrixBytes = 0; // one gathered matrix slice of an NS rank
  std::vector<CommStep> steps;
  std::vector<int64_t> ownerCoords;
};

class Builder {
public:
  Builder(const layout::Mesh &mesh, int64_t nsSteps, const CostModel &model)
      : mesh(mesh), nsSteps(nsSteps), model(model) {
    for (int64_t r = 0; r < mesh.numRanks(); ++r)
      coords.push_back(mesh.coords(r));
  }

  /// The steps of parameter number `index` (named so when it has no name).
  ParamOps build(const ParamCostInput &p, size_t index, bool naive) {
    ParamOps ops;
    ops.steps = planSteps(p.plan, p.layout, p.gradLayout, mesh, p.owner);
    ops.ownerCoords = mesh.coords(p.owner);
    const std::vector<CommStep> &steps = ops.steps;
    const std::vector<int64_t> &oc = ops.ownerCoords;
    bool afterNs = false;
    std::string who = p.name.empty() ? "p" + std::to_string(index) : p.name;
    for (const CommStep &s : steps) {
      if (s.kind == CommStep::Kind::NewtonSchulz) {
        afterNs = true;
        ops.ns.label = "newton_schulz " + who;
        double flops = ownerFlops(p.plan, p.shape, p.layout, mesh, nsSteps);
        ops.ns.compute = true;
        for (int64_t r = 0; r < mesh.numRanks(); ++r)
          if (naive ? inGroup(p.plan, coords[r])
                    : takesPart(p.plan, s, coords[r], oc))
            ops.ns.work.push_back({r, flops / model.nsFlopRate});
        ops.matrixBytes = static_cast<double>(gatheredElements(
                              p.plan, p.shape, p.layout, mesh, p.owner)) *
                          model.bytesPerElement;
        continue;
      }
      if (naive && s.kind != CommStep::Kind::ReduceGrad &&
          s.kind != CommStep::Kind::Gather)
        continue; // every rank has the whole matrix: nothing to send back
      // A reshape only: an op of no instance, which takes no time and is
      // no call.
      Op op = s.reshapeOnly ? Op() : collective(p, s, oc, naive);
      std::string what = describe(s, mesh);
      if (naive && s.kind == CommStep::Kind::Gather) {
        what = "all_gather";
        for (int a : s.axes)
          what += " " + mesh.axisNames[a];
      }
      op.label = what + " " + who;
      (afterNs ? ops.after : ops.before).push_back(std::move(op));
    }
    return ops;
  }

private:
  /// The instances of one collective step and their durations.
  Op collective(const ParamCostInput &p, const CommStep &s,
                const std::vector<int64_t> &oc, bool naive) {
    int64_t numRanks = mesh.numRanks();
    std::vector<double> sent(numRanks, 0), received(numRanks, 0);
    std::vector<bool> member(numRanks, false);
    int64_t n = 1;
    for (int a : s.axes)
      n *= mesh.sizes[a];
    // What each rank holds after and before the step, for all ranks.
    layout::LocalShards after(p.shape, s.to, mesh),
        before(p.shape, s.from, mesh);
    auto elementsOf = [&](layout::LocalShards &shards, int64_t r) {
      return static_cast<double>(shards(coords[r]).numElements());
    };
    for (int64_t r = 0; r < numRanks; ++r) {
      // Naive gathers are all-gathers: every rank of the group takes part.
      bool inStep = naive ? inGroup(p.plan, coords[r])
                          : takesPart(p.plan, s, coords[r], oc);
      if (!inStep)
        continue;
      member[r] = true;
      if (s.kind == CommStep::Kind::ReduceGrad) {
        double bytes = reductionElements(s, p.shape, mesh, coords[r]) *
                       model.bytesPerElement;
        sent[r] = received[r] = bytes;
      } else if (naive) {
        // All-gather: each rank receives what it lacks and sends its piece
        // to the n - 1 others (a ring forwards as much as it receives).
        double bytes = (elementsOf(after, r) - elementsOf(before, r)) *
                       model.bytesPerElement;
        sent[r] = received[r] = bytes;
      }
    }
    // A broadcast's roots (one per instance) and the elements each sends.
    std::map<int64_t, int64_t> broadcastRoot;
    if (!naive && s.kind != CommStep::Kind::ReduceGrad)
      for (const Transfer &t : transfersOf(p.plan, s, p.shape, mesh, p.owner)) {
        double bytes = static_cast<double>(t.elements) * model.bytesPerElement;
        sent[t.from] += bytes;
        received[t.to] += bytes;
        if (s.kind == CommStep::Kind::Broadcast)
          broadcastRoot[t.from] = t.elements;
      }

    std::map<std::vector<int64_t>, Instance> byKey;
    for (int64_t r = 0; r < numRanks; ++r) {
      if (!member[r])
        continue;
      std::vector<int64_t> key;
      for (int a = 0; a < mesh.numAxes(); ++a)
        if (std::find(s.axes.begin(), s.axes.end(), a) == s.axes.end())
          key.push_back(coords[r][a]);
      Instance &inst = byKey[key];
      if (auto root = broadcastRoot.find(r); root != broadcastRoot.end())
        inst.broadcasts.push_back(
            {static_cast<int64_t>(inst.members.size()), root->second});
      inst.members.push_back(r);
      inst.sent.push_back(sent[r]);
      inst.received.push_back(received[r]);
    }
    Op op;
    op.bytesPerElement = model.bytesPerElement;
    for (auto &[key, inst] : byKey) {
      inst.link = model.linkFor(inst.members);
      op.instances.push_back(std::move(inst));
    }
    op.time();
    return op;
  }

  const layout::Mesh &mesh;
  int64_t nsSteps;
  const CostModel &model;
  std::vector<std::vector<int64_t>> coords;
};

/// Runs ops rank by rank: blocking collectives start when their last member
/// arrives; asynchronous ones queue on each member's one link and wait for
/// the data they depend on.
class Simulator {
public:
  Simulator(int64_t numRanks, bool trace)
      : tracing(trace), clock(numRanks, 0), lane(numRanks, 0) {
    est.finish.assign(numRanks, 0);
    est.compute.assign(numRanks, 0);
    est.comm.assign(numRanks, 0);
    est.collectives.assign(numRanks, 0);
    est.peakBytes.assign(numRanks, 0);
  }

  void blocking(const Op &op) {
    if (op.compute) {
      for (auto [r, t] : op.work) {
        record(r, TraceEvent::Compute, clock[r], clock[r] + t, op);
        clock[r] += t;
        est.compute[r] += t;
      }
      return;
    }
    for (const Instance &inst : op.instances) {
      double start = 0;
      for (int64_t m : inst.members)
        start = std::max(start, clock[m]);
      for (int64_t m : inst.members) {
        clock[m] = start + inst.seconds;
        count(m, inst.seconds);
        record(m, TraceEvent::Comm, start, clock[m], op);
      }
    }
  }

  /// Issues `op` asynchronously; `ready` is per rank when the data it
  /// consumes is there, and becomes when its result is.
  void issue(const Op &op, std::vector<double> &ready) {
    for (const Instance &inst : op.instances) {
      double start = 0;
      for (int64_t m : inst.members)
        start = std::max({start, clock[m], lane[m], ready[m]});
      for (int64_t m : inst.members) {
        lane[m] = ready[m] = start + inst.seconds;
        count(m, inst.seconds);
        record(m, TraceEvent::Comm, start, lane[m], op);
      }
    }
  }

  /// Newton-Schulz once its input is there.
  void compute(const Op &op, std::vector<double> &ready) {
    for (auto [r, t] : op.work) {
      clock[r] = std::max(clock[r], ready[r]) + t;
      ready[r] = clock[r];
      est.compute[r] += t;
      record(r, TraceEvent::Compute, clock[r] - t, clock[r], op);
    }
  }

  /// Every rank waits for what `ready` says.
  void wait(const std::vector<double> &ready) {
    for (size_t r = 0; r < clock.size(); ++r)
      clock[r] = std::max(clock[r], ready[r]);
  }

  Estimate finish() {
    for (size_t r = 0; r < clock.size(); ++r) {
      est.finish[r] = std::max(clock[r], lane[r]);
      est.stepSeconds = std::max(est.stepSeconds, est.finish[r]);
    }
    return est;
  }

  Estimate est;

private:
  void count(int64_t rank, double seconds) {
    est.comm[rank] += seconds;
    ++est.collectives[rank];
  }

  void record(int64_t rank, TraceEvent::Lane laneKind, double start,
              double end, const Op &op) {
    if (tracing)
      est.trace.push_back({rank, laneKind, start, end, op.label});
  }

  bool tracing;
  std::vector<double> clock, lane;
};

} // namespace

/// What every schedule of one set of parameters shares: their steps over
/// the mesh (the costly part: every rank of every step), their owners and
/// Newton-Schulz costs. The naive schedule's all-gather steps are built on
/// first use.
struct ScheduleEstimator::Steps {
  Steps(const std::vector<ParamCostInput> &params, const layout::Mesh &mesh,
        int64_t nsSteps, const CostModel &model)
      : params(params), mesh(mesh), model(model),
        builder(this->mesh, nsSteps, this->model) {
    for (const ParamCostInput &p : params) {
      owned.push_back(builder.build(p, owned.size(), /*naive=*/false));
      owners.push_back(p.owner);
      cost.push_back(ownerFlops(p.plan, p.shape, p.layout, mesh, nsSteps));
    }
  }

  const std::vector<ParamOps> &of(ScheduleKind kind) {
    if (kind != ScheduleKind::Naive)
      return owned;
    if (naive.empty())
      for (const ParamCostInput &p : params)
        naive.push_back(builder.build(p, naive.size(), /*naive=*/true));
    return naive;
  }

  std::vector<ParamCostInput> params;
  layout::Mesh mesh;
  CostModel model;
  Builder builder; // refers to mesh and model above
  std::vector<ParamOps> owned, naive;
  std::vector<int64_t> owners;
  std::vector<double> cost;
  std::vector<NsStackKey> stackKeys; // stackNewtonSchulz
  int64_t stackBytes = 0;
};

ReleaseGroups ScheduleEstimator::releaseGroupsOf(
    const std::vector<std::vector<size_t>> &rounds, int64_t prefetch,
    bool batch) const {
  std::vector<RoundParam> params;
  std::vector<double> bytes;
  for (size_t p = 0; p < steps->owned.size(); ++p) {
    params.push_back({&steps->params[p].plan, &steps->owned[p].steps,
                      steps->owned[p].ownerCoords});
    bytes.push_back(steps->owned[p].matrixBytes);
  }
  return plan::releaseGroups(rounds, params, steps->owners, steps->cost, bytes,
                             steps->model, prefetch, batch);
}

ScheduleEstimator::ScheduleEstimator(
    const std::vector<ParamCostInput> &params, const layout::Mesh &mesh,
    int64_t nsSteps, const CostModel &model)
    : steps(std::make_unique<Steps>(params, mesh, nsSteps, model)) {}

ScheduleEstimator::~ScheduleEstimator() = default;

/// The least time an op takes for `rank` on an idle network: the instance
/// it is a member of, by its faster exchange (none: it waits for nothing
/// of it there).
static double timeOn(const Op &op, int64_t rank) {
  for (const Instance &inst : op.instances)
    if (std::find(inst.members.begin(), inst.members.end(), rank) !=
        inst.members.end())
      return inst.fastest;
  return 0.0;
}

namespace {
/// The matrices one rank alone orthogonalises, one after another.
struct SerialReleases {
  double in = std::numeric_limits<double>::infinity();
  std::vector<double> seconds; // Newton-Schulz of each matrix
  std::vector<size_t> params;  // index into the per-param link seconds
};
} // namespace

/// A receiving link's bound over jobs that one rank's Newton-Schulz
/// releases one after another. An owner whose matrices arrive at `in` at
/// the earliest finishes its j-th no earlier than `in` plus the j shortest
/// Newton-Schulz times, so at any time t at least as many of its results
/// are still to be released as there are such prefix ends at or after t,
/// and a receiver then still needs at least the smallest that many of its
/// pieces of them. Summed over owners, whichever matrices each releases
/// last: the link ends no earlier than t plus all of that.
static double
serialReleaseBound(const std::vector<SerialReleases> &owners,
                   const std::vector<std::vector<double>> &linkSeconds,
                   int64_t numRanks) {
  // Events (prefix end, owner), latest first; each one more result of
  // that owner still to come.
  std::vector<std::pair<double, size_t>> events;
  for (size_t o = 0; o < owners.size(); ++o) {
    std::vector<double> ns = owners[o].seconds;
    std::sort(ns.begin(), ns.end());
    double end = owners[o].in;
    for (double s : ns)
      events.push_back({end += s, o});
  }
  std::sort(events.begin(), events.end(),
            std::greater<std::pair<double, size_t>>());
  double bound = 0;
  std::vector<std::vector<double>> pieces(owners.size());
  std::vector<size_t> taken(owners.size());
  for (int64_t r = 0; r < numRanks; ++r) {
    bool receives = false;
    for (size_t o = 0; o < owners.size(); ++o) {
      pieces[o].clear();
      for (size_t p : owners[o].params) {
        pieces[o].push_back(linkSeconds[p][r]);
        receives |= linkSeconds[p][r] > 0;
      }
      std::sort(pieces[o].begin(), pieces[o].end());
      taken[o] = 0;
    }
    if (!receives)
      continue;
    double tail = 0;
    for (auto [t, o] : events) {
      tail += pieces[o][taken[o]++];
      bound = std::max(bound, t + tail);
    }
  }
  return bound;
}

double ScheduleEstimator::ownerPathBound() {
  int64_t numRanks = steps->mesh.numRanks();
  const double none = std::numeric_limits<double>::infinity();
  std::vector<double> compute(numRanks, 0), in(numRanks, none),
      out(numRanks, none);
  // Per rank, the results it receives: (earliest release, link seconds).
  std::vector<std::vector<std::pair<double, double>>> arrivals(numRanks);
  // Per parameter, each rank's link seconds receiving its result; per
  // rank, the parameters it alone orthogonalises.
  std::vector<std::vector<double>> linkSeconds;
  std::vector<SerialReleases> serial(numRanks);
  for (const ParamOps &p : steps->owned) {
    double release = none;
    for (auto [rank, seconds] : p.ns.work) {
      double before = 0, after = 0;
      for (const Op &op : p.before)
        before += timeOn(op, rank);
      for (const Op &op : p.after)
        after += timeOn(op, rank);
      compute[rank] += seconds;
      in[rank] = std::min(in[rank], before);
      out[rank] = std::min(out[rank], after);
      release = std::min(release, before + seconds);
      if (p.ns.work.size() == 1) {
        serial[rank].in = std::min(serial[rank].in, before);
        serial[rank].seconds.push_back(seconds);
        serial[rank].params.push_back(linkSeconds.size());
      }
    }
    // What each rank receives of the result: the data it lacks, whatever
    // exchange carries it, at its link's bandwidth.
    std::vector<double> &busy = linkSeconds.emplace_back(numRanks, 0.0);
    for (const Op &op : p.after)
      for (const Instance &inst : op.instances)
        for (size_t m = 0; m < inst.members.size(); ++m)
          busy[inst.members[m]] += inst.received[m] / inst.link.bandwidth;
    if (release == none)
      continue;
    for (int64_t r = 0; r < numRanks; ++r)
      if (busy[r] > 0)
        arrivals[r].push_back({release, busy[r]});
  }
  double bound = 0;
  for (int64_t r = 0; r < numRanks; ++r) {
    if (in[r] != none)
      bound = std::max(bound, in[r] + compute[r] + out[r]);
    // One link receiving jobs with release times: whatever the order, it
    // ends no earlier than any release plus everything released at or
    // after it.
    std::sort(arrivals[r].begin(), arrivals[r].end(),
              std::greater<std::pair<double, double>>());
    double tail = 0;
    for (auto [release, seconds] : arrivals[r]) {
      tail += seconds;
      bound = std::max(bound, release + tail);
    }
  }
  // The releases above are each matrix's own earliest; a rank that
  // orthogonalises several releases them one after another.
  serial.erase(
      std::remove_if(serial.begin(), serial.end(),
                     [](const SerialReleases &o) { return o.seconds.empty(); }),
      serial.end());
  return std::max(bound, serialReleaseBound(serial, linkSeconds, numRanks));
}

void ScheduleEstimator::stackNewtonSchulz(std::vector<NsStackKey> keys,
                                          int64_t stackBytes) {
  steps->stackKeys = std::move(keys);
  steps->stackBytes = stackBytes;
}

Estimate plan::estimateSchedule(const std::vector<ParamCostInput> &params,
                                const layout::Mesh &mesh, int64_t nsSteps,
                                const CostModel &model, ScheduleKind kind,
                                int64_t prefetch, bool trace, bool batch) {
  return ScheduleEstimator(params, mesh, nsSteps, model)
      .estimate(kind, prefetch, trace, batch);
}

namespace {
/// One call of a round (a step of one parameter, or a batch) and the
/// parameters it serves.
struct RoundOp {
  const Op *single = nullptr;
  Op batch;
  std::vector<size_t> params;
  size_t level = 0;       // RoundCall::level
  bool batchable = false; // plan::batchable: asynchronous with prefetch
  bool reshapeOnly = false; // CommStep::reshapeOnly: no call
  const Op &op() const { return single ? *single : batch; }
};
} // namespace

/// The calls of one phase of a round, in issue order: the gathers, or the
/// steps after Newton-Schulz, as plan::roundCalls makes them (batched with
/// `batch`). The naive schedule: every step before Newton-Schulz (gradient
/// reductions included), or after, parameter by parameter.
static std::vector<RoundOp>
phaseOps(const std::vector<ParamOps> &ops,
         const std::vector<ParamCostInput> &params, const layout::Mesh &mesh,
         const std::vector<size_t> &round, bool afterNs, bool naive,
         bool batch) {
  std::vector<RoundOp> out;
  if (naive) {
    for (size_t p : round)
      for (const Op &op : afterNs ? ops[p].after : ops[p].before)
        out.push_back({&op, {}, {p}});
    return out;
  }
  std::vector<RoundParam> rp;
  for (size_t p : round)
    rp.push_back({&params[p].plan, &ops[p].steps, ops[p].ownerCoords});
  for (const RoundCall &call : roundCalls(rp, afterNs, batch)) {
    std::vector<const Op *> items;
    RoundOp r;
    r.level = call.level;
    const CommStep &step =
        ops[round[call.items[0].first]].steps[call.items[0].second];
    r.batchable = batchable(step);
    r.reshapeOnly = step.reshapeOnly;
    for (auto [k, j] : call.items) {
      size_t p = round[k];
      size_t firstAfter = ops[p].steps.size() - ops[p].after.size();
      items.push_back(afterNs ? &ops[p].after[j - firstAfter]
                              : &ops[p].before[j]);
      r.params.push_back(p);
    }
    if (items.size() == 1) {
      r.single = items.front();
    } else {
      const CommStep &first =
          ops[round[call.items[0].first]].steps[call.items[0].second];
      std::string label = first.kind == CommStep::Kind::Gather
                              ? "gather_batch"
                          : first.kind == CommStep::Kind::Scatter
                              ? "scatter_batch"
                              : "broadcast_batch";
      for (int a : first.axes)
        label += " " + mesh.axisNames[a];
      label += " x" + std::to_string(items.size());
      r.batch = merged(items, label);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::vector<size_t>>
ScheduleEstimator::roundsOf(ScheduleKind kind) const {
  return scheduleRounds(steps->owners, steps->cost,
                        kind == ScheduleKind::Rounds, steps->stackKeys,
                        steps->stackBytes);
}

ReleaseGroups ScheduleEstimator::chooseReleaseGroups(
    ScheduleKind kind, int64_t prefetch, bool batch,
    const std::vector<std::vector<size_t>> &rounds,
    const ReleaseGroups &candidates, Estimate *estimate) {
  ReleaseGroups whole = oneGroupPerRound(rounds);
  if (candidates == whole && !estimate)
    return whole;
  Estimate one = simulate(kind, prefetch, false, batch, rounds, whole);
  if (candidates != whole) {
    Estimate two = simulate(kind, prefetch, false, batch, rounds, candidates);
    // Shorter by more than rounding: a split adds calls.
    if (two.stepSeconds < one.stepSeconds * (1 - 1e-9)) {
      if (estimate)
        *estimate = std::move(two);
      return candidates;
    }
  }
  if (estimate)
    *estimate = std::move(one);
  return whole;
}

ReleaseGroups ScheduleEstimator::chooseReleaseGroups(ScheduleKind kind,
                                                     int64_t prefetch,
                                                     bool batch,
                                                     Estimate *estimate) {
  std::vector<std::vector<size_t>> rounds = roundsOf(kind);
  ReleaseGroups candidates = kind == ScheduleKind::Naive
                                 ? oneGroupPerRound(rounds)
                                 : releaseGroupsOf(rounds, prefetch, batch);
  return chooseReleaseGroups(kind, prefetch, batch, rounds, candidates,
                             estimate);
}

ReleaseGroups ScheduleEstimator::releaseGroups(ScheduleKind kind,
                                               int64_t prefetch, bool batch) {
  return chooseReleaseGroups(kind, prefetch, batch, nullptr);
}

ReleaseGroups
ScheduleEstimator::releaseGroups(ScheduleKind kind, int64_t prefetch,
                                 bool batch,
                                 const std::vector<std::vector<size_t>> &rounds,
                                 const ReleaseGroups &candidates) {
  return chooseReleaseGroups(kind, prefetch, batch, rounds, candidates,
                             nullptr);
}

Estimate ScheduleEstimator::estimate(ScheduleKind kind, int64_t prefetch,
                                     bool trace, bool batch) {
  Estimate chosen;
  ReleaseGroups groups = chooseReleaseGroups(kind, prefetch, batch, &chosen);
  if (!trace)
    return chosen;
  return simulate(kind, prefetch, trace, batch, roundsOf(kind), groups);
}

Estimate
ScheduleEstimator::simulate(ScheduleKind kind, int64_t prefetch, bool trace,
                            bool batch,
                            const std::vector<std::vector<size_t>> &rounds,
                            const ReleaseGroups &releases) {
  int64_t numRanks = steps->mesh.numRanks();
  const std::vector<ParamOps> &ops = steps->of(kind);
  Simulator sim(numRanks, trace);

  // Peak memory: the gathered matrices a rank orthogonalises that are alive
  // at once (one round, plus `prefetch` rounds in flight; every matrix in
  // turn for the naive schedule).
  if (kind == ScheduleKind::Naive) {
    for (size_t p = 0; p < ops.size(); ++p)
      for (auto [r, t] : ops[p].ns.work)
        sim.est.peakBytes[r] = std::max(sim.est.peakBytes[r],
                                        ops[p].matrixBytes);
  } else {
    sim.est.peakBytes =
        gatheredPeakBytes(steps->params, steps->mesh, rounds, prefetch,
                          steps->model.bytesPerElement);
  }

  if (kind == ScheduleKind::Naive) {
    auto blocking = [&](const std::vector<size_t> &round, bool afterNs) {
      for (const RoundOp &r : phaseOps(ops, steps->params, steps->mesh, round,
                                       afterNs, /*naive=*/true, batch))
        sim.blocking(r.op());
    };
    for (const std::vector<size_t> &round : rounds) {
      blocking(round, false);
      for (size_t p : round)
        sim.blocking(ops[p].ns);
      blocking(round, true);
    }
    return sim.finish();
  }

  // The code's own order (plan::roundProgram). `ready`: per parameter and
  // rank, when its data is there. A call serves several parameters: it
  // starts when all their data is there, and all of them have its result
  // when it ends. A blocking call holds its members until it ends; an
  // asynchronous one is waited for when its phase issues its next level or
  // completes.
  std::vector<std::vector<double>> ready(ops.size(),
                                         std::vector<double>(numRanks, 0));
  auto issue = [&](const Op &op, const std::vector<size_t> &params,
                   bool async) {
    std::vector<double> at(numRanks, 0);
    for (size_t p : params)
      for (int64_t q = 0; q < numRanks; ++q)
        at[q] = std::max(at[q], ready[p][q]);
    sim.issue(op, at);
    for (size_t p : params)
      ready[p] = at;
    if (!async)
      sim.wait(at);
  };
  struct PhaseRun {
    std::vector<RoundOp> calls;
    size_t next = 0;
    std::vector<size_t> inFlight; // parameters of asynchronous calls
    bool done() const { return next == calls.size(); }
  };
  auto waitFor = [&](PhaseRun &ph) {
    for (size_t p : ph.inFlight)
      sim.wait(ready[p]);
    ph.inFlight.clear();
  };
  // As the expansion issues a level (issueLevel): after the first, a
  // level of reshapes only is no level of calls, and the next one goes
  // with it.
  auto advance = [&](PhaseRun &ph) {
    if (ph.done())
      return;
    waitFor(ph);
    bool first = ph.next == 0, called = false;
    do {
      size_t level = ph.calls[ph.next].level;
      for (; !ph.done() && ph.calls[ph.next].level == level; ++ph.next) {
        const RoundOp &r = ph.calls[ph.next];
        bool async = prefetch > 0 && r.batchable;
        issue(r.op(), r.params, async);
        if (async)
          ph.inFlight.insert(ph.inFlight.end(), r.params.begin(),
                             r.params.end());
        called |= !r.reshapeOnly;
      }
    } while (!called && !first && !ph.done());
  };
  auto complete = [&](PhaseRun &ph) {
    while (!ph.done())
      advance(ph);
    waitFor(ph);
  };
  auto phase = [&](const std::vector<size_t> &params, bool afterNs) {
    return PhaseRun{phaseOps(ops, steps->params, steps->mesh, params, afterNs,
                             /*naive=*/false, batch)};
  };
  std::vector<size_t> groups;
  for (const std::vector<std::vector<size_t>> &g : releases)
    groups.push_back(g.size());
  sim.est.releaseGroups = groups;
  std::vector<PhaseRun> gathers(rounds.size());
  std::vector<std::vector<PhaseRun>> after(rounds.size());
  for (size_t i = 0; i < rounds.size(); ++i)
    after[i].resize(groups[i]);
  for (const RoundAction &a : roundProgram(groups, prefetch)) {
    const std::vector<size_t> &round = rounds[a.round];
    switch (a.kind) {
    case RoundAction::StartGathers:
      for (size_t p : round)
        for (size_t j = 0; j < ops[p].before.size(); ++j)
          if (ops[p].steps[j].kind == CommStep::Kind::ReduceGrad)
            issue(ops[p].before[j], {p}, /*async=*/false);
      gathers[a.round] = phase(round, false);
      advance(gathers[a.round]);
      break;
    case RoundAction::AdvanceGathers:
      advance(gathers[a.round]);
      break;
    case RoundAction::CompleteGathers:
      complete(gathers[a.round]);
      break;
    case RoundAction::Orthogonalise:
      for (size_t p : releases[a.round][a.group])
        sim.compute(ops[p].ns, ready[p]);
      break;
    case RoundAction::StartRedistributes:
      after[a.round][a.group] = phase(releases[a.round][a.group], true);
      advance(after[a.round][a.group]);
      break;
    case RoundAction::AdvanceRedistributes:
      advance(after[a.round][a.group]);
      break;
    case RoundAction::CompleteRedistributes:
      complete(after[a.round][a.group]);
      break;
    }
  }
  return sim.finish();
}

std::vector<double>
plan::gatheredPeakBytes(const std::vector<ParamCostInput> &params,
                        const layout::Mesh &mesh,
                        const std::vector<std::vector<size_t>> &rounds,
                        int64_t prefetch, double bytesPerElement) {
  // Bytes each round leaves on each rank.
  std::vector<std::vector<double>> perRound(
      rounds.size(), std::vector<double>(mesh.numRanks(), 0));
  for (size_t i = 0; i < rounds.size(); ++i)
    for (size_t p : rounds[i]) {
      const ParamCostInput &in = params[p];
      double bytes = static_cast<double>(gatheredElements(
                         in.plan, in.shape, in.layout, mesh, in.owner)) *
                     bytesPerElement;
      for (int64_t r : ownerRanks(in.plan, mesh, in.owner))
        perRound[i][r] += bytes;
    }
  size_t window = 1 + static_cast<size_t>(std::max<int64_t>(0, prefetch));
  std::vector<double> peak(mesh.numRanks(), 0);
  for (size_t i = 0; i < rounds.size(); ++i)
    for (int64_t r = 0; r < mesh.numRanks(); ++r) {
      double held = 0;
      for (size_t j = i; j < std::min(rounds.size(), i + window); ++j)
        held += perRound[j][r];
      peak[r] = std::max(peak[r], held);
    }
  return peak;
}

double plan::lowerBound(const Estimate &rounds) {
  double bound = 0;
  for (size_t r = 0; r < rounds.comm.size(); ++r)
    bound = std::max({bound, rounds.comm[r], rounds.compute[r]});
  return bound;
}
