//===- JobState.h - One rank's tensors across a muon-run job ---*- C++ -*-===//
//
// Every rank generates the full initial tensors from the seed (cheap, and
// independent of the layout), keeps its own shards of parameters and
// momenta, builds the entry's arguments each step (gradients are generated
// per step, as partial terms where the layout says so), and takes the
// entry's results back. Rank 0 also keeps the full reference state.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_TOOLS_MUONRUN_JOBSTATE_H
#define MUON_TOOLS_MUONRUN_JOBSTATE_H

#include "HostTensors.h"
#include "Options.h"
#include "StepSpec.h"

#include <optional>
#include <vector>

namespace muon {
namespace run {

class JobState {
public:
  JobState(const Options &o, const StepSpec &spec, int64_t rank);

  /// Generates the initial parameters and momenta; keeps this rank's shards.
  void initialise();

  /// The entry's arguments at step `t` (this rank's shards, in argument
  /// order) and their shapes. On rank 0, `fullGradients` receives every
  /// parameter's full gradient for the reference.
  void arguments(int64_t t, Tensors &args, Shapes &shapes,
                 Tensors &fullGradients) const;

  /// Out-buffers of the right local shapes, in result order.
  void resultBuffers(Tensors &results, Shapes &shapes) const;
  /// The f64 arguments (lr, weight_decay read at run time), by argument
  /// index; unset for tensors.
  std::vector<std::optional<double>> scalarArguments() const;

  /// Takes the entry's results as the new local parameters and momenta.
  void takeResults(const Tensors &results);

  /// Rank 0: one single-device reference step on the full state.
  void referenceStep(const Tensors &fullGradients);

  /// Full initial (then, on rank 0, reference) state, and the local shards.
  Tensors fullP, fullM, localP, localM;

private:
  std::vector<float> fullGradient(const TensorSpec &ts, int64_t t) const;

  const Options &o;
  const StepSpec &spec;
  int64_t rank;
  std::vector<Shard> argShards, resultShards;
};

} // namespace run
} // namespace muon

#endif // MUON_TOOLS_MUONRUN_JOBSTATE_H
