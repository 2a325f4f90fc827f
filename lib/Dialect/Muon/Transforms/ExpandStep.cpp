//===- ExpandStep.cpp - muon.step -> SPMD code on local tensors -----------===//
//
// Every rank runs the code this pass emits. Collectives sit only under
// conditions on mesh coordinates that are uniform over their communicator
// (the coordinates of other axes), so every member of a communicator issues
// the same sequence: the SPMD rule that dist-verify-spmd checks.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Dialect/Muon/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

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
  if (adjust == LrAdjust::MatchRmsAdamW)
    return 0.2 * std::sqrt(std::max(dm, dn));
  return std::sqrt(std::max(1.0, dm / dn));
}

namespace {
/// Emits the SPMD code of one muon.step.
class StepExpander {
public:
  StepExpander(StepOp step, const StepFacts &facts)
      : step(step), facts(facts), b(step), loc(step.getLoc()),
        meshRef(cast<dist::DistTensorType>(step.getParams()[0].getType()).getMesh()) {}

  void run() {
    // Coordinates first, so they dominate every use in the expanded code.
    for (int a = 0; a < mesh().numAxes(); ++a)
      coords[a] = dist::CoordOp::create(
          b, loc, meshRef, b.getStrArrayAttr({mesh().axisNames[a]}));
    ArrayRef<int64_t> owners = *step.getOwners();
    size_t n = facts.params.size();
    SmallVector<Value> newParams, newMomenta;
    for (size_t i = 0; i < n; ++i) {
      auto [p, m] = expandParam(i, owners[i]);
      newParams.push_back(p);
      newMomenta.push_back(m);
    }
    SmallVector<Value> results(newParams);
    results.append(newMomenta);
    step.replaceAllUsesWith(results);
    step.erase();
    for (auto &[axis, c] : coords)
      if (c.use_empty())
        c.getDefiningOp()->erase();
  }

private:
  StepOp step;
  const StepFacts &facts;
  OpBuilder b;
  Location loc;
  FlatSymbolRefAttr meshRef;
  std::map<int, Value> coords;

  const layout::Mesh &mesh() const { return facts.mesh; }

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

