//===- ExpandStep.cpp - muon.step -> SPMD code on local tensors -----------===//
//
// Every rank runs the code this pass emits. Collectives sit only under
// conditions on mesh coordinates that are uniform over their communicator
// (the coordinates of other axes), so every member of a communicator issues
// the same sequence: the SPMD rule that dist-verify-spmd checks.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/NsCoefficients.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Plan/Batch.h"
#include "muon/Plan/Schedule.h"
#include "muon/Support/VerifyPassOutput.h"

#include "StepCost.h"
#include "StepRoles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace muon {
namespace optim {
#define GEN_PASS_DEF_MUONEXPANDSTEP
#include "muon/Dialect/Muon/Transforms/Passes.h.inc"
} // namespace optim
} // namespace muon

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;
using ::muon::plan::AxisRole;
using ::muon::plan::Split;

/// The scale of the orthogonalised update for an m x n matrix.
static double updateScale(LrAdjust adjust, int64_t m, int64_t n) {
  double dm = static_cast<double>(m), dn = static_cast<double>(n);
  switch (adjust) {
  case LrAdjust::MatchRmsAdamW:
    return 0.2 * std::sqrt(std::max(dm, dn));
  case LrAdjust::SpectralUnclamped:
    return std::sqrt(dm / dn);
  case LrAdjust::Original:
    break;
  }
  return std::sqrt(std::max(1.0, dm / dn));
}

namespace {
/// Emits the SPMD code of one muon.step.
class StepExpander {
public:
  /// `prefetch`: rounds whose gathers are in flight ahead of the one being
  /// orthogonalised (0: every collective blocks where it is issued).
  /// `nsStackBytes`: the most bytes (4 per element) of an owner's
  /// same-shape matrices stacked into one Newton-Schulz call (0: none).
  /// `model`: the cost model that decides the release groups.
  StepExpander(StepOp step, const StepFacts &facts, bool batch,
               int64_t prefetch, int64_t nsStackBytes,
               const CostModelOptions &model)
      : step(step), facts(facts), batch(batch), prefetch(prefetch),
        nsStackBytes(nsStackBytes), model(model), b(step), loc(step.getLoc()),
        meshRef(cast<dist::DistTensorType>(step.getParams()[0].getType())
                    .getMesh()) {}

  void run() {
    // Coordinates first, so they dominate every use in the expanded code.
    for (int a = 0; a < mesh().numAxes(); ++a)
      coords[a] = dist::CoordOp::create(
          b, loc, meshRef, b.getStrArrayAttr({mesh().axisNames[a]}));
    size_t n = facts.params.size();
    states.assign(n, ParamState());
    rounds = roundsOf(step, facts, nsStackBytes);
    stackKeys = nsStackKeys(facts);
    planned.resize(n);
    for (size_t p = 0; p < n; ++p)
      planned[p] = plan::planSteps(facts.params[p].plan, facts.params[p].layout,
                                   facts.params[p].gradLayout, mesh(),
                                   (*step.getOwners())[p]);
    releases = releasesOf(step, facts, rounds, planned, nsStackBytes, prefetch,
                          batch, model);
    size_t r = rounds.size();
    // A round's gathers are issued together (batched where they share a
    // communicator: plan::roundCalls), then every owner orthogonalises its
    // parameter at once (release group by release group), then the
    // redistributes, in the order plan::roundProgram gives (the one the
    // schedule estimate simulates).
    gathers.assign(r, Phase());
    scatters.assign(r, {});
    std::vector<size_t> groups;
    for (size_t i = 0; i < r; ++i) {
      groups.push_back(releases[i].size());
      scatters[i].resize(releases[i].size());
    }
    for (const plan::RoundAction &a : plan::roundProgram(groups, prefetch)) {
      size_t i = a.round, g = a.group;
      switch (a.kind) {
      case plan::RoundAction::StartGathers:
        startRound(i);
        break;
      case plan::RoundAction::AdvanceGathers:
        issueLevel(gathers[i]);
        break;
      case plan::RoundAction::CompleteGathers:
        complete(gathers[i]);
        break;
      case plan::RoundAction::Orthogonalise:
        orthogonaliseRound(releases[i][g]);
        break;
      case plan::RoundAction::StartRedistributes:
        scatters[i][g] = phaseOf(releases[i][g], /*afterNs=*/true);
        issueLevel(scatters[i][g]);
        break;
      case plan::RoundAction::AdvanceRedistributes:
        issueLevel(scatters[i][g]);
        break;
      case plan::RoundAction::CompleteRedistributes:
        complete(scatters[i][g]);
        for (size_t p : releases[i][g])
          finish(states[p]);
        break;
      }
    }
    SmallVector<Value> results;
    for (ParamState &s : states)
      results.push_back(s.newP);
    for (ParamState &s : states)
      results.push_back(s.newM);
    step.replaceAllUsesWith(results);
    step.erase();
    for (auto &[axis, c] : coords)
      if (c.use_empty())
        c.getDefiningOp()->erase();
  }

private:
  /// One parameter between the phases of its expansion.
  struct ParamState {
    size_t index = 0;
    std::vector<int64_t> ownerCoords;
    std::vector<plan::CommStep> steps;
    size_t nsStep = 0;               // index of the Newton-Schulz step
    // The ranks of the parameter's group: the box [groupLo, groupHi) of
    // coordinates (its fixed axes pinned).
    std::vector<int64_t> groupLo, groupHi;
    RankedTensorType localT;
    Value pl, ml;                    // local parameter and momentum
    Value inGroup;                   // null when every rank is in the group
    Value x;                         // the update as it travels
    Value newP, newM;                // results (distributed)
    Value newMLocal;
  };

