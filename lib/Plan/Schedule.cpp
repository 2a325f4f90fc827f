//===- Schedule.cpp - Order of a step's parameters, and its cost ----------===//

#include "muon/Plan/Schedule.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace muon;
using namespace muon::plan;

std::vector<std::vector<size_t>>
plan::scheduleRounds(const std::vector<int64_t> &owners,
                     const std::vector<double> &cost, bool rounds) {
  std::vector<std::vector<size_t>> result;
  if (!rounds) {
    for (size_t i = 0; i < owners.size(); ++i)
      result.push_back({i});
    return result;
  }
  std::map<int64_t, std::vector<size_t>> byOwner;
  for (size_t i = 0; i < owners.size(); ++i)
    byOwner[owners[i]].push_back(i);
  for (auto &[owner, list] : byOwner) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return cost[a] > cost[b]; });
    for (size_t k = 0; k < list.size(); ++k) {
      if (result.size() <= k)
        result.emplace_back();
      result[k].push_back(list[k]);
    }
  }
  for (std::vector<size_t> &round : result)
    std::sort(round.begin(), round.end());
  return result;
}

Link CostModel::linkFor(const layout::Mesh &mesh,
                        const std::vector<int> &axes) const {
  // Row-major ranks: a communicator stays in one node when the span of
  // ranks its axes cover fits in a node and starts at a node boundary
  // whenever its first member does (strides divide the node size).
  int64_t span = 1;
  for (int a : axes) {
    int64_t stride = 1;
    for (int b = a + 1; b < mesh.numAxes(); ++b)
      stride *= mesh.sizes[b];
    span = std::max(span, stride * mesh.sizes[a]);
  }
  return span <= ranksPerNode && ranksPerNode % span == 0 ? intraNode
                                                          : interNode;
}

namespace {

/// One communicator instance of a collective: its members and how long it
/// takes.
struct Instance {
  std::vector<int64_t> members;
  double seconds = 0;
};

/// One step of one parameter over the whole mesh: a collective (one
/// instance per communicator) or Newton-Schulz on some ranks.
struct Op {
  bool compute = false;
  std::string label;
  std::vector<Instance> instances;
  std::vector<std::pair<int64_t, double>> work; // (rank, seconds)
};

/// A parameter's steps: before Newton-Schulz, Newton-Schulz, after.
struct ParamOps {
  std::vector<Op> before, after;
  Op ns;
  double matrixBytes = 0; // one gathered matrix slice of an NS rank
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
    std::vector<CommStep> steps =
        planSteps(p.plan, p.layout, p.gradLayout, mesh, p.owner);
    std::vector<int64_t> oc = mesh.coords(p.owner);
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
        ops.matrixBytes =
            static_cast<double>(layout::localShard(p.shape, s.to, mesh, oc)
                                    .numElements()) *
            model.bytesPerElement;
        continue;
      }
      if (naive && s.kind != CommStep::Kind::ReduceGrad &&
          s.kind != CommStep::Kind::Gather)
        continue; // every rank has the whole matrix: nothing to send back
      Op op = collective(p, s, oc, naive);
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
    auto elementsOf = [&](const layout::Layout &l, int64_t r) {
      return static_cast<double>(
          layout::localShard(p.shape, l, mesh, coords[r]).numElements());
    };
    for (int64_t r = 0; r < numRanks; ++r) {
      // Naive gathers are all-gathers: every rank of the group takes part.
      bool inStep = naive ? inGroup(p.plan, coords[r])
                          : takesPart(p.plan, s, coords[r], oc);
      if (!inStep)
        continue;
      member[r] = true;
      if (s.kind == CommStep::Kind::ReduceGrad) {
        // Ring all-reduce: each rank sends and receives 2 (n - 1) / n of
        // its gradient.
        double bytes = 2.0 * static_cast<double>(n - 1) /
                       static_cast<double>(n) * elementsOf(p.gradLayout, r) *
                       model.bytesPerElement;
        sent[r] = received[r] = bytes;
      } else if (naive) {
        // All-gather: each rank receives what it lacks and sends its piece
        // to the n - 1 others (a ring forwards as much as it receives).
        double bytes =
            (elementsOf(s.to, r) - elementsOf(s.from, r)) *
            model.bytesPerElement;
        sent[r] = received[r] = bytes;
      }
    }
    if (!naive && s.kind != CommStep::Kind::ReduceGrad)
      for (const Transfer &t : transfersOf(p.plan, s, p.shape, mesh, p.owner)) {
        double bytes = static_cast<double>(t.elements) * model.bytesPerElement;
        sent[t.from] += bytes;
        received[t.to] += bytes;
      }