  /// `body()` on the ranks where `cond` holds (all when null), a placeholder
  /// of type `t` elsewhere.
  Value onlyWhere(Value cond, RankedTensorType t,
                  function_ref<Value()> body) {
    if (!cond)
      return castTo(body(), t);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{t}, cond,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc, castTo(body(), t));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, placeholder(t));
    }
    return ifOp.getResult(0);
  }

  std::pair<Value, Value> expandParam(size_t i, int64_t owner) {
    const ParamFacts &p = facts.params[i];
    const plan::ParamPlan &pp = p.plan;
    Value P = step.getParams()[i], G = step.getGrads()[i],
          M = step.getMomenta()[i];
    RankedTensorType localT = dist::localTensorType(p.type, step);
    auto gradType = cast<dist::DistTensorType>(G.getType());
    Value pl = dist::ToLocalOp::create(b, loc, localT, P);
    Value gl = dist::ToLocalOp::create(
        b, loc, dist::localTensorType(gradType, step), G);
    Value ml = dist::ToLocalOp::create(b, loc, localT, M);

    SmallVector<int> fixedAxes;
    for (int a = 0; a < mesh().numAxes(); ++a)
      if (pp.roles[a] == AxisRole::Whole || pp.roles[a] == AxisRole::Local)
        fixedAxes.push_back(a);

    Value newP, newM;
    if (fixedAxes.empty()) {
      std::tie(newP, newM) = body(i, owner, pl, gl, ml, localT);
    } else {
      // The parameter exists only in its group: everything runs there, and
      // the other ranks keep what they hold.
      Value cond = coordsEqual(fixedAxes, pp.fixed);
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{localT, localT}, cond,
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      auto [bp, bm] = body(i, owner, pl, gl, ml, localT);
      scf::YieldOp::create(b, loc, ValueRange{bp, bm});
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{pl, ml});
      newP = ifOp.getResult(0);
      newM = ifOp.getResult(1);
    }
    Value outP = dist::FromLocalOp::create(b, loc, p.type, newP);
    Value outM = dist::FromLocalOp::create(b, loc, M.getType(), newM);
    return {outP, outM};
  }

  /// Reduces a gradient that is partial where the parameter is replicated.
  Value reduceGradient(size_t i, Value g, RankedTensorType localT) {
    auto gt = cast<dist::DistTensorType>(step.getGrads()[i].getType());
    std::map<dist::ReduceKind, SmallVector<Attribute>> axesByKind;
    for (auto [a, pl] : llvm::enumerate(gt.getLayout().getPlacements()))
      if (pl.getKind() == dist::PlacementKind::Partial)
        axesByKind[pl.getReduce()].push_back(
            b.getStringAttr(mesh().axisNames[a]));
    for (auto &[kind, axes] : axesByKind)
      g = dist::AllReduceOp::create(
              b, loc, g.getType(), Type(), g, meshRef,
              b.getArrayAttr(axes),
              dist::ReduceKindAttr::get(b.getContext(), kind))
              .getResult();
    return castTo(g, localT);
  }

  std::pair<Value, Value> body(size_t i, int64_t owner, Value pl, Value gl,
                               Value ml, RankedTensorType localT) {
    const ParamFacts &p = facts.params[i];
    const plan::ParamPlan &pp = p.plan;
    std::vector<int64_t> oc = mesh().coords(owner);

    // The ranks of the parameter's group: types are computed over them.
    SmallVector<int64_t> group;
    for (int64_t r = 0; r < mesh().numRanks(); ++r)
      if (plan::inGroup(pp, mesh().coords(r)))
        group.push_back(r);
    size_t k = pp.chain.size();
    SmallVector<RankedTensorType> stage; // stage[j]: after j splits undone
    for (size_t j = 0; j <= k; ++j)
      stage.push_back(dist::localTensorType(
          p.shape, p.type.getElementType(),
          plan::layoutAfter(pp, p.layout, j), mesh(), group));

    Value g = reduceGradient(i, gl, localT);
    auto mu = MomentumUpdateOp::create(
        b, loc, ml, g, step.getMomentumAttr(),
        step.getMomentumForm() == MomentumForm::Sum ? b.getUnitAttr()
                                                    : UnitAttr(),
        step.getNesterov() ? b.getUnitAttr() : UnitAttr());

    // Ranks that hold data before chain step j: replicas and the axes
    // already gathered match the owner.
    auto holders = [&](size_t j) {
      return coordsEqual(plan::holderAxes(pp, j), oc);
    };

    Value x = castTo(mu.getUpdate(), stage[0]);
    for (size_t j = 0; j < k; ++j) {
      const Split &s = pp.chain[j];
      x = onlyWhere(holders(j), stage[j + 1],
                    [&]() { return gatherStep(p, s, x, oc, stage[j + 1]); });
    }

    Value o = onlyWhere(holders(k), stage[k], [&]() -> Value {
      return NewtonSchulzOp::create(
          b, loc, x, b.getI64IntegerAttr(step.getNsSteps()),
          b.getDenseF64ArrayAttr(step.getCoeffList()),
          step.getEpsAttr(), TypeAttr::get(step.getNsElementType()));
    });

    for (size_t j = k; j-- > 0;) {
      const Split &s = pp.chain[j];
      o = onlyWhere(holders(j), stage[j],
                    [&]() { return scatterStep(p, s, o, oc, stage[j]); });
    }

    if (!pp.replicateAxes.empty()) {
      SmallVector<StringRef> names;
      for (int a : pp.replicateAxes)
        names.push_back(mesh().axisNames[a]);
      int64_t root = layout::groupIndex(mesh().sizes, pp.replicateAxes, oc);
      o = dist::BroadcastOp::create(b, loc, o.getType(), Type(), o,
                                    meshRef, b.getStrArrayAttr(names),
                                    b.getI64IntegerAttr(root))
              .getResult();
    }
    o = castTo(o, localT);
    double scale = updateScale(step.getLrAdjust(), pp.m, pp.n);
    Value newP = ApplyUpdateOp::create(b, loc, pl, o, step.getLrAttr(),
                                       step.getWeightDecayAttr(),
                                       b.getF64FloatAttr(scale));
    return {newP, mu.getNewMomentum()};
  }

  /// Per-rank piece sizes of a flat split (element ranges of this member).
  DenseI64ArrayAttr flatSizes(const ParamFacts &p, const Split &s) {
    SmallVector<int64_t> sizes;
    const layout::Storage &st = p.layout.storage;
    for (int64_t c = 0; c < mesh().sizes[s.axis]; ++c)
      sizes.push_back(
          layout::flatMemberRange(st.group, mesh().sizes[s.axis], st.member, c)
              .size);
    return b.getDenseI64ArrayAttr(sizes);
  }

  DenseI64ArrayAttr weightsOf(const Split &s) {
    return s.weights.empty() ? DenseI64ArrayAttr()
                             : b.getDenseI64ArrayAttr(s.weights);
  }

  Value gatherStep(const ParamFacts &p, const Split &s, Value x,
                   ArrayRef<int64_t> oc, RankedTensorType resultT) {
    ArrayAttr axes = b.getStrArrayAttr({mesh().axisNames[s.axis]});
    IntegerAttr root = b.getI64IntegerAttr(oc[s.axis]);
    if (s.kind != Split::Kind::Flat)
      return dist::GatherOp::create(b, loc, resultT, Type(), x,
                                    meshRef, axes,
                                    b.getI64IntegerAttr(s.dim), root,
                                    DenseI64ArrayAttr(), weightsOf(s))
          .getResult();
    auto flatT = RankedTensorType::get({resultT.getNumElements()},
                                       resultT.getElementType());
    Value flat = dist::GatherOp::create(b, loc, flatT, Type(), x,
                                        meshRef, axes, b.getI64IntegerAttr(0),
                                        root, flatSizes(p, s),
                                        DenseI64ArrayAttr())
                     .getResult();
    return tensor::ExpandShapeOp::create(b, loc, resultT, flat,
                                         allDims(resultT.getRank()));
  }

  Value scatterStep(const ParamFacts &p, const Split &s, Value o,
                    ArrayRef<int64_t> oc, RankedTensorType resultT) {
    ArrayAttr axes = b.getStrArrayAttr({mesh().axisNames[s.axis]});
    IntegerAttr root = b.getI64IntegerAttr(oc[s.axis]);
    if (s.kind != Split::Kind::Flat)
      return dist::ScatterOp::create(b, loc, resultT, Type(), o,
                                     meshRef, axes,
                                     b.getI64IntegerAttr(s.dim), root,
                                     DenseI64ArrayAttr(), weightsOf(s))
          .getResult();
    auto full = cast<RankedTensorType>(o.getType());
    Value flat = tensor::CollapseShapeOp::create(b, loc, o,
                                                 allDims(full.getRank()));
    return dist::ScatterOp::create(b, loc, resultT, Type(), flat,
                                   meshRef, axes, b.getI64IntegerAttr(0),
                                   root, flatSizes(p, s), DenseI64ArrayAttr())
        .getResult();
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
  void runOnOperation() override {
    SmallVector<StepOp> steps;
    getOperation().walk([&](StepOp s) { steps.push_back(s); });
    for (StepOp step : steps) {
      if (!step.getOwners()) {
        step.emitOpError("has no owners; run muon-assign-owners first");
        return signalPassFailure();
      }
      FailureOr<StepFacts> facts = analyzeStep(step);
      if (failed(facts))
        return signalPassFailure();
      StepExpander(step, *facts).run();
    }
  }
};
} // namespace
