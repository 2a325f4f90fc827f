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
#include "muon/Dialect/Muon/Transforms/Passes.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
    auto localOf = [&](const layout::Layout &l) {
      return dist::localTensorType(p.shape, p.type.getElementType(), l,
                                   mesh(), group);
    };

    // The collective plan of the parameter, emitted step by step.
    std::vector<plan::CommStep> steps =
        plan::planSteps(pp, p.layout, p.gradLayout, mesh(), owner);
    size_t next = 0;
    Value g = gl;
    for (; next < steps.size() &&
           steps[next].kind == plan::CommStep::Kind::ReduceGrad;
         ++next)
      g = dist::AllReduceOp::create(
              b, loc, g.getType(), Type(), g, meshRef,
              axisNames(steps[next].axes),
              dist::ReduceKindAttr::get(
                  b.getContext(),
                  static_cast<dist::ReduceKind>(steps[next].reduce)))
              .getResult();
    g = castTo(g, localT);
    auto mu = MomentumUpdateOp::create(
        b, loc, ml, g, step.getMomentumAttr(),
        step.getMomentumForm() == MomentumForm::Sum ? b.getUnitAttr()
                                                    : UnitAttr(),
        step.getNesterov() ? b.getUnitAttr() : UnitAttr());

    Value x = castTo(mu.getUpdate(), localOf(p.layout));
    for (; next < steps.size(); ++next) {
      const plan::CommStep &s = steps[next];
      RankedTensorType resultT = localOf(s.to);
      // Ranks that hold data for the step: replicas and the axes already
      // gathered match the owner.
      Value holders = coordsEqual(s.holderAxes, oc);
      switch (s.kind) {
      case plan::CommStep::Kind::ReduceGrad:
        llvm_unreachable("gradient reductions come first");
      case plan::CommStep::Kind::Gather:
        x = onlyWhere(holders, resultT,
                      [&]() { return gatherStep(s, x, resultT); });
        break;
      case plan::CommStep::Kind::NewtonSchulz:
        x = onlyWhere(holders, resultT, [&]() -> Value {
          return NewtonSchulzOp::create(
              b, loc, x, b.getI64IntegerAttr(step.getNsSteps()),
              b.getDenseF64ArrayAttr(step.getCoeffList()), step.getEpsAttr(),
              TypeAttr::get(step.getNsElementType()));
        });
        break;
      case plan::CommStep::Kind::Scatter:
        x = onlyWhere(holders, resultT,
                      [&]() { return scatterStep(s, x, resultT); });
        break;
      case plan::CommStep::Kind::Broadcast:
        x = dist::BroadcastOp::create(b, loc, x.getType(), Type(), x, meshRef,
                                      axisNames(s.axes),
                                      b.getI64IntegerAttr(s.root))
                .getResult();
        break;
      }
    }
    Value o = castTo(x, localT);
    double scale = updateScale(step.getLrAdjust(), pp.m, pp.n);
    Value newP = ApplyUpdateOp::create(b, loc, pl, o, step.getLrAttr(),
                                       step.getWeightDecayAttr(),
                                       b.getF64FloatAttr(scale));
    return {newP, mu.getNewMomentum()};
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

  Value gatherStep(const plan::CommStep &s, Value x,
                   RankedTensorType resultT) {
    IntegerAttr root = b.getI64IntegerAttr(s.root);
    if (s.split != Split::Kind::Flat)
      return dist::GatherOp::create(b, loc, resultT, Type(), x, meshRef,
                                    axisNames(s.axes),
                                    b.getI64IntegerAttr(s.dim), root,
                                    DenseI64ArrayAttr(),
                                    arrayOrNull(b, s.weights))
          .getResult();
    auto flatT = RankedTensorType::get({resultT.getNumElements()},
                                       resultT.getElementType());
    Value flat = dist::GatherOp::create(b, loc, flatT, Type(), x, meshRef,
                                        axisNames(s.axes),
                                        b.getI64IntegerAttr(0), root,
                                        arrayOrNull(b, s.sizes),
                                        DenseI64ArrayAttr())
                     .getResult();
    return tensor::ExpandShapeOp::create(b, loc, resultT, flat,
                                         allDims(resultT.getRank()));
  }

  Value scatterStep(const plan::CommStep &s, Value o,
                    RankedTensorType resultT) {
    IntegerAttr root = b.getI64IntegerAttr(s.root);
    if (s.split != Split::Kind::Flat)
      return dist::ScatterOp::create(b, loc, resultT, Type(), o, meshRef,
                                     axisNames(s.axes),
                                     b.getI64IntegerAttr(s.dim), root,
                                     DenseI64ArrayAttr(),
                                     arrayOrNull(b, s.weights))
          .getResult();
    auto full = cast<RankedTensorType>(o.getType());
    Value flat = tensor::CollapseShapeOp::create(b, loc, o,
                                                 allDims(full.getRank()));
    return dist::ScatterOp::create(b, loc, resultT, Type(), flat, meshRef,
                                   axisNames(s.axes), b.getI64IntegerAttr(0),
                                   root, arrayOrNull(b, s.sizes),
                                   DenseI64ArrayAttr())
        .getResult();
  }

  static SmallVector<ReassociationIndices> allDims(int64_t rank) {
    ReassociationIndices all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    return {all};
  }
};

