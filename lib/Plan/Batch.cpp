//===- Batch.cpp - The collective calls of a round ------------------------===//

#include "muon/Plan/Batch.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace muon;
using namespace muon::plan;

std::vector<int64_t> plan::participants(const ParamPlan &plan,
                                        const CommStep &step,
                                        const std::vector<int64_t> &oc) {
  std::vector<int64_t> want = plan.fixed;
  want.resize(oc.size(), -1);
  for (int a : step.holderAxes)
    want[a] = oc[a];
  return want;
}

bool plan::batchable(const CommStep &step) {
  return step.kind == CommStep::Kind::Broadcast ||
         ((step.kind == CommStep::Kind::Gather ||
           step.kind == CommStep::Kind::Scatter) &&
          !step.reshapeOnly);
}

namespace {
/// The steps of a phase of one parameter: [begin, end) of its steps.
std::pair<size_t, size_t> phaseOf(const std::vector<CommStep> &steps,
                                  bool afterNs) {
  size_t ns = std::find_if(steps.begin(), steps.end(),
                           [](const CommStep &s) {
                             return s.kind == CommStep::Kind::NewtonSchulz;
                           }) -
              steps.begin();
  if (afterNs)
    return {std::min(ns + 1, steps.size()), steps.size()};
  size_t first = 0;
  while (first < ns && steps[first].kind == CommStep::Kind::ReduceGrad)
    ++first;
  return {first, ns};
}
} // namespace

std::vector<RoundCall> plan::roundCalls(const std::vector<RoundParam> &round,
                                        bool afterNs, bool batch) {
  std::vector<std::pair<size_t, size_t>> phase;
  size_t levels = 0;
  for (const RoundParam &p : round) {
    phase.push_back(phaseOf(*p.steps, afterNs));
    levels = std::max(levels, phase.back().second - phase.back().first);
  }
  using Key = std::tuple<int, std::vector<int>, std::vector<int64_t>>;
  std::vector<RoundCall> calls;
  for (size_t level = 0; level < levels; ++level) {
    std::map<Key, size_t> open; // key -> index of its call in `calls`
    for (size_t i = 0; i < round.size(); ++i) {
      size_t s = phase[i].first + level;
      if (s >= phase[i].second)
        continue;
      const CommStep &step = (*round[i].steps)[s];
      if (!batch || !batchable(step)) {
        calls.push_back({{{i, s}}, level});
        continue;
      }
      Key key{static_cast<int>(step.kind), step.axes,
              participants(*round[i].plan, step, round[i].ownerCoords)};
      auto [it, fresh] = open.try_emplace(key, calls.size());
      if (fresh)
        calls.push_back({{}, level});
      calls[it->second].items.push_back({i, s});
    }
  }
  return calls;
}
