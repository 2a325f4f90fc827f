//===- ReducedAnalysis.cpp - Which local values are reduced, which vary ---===//

#include "muon/Dialect/Dist/Transforms/ReducedAnalysis.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {
/// The declared layout of `type` per axis: which axes it keeps the same on
/// every rank (replicate or reduced, no storage split) and which of those
/// are reduced. Null when the type does not convert (it did not verify).
struct Declared {
  llvm::SmallBitVector same, reduced;
};

std::optional<Declared> declaredOf(DistTensorType type, MeshOp mesh,
                                   Operation *at,
                                   SymbolTableCollection &tables) {
  FailureOr<layout::Layout> l = toLayout(
      type.getLayout(), mesh, at, [&] { return at->emitError(); }, &tables);
  if (failed(l))
    return std::nullopt;
  int n = static_cast<int>(l->placements.size());
  Declared d{llvm::SmallBitVector(n), llvm::SmallBitVector(n)};
  for (int a = 0; a < n; ++a) {
    d.same[a] = l->placements[a].isReplicated();
    d.reduced[a] = l->placements[a].kind == layout::PlacementKind::Reduced;
  }
  for (int a : l->storage.axes()) {
    d.same[a] = false;
    d.reduced[a] = false;
  }
  return d;
}
} // namespace

ReducedAnalysis::ReducedAnalysis(Operation *root, ReducedRule rule)
    : rule(rule) {
  root->walk<WalkOrder::PreOrder>([&](FunctionOpInterface f) {
    analyse(f);
    return WalkResult::skip(); // its body is done; nested functions too
  });
}

void ReducedAnalysis::analyse(FunctionOpInterface f) {
  if (!analysed.insert(f.getOperation()).second)
    return;
  inProgress.insert(f.getOperation());
  // Post-order: the ops in a region come before the op that holds it, so
  // what a region yields is known when its results are given facts.
  f->walk<WalkOrder::PostOrder>([&](Operation *op) {
    if (op != f.getOperation())
      visit(op);
  });
  inProgress.erase(f.getOperation());
}

const ReducedState *ReducedAnalysis::lookup(Value v) const {
  auto it = states.find(v);
  return it == states.end() ? nullptr : &it->second;
}

std::optional<ReducedState> ReducedAnalysis::fromType(DistTensorType type,
                                                      Operation *at) {
  MeshOp mesh = lookupMesh(at, type.getMesh(), &tables);
  if (!mesh)
    return std::nullopt;
  std::optional<Declared> d = declaredOf(type, mesh, at, tables);
  if (!d)
    return std::nullopt;
  ReducedState s{mesh, d->reduced, d->reduced, d->same};
  s.varying.flip();
  return s;
}

/// An op the analysis knows nothing special about: its results vary where
/// any operand does; `reduced` follows the rule, minus the varying axes.
std::optional<ReducedState> ReducedAnalysis::combine(Operation *op) {
  SmallVector<Value> operands(op->getOperands());
  return combine(operands);
}

std::optional<ReducedState> ReducedAnalysis::combine(ArrayRef<Value> values) {
  std::optional<ReducedState> out;
  for (Value v : values) {
    const ReducedState *s = lookup(v);
    if (!s)
      continue;
    if (!out) {
      out = *s;
      continue;
    }
    if (out->mesh != s->mesh)
      return std::nullopt; // two meshes: nothing to say
    out->varying |= s->varying;
    out->reachedByReduced |= s->reachedByReduced;
    if (rule == ReducedRule::Uniform)
      out->reduced |= s->reduced;
    else
      out->reduced &= s->reduced;
  }
  if (out) {
    out->reduced.reset(out->varying);
    out->reachedByReduced.reset(out->varying);
  }
  return out;
}