/// Records on the enclosing function which of its arguments and results are
/// which step operand / result (the entry contract a host reads:
/// docs/muon-dialect.md, "Argument roles"). Must run before the step is
/// expanded, while its operands and results are still visible.
void recordRoles(StepOp step, int64_t stepIndex) {
  auto fn = step->getParentOfType<func::FuncOp>();
  if (!fn)
    return;
  MLIRContext *ctx = step.getContext();
  Builder b(ctx);
  int64_t n = step.getNumParams();
  auto role = [&](StringRef what, int64_t param) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("role", b.getStringAttr(what)),
         b.getNamedAttr("param", b.getI64IntegerAttr(param)),
         b.getNamedAttr("name", step.getParamInfoOf(param).getName()),
         b.getNamedAttr("step", b.getI64IntegerAttr(stepIndex))});
  };
  auto extend = [&](StringRef attrName, size_t count,
                    function_ref<void(size_t, SmallVector<Attribute> &)> add) {
    SmallVector<Attribute> all;
    auto old = fn->getAttrOfType<ArrayAttr>(attrName);
    for (size_t i = 0; i < count; ++i) {
      SmallVector<Attribute> roles;
      if (old && i < old.size())
        llvm::append_range(roles, cast<ArrayAttr>(old[i]));
      add(i, roles);
      all.push_back(b.getArrayAttr(roles));
    }
    fn->setAttr(attrName, b.getArrayAttr(all));
  };
  extend("muon_arg_roles", fn.getNumArguments(),
         [&](size_t a, SmallVector<Attribute> &roles) {
           Value arg = fn.getArgument(a);
           for (int64_t i = 0; i < n; ++i) {
             if (step.getParams()[i] == arg)
               roles.push_back(role("param", i));
             if (step.getGrads()[i] == arg)
               roles.push_back(role("grad", i));
             if (step.getMomenta()[i] == arg)
               roles.push_back(role("momentum", i));
           }
         });
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return;
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (!ret)
    return;
  extend("muon_result_roles", ret.getNumOperands(),
         [&](size_t r, SmallVector<Attribute> &roles) {
           auto res = dyn_cast<OpResult>(ret.getOperand(r));
           if (!res || res.getOwner() != step.getOperation())
             return;
           int64_t k = res.getResultNumber();
           roles.push_back(role(k < n ? "param" : "momentum", k % n));
         });
}

struct MuonExpandStepPass
    : public ::muon::optim::impl::MuonExpandStepBase<MuonExpandStepPass> {
  void runOnOperation() override {
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    SmallVector<StepOp> steps;
    getOperation().walk([&](StepOp s) { steps.push_back(s); });
    llvm::DenseMap<Operation *, int64_t> stepsInFunction;
    for (StepOp step : steps) {
      if (!step.getOwners()) {
        step.emitOpError("has no owners; run muon-assign-owners first");
        return signalPassFailure();
      }
      FailureOr<StepFacts> facts = analyzeStep(step);
      if (failed(facts) || failed(dist::checkEnumerableMesh(
                               step, facts->meshOp, "muon-expand-step")))
        return signalPassFailure();
      // Steps are numbered per function, in program order, wherever in
      // the body they sit.
      recordRoles(step, stepsInFunction[step->getParentOfType<func::FuncOp>()
                                            .getOperation()]++);
      StepExpander(step, *facts).run();
    }
    if (failed(muon::verifyPassOutput(getOperation(), getArgument())))
      signalPassFailure();
  }
};
} // namespace