    Link link = model.linkFor(mesh, s.axes);
    std::map<std::vector<int64_t>, Instance> byKey;
    for (int64_t r = 0; r < numRanks; ++r) {
      if (!member[r])
        continue;
      std::vector<int64_t> key;
      for (int a = 0; a < mesh.numAxes(); ++a)
        if (std::find(s.axes.begin(), s.axes.end(), a) == s.axes.end())
          key.push_back(coords[r][a]);
      Instance &inst = byKey[key];
      inst.members.push_back(r);
      inst.seconds =
          std::max(inst.seconds, std::max(sent[r], received[r]) /
                                     link.bandwidth);
    }
    Op op;
    for (auto &[key, inst] : byKey) {
      inst.seconds += link.latency;
      op.instances.push_back(std::move(inst));
    }
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
};

ScheduleEstimator::ScheduleEstimator(
    const std::vector<ParamCostInput> &params, const layout::Mesh &mesh,
    int64_t nsSteps, const CostModel &model)
    : steps(std::make_unique<Steps>(params, mesh, nsSteps, model)) {}

ScheduleEstimator::~ScheduleEstimator() = default;

Estimate plan::estimateSchedule(const std::vector<ParamCostInput> &params,
                                const layout::Mesh &mesh, int64_t nsSteps,
                                const CostModel &model, ScheduleKind kind,
                                int64_t prefetch, bool trace) {
  return ScheduleEstimator(params, mesh, nsSteps, model)
      .estimate(kind, prefetch, trace);
}

Estimate ScheduleEstimator::estimate(ScheduleKind kind, int64_t prefetch,
                                     bool trace) {
  int64_t numRanks = steps->mesh.numRanks();
  const std::vector<ParamOps> &ops = steps->of(kind);
  std::vector<std::vector<size_t>> rounds = scheduleRounds(
      steps->owners, steps->cost, kind == ScheduleKind::Rounds);
  Simulator sim(numRanks, trace);

  // Peak memory: the gathered matrices a rank orthogonalises that are alive
  // at once (one round, plus `prefetch` rounds in flight; every matrix in
  // turn for the naive schedule).
  size_t window = kind == ScheduleKind::Rounds ? 1 + prefetch : 1;
  for (size_t i = 0; i < rounds.size(); ++i) {
    std::vector<double> bytes(numRanks, 0);
    for (size_t j = i; j < std::min(rounds.size(), i + window); ++j)
      for (size_t p : rounds[j])
        for (auto [r, t] : ops[p].ns.work)
          bytes[r] += ops[p].matrixBytes;
    for (int64_t r = 0; r < numRanks; ++r)
      sim.est.peakBytes[r] = std::max(sim.est.peakBytes[r], bytes[r]);
  }

  if (kind != ScheduleKind::Rounds || prefetch <= 0) {
    for (const std::vector<size_t> &round : rounds) {
      for (size_t p : round)
        for (const Op &op : ops[p].before)
          sim.blocking(op);
      for (size_t p : round)
        sim.blocking(ops[p].ns);
      for (size_t p : round)
        for (const Op &op : ops[p].after)
          sim.blocking(op);
    }
    return sim.finish();
  }

  // Prefetch: gathers k rounds ahead, redistributes overlapping the next
  // round's Newton-Schulz; the update of round i is applied after round
  // i + 1's Newton-Schulz.
  std::vector<std::vector<double>> ready(ops.size(),
                                         std::vector<double>(numRanks, 0));
  auto issueGathers = [&](size_t i) {
    for (size_t p : rounds[i])
      for (const Op &op : ops[p].before)
        sim.issue(op, ready[p]);
  };
  size_t k = static_cast<size_t>(prefetch);
  for (size_t i = 0; i < std::min(k, rounds.size()); ++i)
    issueGathers(i);
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (i + k < rounds.size())
      issueGathers(i + k);
    for (size_t p : rounds[i])
      sim.compute(ops[p].ns, ready[p]);
    for (size_t p : rounds[i])
      for (const Op &op : ops[p].after)
        sim.issue(op, ready[p]);
    if (i > 0)
      for (size_t p : rounds[i - 1])
        sim.wait(ready[p]);
  }
  for (size_t p : rounds.empty() ? std::vector<size_t>() : rounds.back())
    sim.wait(ready[p]);
  return sim.finish();
}

double plan::lowerBound(const Estimate &rounds) {
  double bound = 0;
  for (size_t r = 0; r < rounds.comm.size(); ++r)
    bound = std::max({bound, rounds.comm[r], rounds.compute[r]});
  return bound;
}
