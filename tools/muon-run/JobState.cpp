//===- JobState.cpp - One rank's tensors across a muon-run job ------------===//

#include "JobState.h"

#include "Reference.h"

using namespace muon;
using namespace muon::run;

JobState::JobState(const Options &o, const StepSpec &spec, int64_t rank)
    : o(o), spec(spec), rank(rank) {
  // What this rank holds of every argument and result: fixed for the job.
  for (const TensorSpec &ts : spec.args)
    argShards.push_back(ts.isScalar() ? Shard{}
                                      : shardOf(spec.params[ts.param].shape,
                                                ts.layout, spec.mesh, rank));
  for (const TensorSpec &ts : spec.results)
    resultShards.push_back(
        shardOf(spec.params[ts.param].shape, ts.layout, spec.mesh, rank));
}

void JobState::initialise() {
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const ParamSpec &p = spec.params[i];
    int64_t n = numElements(p.shape);
    fullP.push_back(generate(o.seed, streamId(0, i, 0, 0), n));
    fullM.push_back(generate(o.seed, streamId(1, i, 0, 0), n));
    Shard s = shardOf(p.shape, p.layout, spec.mesh, rank);
    localP.push_back(extract(fullP[i], p.shape, s));
    localM.push_back(extract(fullM[i], p.shape, s));
  }
}

void JobState::arguments(int64_t t, Tensors &args, Shapes &shapes,
                         Tensors &fullGradients) const {
  args.assign(spec.args.size(), {});
  shapes.assign(spec.args.size(), {});
  fullGradients.assign(spec.params.size(), {});
  for (size_t a = 0; a < spec.args.size(); ++a) {
    const TensorSpec &ts = spec.args[a];
    if (ts.isScalar())
      continue; // passed by value: JobState::scalarArguments
    const ParamSpec &p = spec.params[ts.param];
    const Shard &s = argShards[a];
    shapes[a] = s.local.shape;
    if (ts.role == Role::Param)
      args[a] = localP[ts.param];
    else if (ts.role == Role::Momentum)
      args[a] = localM[ts.param];
    else
      args[a] = extract(
          generate(o.seed,
                   streamId(2, ts.param, t,
                            layout::partialTerms(ts.layout, spec.mesh,
                                                spec.mesh.coords(rank))
                                .index),
                   numElements(p.shape)),
          p.shape, s);
    if (ts.role == Role::Grad && rank == 0)
      fullGradients[ts.param] = fullGradient(ts, t);
  }
}

void JobState::resultBuffers(Tensors &results, Shapes &shapes) const {
  results.assign(spec.results.size(), {});
  shapes.assign(spec.results.size(), {});
  for (size_t r = 0; r < spec.results.size(); ++r) {
    shapes[r] = resultShards[r].local.shape;
    results[r].resize(numElements(shapes[r]));
  }
}

void JobState::takeResults(const Tensors &results) {
  for (size_t r = 0; r < results.size(); ++r) {
    const TensorSpec &ts = spec.results[r];
    (ts.role == Role::Param ? localP : localM)[ts.param] = results[r];
  }
}

void JobState::referenceStep(const Tensors &fullGradients) {
  for (size_t i = 0; i < spec.params.size(); ++i)
    run::referenceStep(
        fullP[i], fullM[i], fullGradients[i], spec.params[i].shape, spec.hyper,
        spec.params[i].plan.blocks.sizes, spec.params[i].plan.blocksAlongRows);
}

std::vector<float> JobState::fullGradient(const TensorSpec &ts,
                                          int64_t t) const {
  const ParamSpec &p = spec.params[ts.param];
  int64_t n = numElements(p.shape);
  std::vector<float> g(n, 0.0f);
  layout::PartialTerms partial =
      layout::partialTerms(ts.layout, spec.mesh, spec.mesh.coords(0));
  int64_t terms = partial.count;
  for (int64_t k = 0; k < terms; ++k) {
    std::vector<float> term = generate(o.seed, streamId(2, ts.param, t, k), n);
    for (int64_t i = 0; i < n; ++i)
      g[i] += term[i];
  }
  float scale = static_cast<float>(partial.scale);
  if (scale != 1.0f)
    for (float &v : g)
      v *= scale;
  return g;
}

std::vector<std::optional<double>> JobState::scalarArguments() const {
  std::vector<std::optional<double>> values(spec.args.size());
  for (size_t a = 0; a < spec.args.size(); ++a)
    if (spec.args[a].role == Role::Lr)
      values[a] = spec.hyper.lr;
    else if (spec.args[a].role == Role::WeightDecay)
      values[a] = spec.hyper.weightDecay;
  return values;
}