  /// The gathers or the redistributes of one round, issued level by level.
  struct Phase {
    std::vector<size_t> round;          // its parameters
    std::vector<plan::RoundCall> calls; // plan::roundCalls, level order
    size_t next = 0;                    // the first call not issued
    SmallVector<Value> tokens;          // issued, not yet waited on
    /// Flat gathers in flight: the element range each brings becomes its
    /// matrix (of this type) once the wait is passed.
    SmallVector<std::pair<ParamState *, RankedTensorType>> reshapes;
    bool done() const { return next == calls.size(); }
  };

  StepOp step;
  const StepFacts &facts;
  bool batch;
  int64_t prefetch;
  int64_t nsStackBytes;
  CostModelOptions model;
  std::vector<plan::NsStackKey> stackKeys; // what may share a call
  std::vector<ParamState> states;
  std::vector<std::vector<size_t>> rounds;
  /// Per round, its release groups (releasesOf).
  std::vector<std::vector<std::vector<size_t>>> releases;
  /// Each parameter's plan::planSteps, until begin() takes them.
  std::vector<std::vector<plan::CommStep>> planned;
  std::vector<Phase> gathers;
  /// Per round, the redistributes of each release group.
  std::vector<std::vector<Phase>> scatters;
  OpBuilder b;
  Location loc;
  FlatSymbolRefAttr meshRef;
  std::map<int, Value> coords;

  const layout::Mesh &mesh() const { return facts.mesh; }

  /// Local types already computed, by everything they depend on: the
  /// parameters of a model share a few shapes, layouts and group boxes, and
  /// each local type costs a local shard per combination of splitting
  /// coordinates in the box (0.18 G instructions on a 405B step).
  std::map<std::vector<int64_t>, RankedTensorType> localTypes;

  RankedTensorType localOf(const ParamState &s, const layout::Layout &l) {
    const ParamFacts &p = facts.params[s.index];
    Type element = p.type.getElementType();
    std::vector<int64_t> key = layout::key(l);
    key.push_back(static_cast<int64_t>(
        reinterpret_cast<uintptr_t>(element.getAsOpaquePointer())));
    for (const std::vector<int64_t> *part : {&p.shape, &s.groupLo, &s.groupHi}) {
      key.push_back(static_cast<int64_t>(part->size()));
      llvm::append_range(key, *part);
    }
    RankedTensorType &local = localTypes[key];
    if (!local)
      local = dist::localTensorType(p.shape, element, l, mesh(), s.groupLo,
                                    s.groupHi);
    return local;
  }