void ReducedAnalysis::visit(Operation *op) {
  // Results of every type are followed: a rank query's index makes what it
  // indexes or decides differ between ranks too.
  auto setAll = [&](const std::optional<ReducedState> &s) {
    if (!s)
      return;
    for (Value r : op->getResults())
      states[r] = *s;
  };
  if (auto toLocal = dyn_cast<ToLocalOp>(op)) {
    setAll(fromType(toLocal.getInput().getType(), op));
    return;
  }
  if (isa<FromLocalOp>(op))
    return; // a global value again: its type says what it is
  if (isa<RankOp, CoordOp>(op)) {
    auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
    MeshOp mesh = lookupMesh(op, meshRef, &tables);
    if (!mesh)
      return;
    int n = static_cast<int>(mesh.getShape().size());
    ReducedState s{mesh, llvm::SmallBitVector(n), llvm::SmallBitVector(n),
                   llvm::SmallBitVector(n)};
    if (auto coord = dyn_cast<CoordOp>(op)) {
      for (int a : axisIndices(mesh, coord.getAxes()))
        if (a >= 0)
          s.varying.set(a);
    } else {
      s.varying.set();
    }
    setAll(s);
    return;
  }
  if (isa<scf::IfOp, scf::ForOp, scf::IndexSwitchOp, scf::ExecuteRegionOp>(
          op)) {
    // Result i: what any region yields at i (and a loop's initial value).
    // What decides which region runs is left out: a value held on one
    // coordinate only (a pipeline stage's, an expert's) is chosen by a
    // condition on that coordinate, and the layout cannot say so.
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      SmallVector<Value> sources;
      if (auto forOp = dyn_cast<scf::ForOp>(op))
        sources.push_back(forOp.getInitArgs()[i]);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (auto yield = dyn_cast<scf::YieldOp>(block.getTerminator());
              yield && i < yield.getNumOperands())
            sources.push_back(yield.getOperand(i));
      if (std::optional<ReducedState> s = combine(sources))
        states[op->getResult(i)] = *s;
    }
    return;
  }
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&tables));
    if (callee && !callee.isExternal() &&
        !inProgress.contains(callee.getOperation())) {
      // What the callee returns, from its own body: the facts of the
      // call's operands do not enter it (its arguments are not followed).
      analyse(callee);
      for (unsigned i = 0; i < op->getNumResults(); ++i) {
        SmallVector<Value> returned;
        for (Block &block : callee.getFunctionBody())
          if (block.mightHaveTerminator() &&
              block.getTerminator()->hasTrait<OpTrait::ReturnLike>() &&
              i < block.getTerminator()->getNumOperands())
            returned.push_back(block.getTerminator()->getOperand(i));
        if (std::optional<ReducedState> s = combine(returned))
          states[op->getResult(i)] = *s;
      }
      return;
    }
  }
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective) {
    setAll(combine(op));
    return;
  }
  MeshOp mesh = lookupMesh(op, collective.getMeshAttr(), &tables);
  if (!mesh)
    return;
  llvm::SmallBitVector axes(mesh.getShape().size());
  for (int a : axisIndices(mesh, collective.getAxes()))
    if (a >= 0)
      axes.set(a);
  // Item i of a batch maps operand i to result i; a single collective its
  // one tensor operand to its tensor result.
  unsigned items = 0;
  for (Value r : op->getResults())
    items += isa<RankedTensorType>(r.getType());
  for (unsigned i = 0; i < items && i < op->getNumOperands(); ++i) {
    const ReducedState *in = lookup(op->getOperand(i));
    if (!in || in->mesh != mesh)
      continue;
    ReducedState s = *in;
    if (isa<AllGatherOp, AllReduceOp, BroadcastOp, BroadcastBatchOp>(op)) {
      // Every rank of the group ends with the same data.
      s.varying.reset(axes);
      if (!isa<BroadcastOp, BroadcastBatchOp>(op)) {
        s.reduced.reset(axes);
        s.reachedByReduced.reset(axes);
      }
      if (auto gather = dyn_cast<AllGatherOp>(op);
          gather && gather.getReduced()) {
        s.reduced |= axes;
        s.reachedByReduced |= axes;
      }
    } else {
      // reduce_scatter, rooted gathers and scatters, all_to_all: the
      // members end with different data (or only the root's is defined).
      s.varying |= axes;
      s.reduced.reset(axes);
      s.reachedByReduced.reset(axes);
    }
    states[op->getResult(i)] = s;
  }
}

std::vector<LayoutFinding> ReducedAnalysis::check(FromLocalOp op) const {
  std::vector<LayoutFinding> findings;
  const ReducedState *s = lookup(op.getInput());
  if (!s)
    return findings;
  DistTensorType type = op.getResult().getType();
  MeshOp mesh = lookupMesh(op, type.getMesh(), &tables);
  if (mesh != s->mesh)
    return findings;
  std::optional<Declared> d = declaredOf(type, mesh, op, tables);
  if (!d)
    return findings;
  for (int a = 0; a < static_cast<int>(d->same.size()); ++a) {
    if (!d->same[a])
      continue;
    if (s->varying[a])
      findings.push_back({LayoutFinding::Kind::Varies, a});
    else if (s->reduced[a] && !d->reduced[a])
      findings.push_back({LayoutFinding::Kind::DropsReduction, a});
    else if (!s->reachedByReduced[a] && d->reduced[a])
      findings.push_back({LayoutFinding::Kind::NotReduced, a});
  }
  return findings;
}