  /// `body()` on the ranks where `cond` holds (all when null), cast to
  /// `types`; elsewhere `others` (placeholders when empty).
  SmallVector<Value> where(Value cond, TypeRange types, ValueRange others,
                           function_ref<SmallVector<Value>()> body) {
    if (!cond) {
      SmallVector<Value> values = body();
      for (auto [v, t] : llvm::zip(values, types))
        v = castTo(v, t);
      return values;
    }
    auto ifOp = scf::IfOp::create(b, loc, types, cond,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> values = body();
    for (auto [v, t] : llvm::zip(values, types))
      v = castTo(v, t);
    scf::YieldOp::create(b, loc, values);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    SmallVector<Value> elseValues(others);
    if (elseValues.empty())
      for (Type t : types)
        elseValues.push_back(
            isa<dist::TokenType>(t)
                ? dist::CompletedTokenOp::create(b, loc).getResult()
                : placeholder(cast<RankedTensorType>(t)));
    scf::YieldOp::create(b, loc, elseValues);
    return SmallVector<Value>(ifOp.getResults());
  }

  /// `body()` on the ranks of the parameter's group; elsewhere `others`.
  SmallVector<Value> inGroup(const ParamState &s, TypeRange types,
                             ValueRange others,
                             function_ref<SmallVector<Value>()> body) {
    return where(s.inGroup, types, others, body);
  }

  /// Phase 1: local views, gradient reductions and momentum.
  ParamState begin(size_t i, int64_t owner) {
    const ParamFacts &p = facts.params[i];
    const plan::ParamPlan &pp = p.plan;
    ParamState s;
    s.index = i;
    s.ownerCoords = mesh().coords(owner);
    s.steps = std::move(planned[i]);
    s.nsStep = std::find_if(s.steps.begin(), s.steps.end(),
                            [](const plan::CommStep &c) {
                              return c.kind ==
                                     plan::CommStep::Kind::NewtonSchulz;
                            }) -
               s.steps.begin();
    // The ranks plan::inGroup accepts, as a box (empty when a fixed
    // coordinate is outside the mesh).
    s.groupLo.assign(mesh().numAxes(), 0);
    s.groupHi = mesh().sizes;
    for (int a = 0; a < mesh().numAxes(); ++a)
      if (pp.fixed[a] >= 0) {
        s.groupLo[a] = pp.fixed[a];
        s.groupHi[a] = std::min(pp.fixed[a] + 1, mesh().sizes[a]);
      }

    Value P = step.getParams()[i], G = step.getGrads()[i],
          M = step.getMomenta()[i];
    s.localT = dist::localTensorType(p.type, step);
    auto gradType = cast<dist::DistTensorType>(G.getType());
    s.pl = dist::ToLocalOp::create(b, loc, s.localT, P);
    Value gl = dist::ToLocalOp::create(
        b, loc, dist::localTensorType(gradType, step), G);
    s.ml = dist::ToLocalOp::create(b, loc, s.localT, M);

    // A parameter that exists only in its group (EP/PP-local, whole
    // storage): everything runs there, and the other ranks keep theirs.
    SmallVector<int> fixedAxes;
    for (int a = 0; a < mesh().numAxes(); ++a)
      if (pp.roles[a] == AxisRole::Whole || pp.roles[a] == AxisRole::Local)
        fixedAxes.push_back(a);
    s.inGroup = coordsEqual(fixedAxes, pp.fixed);

    RankedTensorType xT = localOf(s, p.layout);
    // What ranks outside the group yield; made only where there are such
    // ranks (an unused placeholder would be carried through bufferization
    // as a dead allocation, once per parameter).
    SmallVector<Value> outside;
    if (s.inGroup)
      outside = {placeholder(xT), s.ml};
    SmallVector<Value> out = inGroup(
        s, {xT, s.localT}, outside, [&] {
          size_t next = 0;
          Value g = gl;
          for (; next < s.nsStep &&
                 s.steps[next].kind == plan::CommStep::Kind::ReduceGrad;
               ++next)
            g = reduceStep(s, s.steps[next], g);
          g = castTo(g, s.localT);
          auto mu = MomentumUpdateOp::create(
              b, loc, s.ml, g, step.getMomentumAttr(),
              step.getMomentumForm() == MomentumForm::Sum ? b.getUnitAttr()
                                                          : UnitAttr(),
              step.getNesterov() ? b.getUnitAttr() : UnitAttr());
          return SmallVector<Value>{mu.getUpdate(), mu.getNewMomentum()};
        });
    s.x = out[0];
    s.newMLocal = out[1];
    return s;
  }

  /// Momentum of every parameter of round `i`, then its first level of
  /// gathers.
  void startRound(size_t i) {
    for (size_t p : rounds[i])
      states[p] = begin(p, (*step.getOwners())[p]);
    gathers[i] = phaseOf(rounds[i], /*afterNs=*/false);
    issueLevel(gathers[i]);
  }

  /// The gathers (`afterNs` false) or redistributes of `params`.
  Phase phaseOf(ArrayRef<size_t> which, bool afterNs) {
    Phase ph;
    ph.round.assign(which.begin(), which.end());
    std::vector<plan::RoundParam> params;
    for (size_t p : ph.round)
      params.push_back({&facts.params[p].plan, &states[p].steps,
                        states[p].ownerCoords});
    ph.calls = plan::roundCalls(params, afterNs, batch);
    return ph;
  }

  /// Waits for the phase's calls in flight, then issues its next level:
  /// asynchronously with prefetch (batchable steps as batches, a single
  /// one as a batch of one), else blocking. After the phase's first
  /// level, a level of reshapes only (CommStep::reshapeOnly) is no level
  /// of calls: the next one is issued with it, as the schedule estimate
  /// and plan::releaseGroups assume. (A first level of reshapes only is
  /// issued alone: the next issue then waits for nothing, so that level's
  /// calls hold no one.)
  void issueLevel(Phase &ph) {
    if (ph.done())
      return;
    waitFor(ph);
    bool first = ph.next == 0, called = false;
    do {
      size_t level = ph.calls[ph.next].level;
      for (; !ph.done() && ph.calls[ph.next].level == level; ++ph.next)
        called |= issueCall(ph, ph.calls[ph.next]);
    } while (!called && !first && !ph.done());
  }

  /// One call of `ph` (reshapes only for a reshape-only step); whether it
  /// was a collective.
  bool issueCall(Phase &ph, const plan::RoundCall &call) {
    SmallVector<ParamState *> items;
    SmallVector<const plan::CommStep *> steps;
    for (auto [k, j] : call.items) {
      items.push_back(&states[ph.round[k]]);
      steps.push_back(&items.back()->steps[j]);
    }
    bool async = prefetch > 0 && plan::batchable(*steps.front());
    SmallVector<Value> xs =
        items.size() == 1 ? emitStep(*items[0], *steps[0], items[0]->x, async)
                          : batchStep(items, steps, async);
    if (async)
      ph.tokens.push_back(xs.pop_back_val());
    for (auto [s, c, x] : llvm::zip(items, steps, xs)) {
      s->x = x;
      if (!flatGather(*c))
        continue;
      if (async)
        ph.reshapes.push_back({s, localOf(*s, c->to)});
      else
        s->x = toMatrix(x, localOf(*s, c->to));
    }
    return !steps.front()->reshapeOnly;
  }

  /// A gather of a flat split: it brings the element range, which becomes
  /// the matrix after it (after its wait when it is asynchronous).
  static bool flatGather(const plan::CommStep &c) {
    return c.kind == plan::CommStep::Kind::Gather &&
           c.split == Split::Kind::Flat;
  }

  /// A scatter of a flat split: it takes the element range of the matrix.
  static bool flatScatter(const plan::CommStep &c) {
    return c.kind == plan::CommStep::Kind::Scatter &&
           c.split == Split::Kind::Flat;
  }

  /// What the collective of step `c` yields: the data of its `to` layout,
  /// as the element range for a flat gather.
  RankedTensorType yielded(const ParamState &s, const plan::CommStep &c) {
    RankedTensorType t = localOf(s, c.to);
    if (!flatGather(c))
      return t;
    return RankedTensorType::get({t.getNumElements()}, t.getElementType());
  }

  /// What the collective of step `c` takes of `x`: the element range of a
  /// flat scatter's matrix, else `x`.
  Value taken(const plan::CommStep &c, Value x) {
    if (!flatScatter(c))
      return x;
    auto t = cast<RankedTensorType>(x.getType());
    return tensor::CollapseShapeOp::create(b, loc, x, allDims(t.getRank()));
  }

  Value toMatrix(Value flat, RankedTensorType t) {
    return tensor::ExpandShapeOp::create(b, loc, t, flat, allDims(t.getRank()));
  }

  /// Every call of the phase issued and waited for.
  void complete(Phase &ph) {
    while (!ph.done())
      issueLevel(ph);
    waitFor(ph);
  }

  void waitFor(Phase &ph) {
    if (!ph.tokens.empty())
      dist::WaitOp::create(b, loc, ph.tokens);
    ph.tokens.clear();
    for (auto [s, t] : ph.reshapes)
      s->x = toMatrix(s->x, t);
    ph.reshapes.clear();
  }

  /// The ranks that take part in step `c` of `s`: null when all do.
  Value participating(const ParamState &s, const plan::CommStep &c) {
    std::vector<int64_t> want = plan::participants(
        facts.params[s.index].plan, c, s.ownerCoords);
    SmallVector<int> axes;
    for (int a = 0; a < mesh().numAxes(); ++a)
      if (want[a] >= 0)
        axes.push_back(a);
    return coordsEqual(axes, want);
  }

  /// Phase 2: Newton-Schulz on the owner (and the ranks that hold the same
  /// gathered matrix).
  void orthogonalise(ParamState &s) {
    if (s.nsStep < s.steps.size())
      s.x = emitStep(s, s.steps[s.nsStep], s.x)[0];
  }

  /// Phase 2 of a round: with stacking, the matrices that may stack
  /// (`stackKeys`) of one static 2-D type that run on the same ranks go to
  /// one batched call (as many as fit `nsStackBytes`), in the order their
  /// first one appears; the others one by one.
  void orthogonaliseRound(ArrayRef<size_t> round) {
    std::vector<SmallVector<ParamState *>> stacks;
    std::map<std::pair<std::vector<int64_t>, const void *>, size_t> open;
    for (size_t p : round) {
      ParamState &s = states[p];
      if (s.nsStep >= s.steps.size())
        continue;
      auto type = dyn_cast<RankedTensorType>(s.x.getType());
      int64_t bytes = type && type.hasStaticShape() && type.getRank() == 2
                          ? plan::f32BytesSaturating(type.getNumElements())
                          : 0;
      if (nsStackBytes <= 0 || bytes == 0 || bytes > nsStackBytes ||
          stackKeys[p].kind.empty()) {
        stacks.push_back({&s});
        continue;
      }
      std::pair<std::vector<int64_t>, const void *> key{
          plan::participants(facts.params[p].plan, s.steps[s.nsStep],
                             s.ownerCoords),
          type.getAsOpaquePointer()};
      auto at = open.find(key);
      if (at != open.end() &&
          static_cast<int64_t>(stacks[at->second].size()) <
              nsStackBytes / bytes) {
        stacks[at->second].push_back(&s);
        continue;
      }
      open[key] = stacks.size();
      stacks.push_back({&s});
    }
    for (ArrayRef<ParamState *> stack : stacks) {
      if (stack.size() == 1) {
        orthogonalise(*stack.front());
        continue;
      }
      ParamState &first = *stack.front();
      auto type = cast<RankedTensorType>(first.x.getType());
      SmallVector<Type> types(stack.size(), type);
      SmallVector<Value> outs = where(
          participating(first, first.steps[first.nsStep]), types, {}, [&] {
            return stackedNewtonSchulz(stack, type);
          });
      for (auto [s, o] : llvm::zip(stack, outs))
        s->x = o;
    }
  }

  /// One Newton-Schulz over the matrices of `stack` (all of type `type`,
  /// m x n): concatenated into a k x m x n batch, orthogonalised, taken
  /// out.
  SmallVector<Value> stackedNewtonSchulz(ArrayRef<ParamState *> stack,
                                         RankedTensorType type) {
    int64_t k = static_cast<int64_t>(stack.size());
    int64_t m = type.getDimSize(0), n = type.getDimSize(1);
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(m),
                                    b.getIndexAttr(n)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto offsetsOf = [&](int64_t j) {
      return SmallVector<OpFoldResult>{b.getIndexAttr(j), b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
    };
    auto one = RankedTensorType::get({1, m, n}, type.getElementType());
    SmallVector<Value> matrices;
    for (ParamState *s : stack)
      matrices.push_back(tensor::ExpandShapeOp::create(
          b, loc, one, s->x, ArrayRef<ReassociationIndices>{{0, 1}, {2}}));
    Value o = newtonSchulz(concat(0, matrices));
    // Each result is copied out of the batch into a buffer of its own: a
    // view would keep the whole batch alive until the last result's last
    // use, and buffers that share one allocation are not the structure
    // muon-place-deallocations frees one by one.
    SmallVector<Value> outs;
    for (int64_t j = 0; j < k; ++j) {
      Value slice = tensor::ExtractSliceOp::create(b, loc, type, o,
                                                   offsetsOf(j), sizes, strides);
      Value own = tensor::EmptyOp::create(b, loc, type.getShape(),
                                          type.getElementType());
      outs.push_back(
          linalg::CopyOp::create(b, loc, slice, own).getResult(0));
    }
    return outs;
  }

  /// Phase 3: apply the redistributed update.
  void finish(ParamState &s) {
    const ParamFacts &p = facts.params[s.index];
    Value newPLocal =
        inGroup(s, {s.localT}, {s.pl}, [&] {
          Value o = castTo(s.x, s.localT);
          double scale = uniformScale(p.plan).value_or(1.0);
          // lr and weight_decay: the step's operands (read at run time)
          // or its constants.
          Value lr = step.getLrValue(), wd = step.getWeightDecayValue();
          return SmallVector<Value>{ApplyUpdateOp::create(
              b, loc, s.pl, o, lr, wd, lr ? FloatAttr() : step.getLrAttr(),
              wd ? FloatAttr()
                 : b.getF64FloatAttr(step.getWeightDecayConstant()),
              b.getF64FloatAttr(scale))};
        })[0];
    s.newP = dist::FromLocalOp::create(b, loc, p.type, newPLocal);
    s.newM = dist::FromLocalOp::create(b, loc,
                                       step.getMomenta()[s.index].getType(),
                                       s.newMLocal);
  }

  /// One gather, Newton-Schulz, scatter or broadcast of the plan, on the
  /// ranks that take part in it (a condition uniform over its
  /// communicator: the parameter's group, and the replicas and axes
  /// already gathered matching the owner). With `async` (a batchable step
  /// only) the collective also returns its token, a completed one on the
  /// ranks that skip it.
  SmallVector<Value> emitStep(const ParamState &s, const plan::CommStep &c,
                              Value x, bool async = false) {
    RankedTensorType resultT = yielded(s, c);
    Type token = async ? dist::TokenType::get(b.getContext()) : Type();
    SmallVector<Type> types{resultT};
    if (async)
      types.push_back(token);
    return where(participating(s, c), types, {}, [&]() -> SmallVector<Value> {
      switch (c.kind) {
      case plan::CommStep::Kind::ReduceGrad:
        llvm_unreachable("gradient reductions come first");
      case plan::CommStep::Kind::Gather:
        return rootedStep<dist::GatherOp>(c, x, resultT, token);
      case plan::CommStep::Kind::NewtonSchulz:
        return {orthogonaliseBlocks(s, x)};
      case plan::CommStep::Kind::Scatter:
        return rootedStep<dist::ScatterOp>(c, taken(c, x), resultT, token);
      case plan::CommStep::Kind::Broadcast:
        return SmallVector<Value>(
            dist::BroadcastOp::create(b, loc, x.getType(), token, x, meshRef,
                                      axisNames(c.axes),
                                      b.getI64IntegerAttr(c.root))
                ->getResults());
      }
      llvm_unreachable("unknown step kind");
    });
  }

  /// Gathers, scatters or broadcasts of several parameters (same kind,
  /// communicator and participants: plan::roundCalls) as one
  /// dist.gather_batch / dist.scatter_batch / dist.broadcast_batch; `async`
  /// adds its token as the last value (a completed one on the ranks that
  /// skip it).
  SmallVector<Value> batchStep(ArrayRef<ParamState *> items,
                               ArrayRef<const plan::CommStep *> steps,
                               bool async) {
    const plan::CommStep &first = *steps.front();
    SmallVector<Type> types;
    SmallVector<Value> inputs;
    SmallVector<int64_t> dims, roots;
    SmallVector<Attribute> sizes, weights;
    bool anySizes = false, anyWeights = false;
    for (auto [s, c] : llvm::zip(items, steps)) {
      types.push_back(yielded(*s, *c));
      inputs.push_back(taken(*c, s->x));
      dims.push_back(c->dim);
      roots.push_back(c->root);
      sizes.push_back(b.getDenseI64ArrayAttr(c->sizes));
      weights.push_back(b.getDenseI64ArrayAttr(c->weights));
      anySizes |= !c->sizes.empty();
      anyWeights |= !c->weights.empty();
    }
    ArrayAttr sizesAttr = anySizes ? b.getArrayAttr(sizes) : ArrayAttr();
    ArrayAttr weightsAttr = anyWeights ? b.getArrayAttr(weights) : ArrayAttr();
    Type token = async ? dist::TokenType::get(b.getContext()) : Type();
    SmallVector<Type> all(types);
    if (async)
      all.push_back(token);
    return where(participating(*items.front(), first), all, {}, [&] {
      Operation *op;
      if (first.kind == plan::CommStep::Kind::Gather)
        op = dist::GatherBatchOp::create(
            b, loc, types, token, inputs, meshRef, axisNames(first.axes),
            b.getDenseI64ArrayAttr(dims), b.getDenseI64ArrayAttr(roots),
            sizesAttr, weightsAttr);
      else if (first.kind == plan::CommStep::Kind::Scatter)
        op = dist::ScatterBatchOp::create(
            b, loc, types, token, inputs, meshRef, axisNames(first.axes),
            b.getDenseI64ArrayAttr(dims), b.getDenseI64ArrayAttr(roots),
            sizesAttr, weightsAttr);
      else
        op = dist::BroadcastBatchOp::create(b, loc, types, token, inputs,
                                            meshRef, axisNames(first.axes),
                                            b.getDenseI64ArrayAttr(roots));
      return SmallVector<Value>(op->getResults());
    });
  }

  Value index(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  /// The executing rank's coordinate on mesh axis `axis`.
  Value coord(int axis) { return coords.at(axis); }

  /// AND over `axes` of (coord(a) == want[a]); null when `axes` is empty.
  Value coordsEqual(ArrayRef<int> axes, ArrayRef<int64_t> want) {
    Value cond;
    for (int a : axes) {
      Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       coord(a), index(want[a]));
      cond = cond ? arith::AndIOp::create(b, loc, cond, eq).getResult() : eq;
    }
    return cond;
  }

  /// A placeholder for ranks that take no part: never read.
  Value placeholder(RankedTensorType t) {
    SmallVector<Value> dyn;
    for (int64_t d : t.getShape())
      if (ShapedType::isDynamic(d))
        dyn.push_back(index(0));
    return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType(),
                                   dyn);
  }

  Value castTo(Value v, Type t) {
    if (v.getType() == t)
      return v;
    return tensor::CastOp::create(b, loc, t, v);
  }

  ArrayAttr axisNames(ArrayRef<int> axes) {
    SmallVector<StringRef> names;
    for (int a : axes)
      names.push_back(mesh().axisNames[a]);
    return b.getStrArrayAttr(names);
  }

  static DenseI64ArrayAttr arrayOrNull(OpBuilder &b, ArrayRef<int64_t> v) {
    return v.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(v);
  }

  /// The lr_adjust factor shared by every matrix Newton-Schulz runs on for
  /// the parameter, or nullopt when the blocks' shapes give different ones
  /// (each block's result is then scaled where it is computed). An owner's
  /// blocks have the same shapes as all of them: every owner holds the
  /// same block list, which is the whole list or repeats to make it.
  std::optional<double> uniformScale(const plan::ParamPlan &pp) {
    std::optional<double> common;
    for (auto [rows, cols] : plan::nsMatrices(pp)) {
      double scale = updateScale(step.getLrAdjust(), rows, cols);
      if (common && *common != scale)
        return std::nullopt;
      common = scale;
    }
    return common;
  }

  Value newtonSchulz(Value x) {
    return NewtonSchulzOp::create(
        b, loc, x, b.getI64IntegerAttr(step.getNsSteps()),
        b.getDenseF64ArrayAttr(step.getCoeffList()), step.getEpsAttr(),
        TypeAttr::get(step.getNsElementType()));
  }

  /// Newton-Schulz on the owner's matrix `x`: whole, or (a `split`
  /// annotation) block by block along the blocked dim, each block's result
  /// scaled by its own lr_adjust factor when the blocks' factors differ.
  Value orthogonaliseBlocks(const ParamState &s, Value x) {
    const plan::ParamPlan &pp = facts.params[s.index].plan;
    if (pp.localBlocks.size() <= 1)
      return newtonSchulz(x);
    bool scaleEach = !uniformScale(pp);
    auto type = cast<RankedTensorType>(x.getType());
    int64_t d = pp.blocks.dim;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    std::vector<std::pair<int64_t, int64_t>> shapes = plan::nsMatrices(pp);
    SmallVector<Value> results;
    int64_t at = 0;
    for (auto [j, size] : llvm::enumerate(pp.localBlocks)) {
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      offsets[d] = b.getIndexAttr(at);
      SmallVector<OpFoldResult> blockSizes = sizes;
      blockSizes[d] = b.getIndexAttr(size);
      Value block = tensor::ExtractSliceOp::create(b, loc, x, offsets,
                                                   blockSizes, strides);
      Value o = newtonSchulz(block);
      if (scaleEach)
        o = scaled(o, updateScale(step.getLrAdjust(), shapes[j].first,
                                  shapes[j].second));
      results.push_back(o);
      at += size;
    }
    return concat(d, results);
  }

  /// `pieces` put together along `dim`. One concat, not a chain of
  /// insert_slices into a destination: bufferization's in-place analysis
  /// walks such a chain for each of its links (a split into 256 blocks
  /// took minutes), while a concat's pieces are only read, and it writes a
  /// fresh buffer of its own.
  Value concat(int64_t dim, ArrayRef<Value> pieces) {
    return tensor::ConcatOp::create(b, loc, dim, pieces);
  }

  /// `x` times the constant `factor`, as one elementwise generic: one pass
  /// over `x`, and a kind of op muon-outline-elementwise turns into a
  /// kernel the JIT optimises (the factor, defined outside, is the kernel's
  /// argument, so every factor shares it). A fill of the factor and a
  /// linalg.mul were two passes in the step's unoptimised code. Below f32
  /// (bf16, f16) the product is formed in f32 and rounded once: a factor
  /// such as 1/3 rounded to bf16 would be 0.2% off.
  Value scaled(Value x, double factor) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
    auto elt = cast<FloatType>(type.getElementType());
    Type wide = elt.getWidth() < 32 ? Type(b.getF32Type()) : Type(elt);
    Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(wide, factor));
    Value dest = tensor::EmptyOp::create(b, loc, sizes, elt);
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> parallel(type.getRank(),
                                              utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{x}, ValueRange{dest},
               ArrayRef<AffineMap>{id, id}, parallel,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value v = args[0];
                 if (wide != elt)
                   v = arith::ExtFOp::create(nb, l, wide, v);
                 Value product = arith::MulFOp::create(nb, l, v, c);
                 if (wide != elt)
                   product = arith::TruncFOp::create(nb, l, elt, product);
                 linalg::YieldOp::create(nb, l, ValueRange{product});
               })
        .getResult(0);
  }

  /// A gradient reduction: an all-reduce, or a reduce-scatter into the
  /// parameter's storage piece (of the flattened gradient for flat storage).
  Value reduceStep(const ParamState &s, const plan::CommStep &c, Value g) {
    auto kind = dist::ReduceKindAttr::get(
        b.getContext(), static_cast<dist::ReduceKind>(c.reduce));
    if (c.dim < 0) {
      Value sum = dist::AllReduceOp::create(b, loc, g.getType(), Type(), g,
                                            meshRef, axisNames(c.axes), kind)
                      .getResult();
      return c.divisor == 1 ? sum
                            : scaled(sum, 1.0 / static_cast<double>(c.divisor));
    }
    if (c.split == Split::Kind::Flat) {
      auto full = cast<RankedTensorType>(g.getType());
      g = tensor::CollapseShapeOp::create(b, loc, g, allDims(full.getRank()));
      if (c.reshapeOnly) // a reduction over one rank changes nothing
        return castTo(g, localOf(s, c.to));
    }
    return dist::ReduceScatterOp::create(
               b, loc, localOf(s, c.to), Type(), g, meshRef, axisNames(c.axes),
               b.getI64IntegerAttr(c.dim), kind, arrayOrNull(b, c.sizes),
               arrayOrNull(b, c.weights))
        .getResult();
  }

  /// A gather (`Op` = dist::GatherOp) or scatter (dist::ScatterOp) step of
  /// `x`: its result, and its token when `token` is a type. A flat split
  /// moves the element range: a gather's result becomes the matrix at its
  /// caller, a scatter takes the range (taken()).
  template <typename Op>
  SmallVector<Value> rootedStep(const plan::CommStep &s, Value x,
                                RankedTensorType resultT, Type token) {
    if (s.reshapeOnly) // over one rank the range is the whole matrix
      return {castTo(x, resultT)};
    return SmallVector<Value>(
        Op::create(b, loc, resultT, token, x, meshRef, axisNames(s.axes),
                   b.getI64IntegerAttr(s.dim), b.getI64IntegerAttr(s.root),
                   arrayOrNull(b, s.sizes), arrayOrNull(b, s.weights))
            ->getResults());
  }

  static SmallVector<ReassociationIndices> allDims(int64_t rank) {
    ReassociationIndices all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    return {all};
  }
};

struct MuonExpandStepPass
    : public ::muon::optim::impl::MuonExpandStepBase<MuonExpandStepPass> {
  using MuonExpandStepBase::MuonExpandStepBase;

  void runOnOperation() override {
    if (nsStackBytes < 0) {
      // At the module's location, without the module printed after it.
      emitError(getOperation().getLoc())
          << "muon-expand-step: ns-stack-bytes = "
          << static_cast<int64_t>(nsStackBytes)
          << " must be 0 (no stacking) or a byte count (muon-to-llvm also "
             "takes -1: by target)";
      return signalPassFailure();
    }
    if (maxPrefetchBytes < 0) {
      emitError(getOperation().getLoc())
          << "muon-expand-step: max-prefetch-bytes = "
          << static_cast<int64_t>(maxPrefetchBytes)
          << " must be 0 (no bound) or a byte count";
      return signalPassFailure();
    }
    FailureOr<CostModelOptions> model = costModelOptions(
        getOperation().getLoc(), getArgument(), ranksPerNode, intraNodeGBps,
        intraNodeLatencyUs, interNodeGBps, interNodeLatencyUs, nsTflops);
    if (failed(model))
      return signalPassFailure();
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    SmallVector<StepOp> steps;
    getOperation().walk([&](StepOp s) { steps.push_back(s); });
    llvm::DenseMap<Operation *, int64_t> stepsInFunction;
    for (StepOp step : steps) {
      // Layouts first: a global-view step is told to import them, which
      // comes before assigning owners.
      FailureOr<StepFacts> facts = analyzeStep(step);
      if (succeeded(facts) && !step.getOwners()) {
        step.emitOpError("has no owners; run muon-assign-owners first");
        return signalPassFailure();
      }
      if (failed(facts) || failed(dist::checkEnumerableMesh(
                               step, facts->meshOp, "muon-expand-step")))
        return signalPassFailure();
      warnIfNsDiverges(step);
      // Steps are numbered per function, in program order, wherever in
      // the body they sit.
      recordRoles(step, stepsInFunction[step->getParentOfType<func::FuncOp>()
                                            .getOperation()]++);
      StepExpander(
          step, *facts, batchCollectives,
          boundedPrefetch(step, *facts, maxPrefetchBytes, nsStackBytes),
          nsStackBytes, *model)
          .run();
    }
    if (failed(muon::verifyPassOutput(getOperation(), getArgument())))
      signalPassFailure();
  }
};
} // namespace
