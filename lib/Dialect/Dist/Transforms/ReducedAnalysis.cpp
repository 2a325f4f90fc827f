//===- ReducedAnalysis.cpp - Which local values are reduced, which vary ---===//

#include "muon/Dialect/Dist/Transforms/ReducedAnalysis.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
  root->walk<WalkOrder::PreOrder>([&](Operation *op) { visit(op); });
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
  std::optional<ReducedState> out;
  for (Value v : op->getOperands()) {
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
  auto setAll = [&](const std::optional<ReducedState> &s) {
    if (!s)
      return;
    for (Value r : op->getResults())
      if (isa<RankedTensorType>(r.getType()))
        states[r] = *s;
  };
  if (auto toLocal = dyn_cast<ToLocalOp>(op)) {
    setAll(fromType(toLocal.getInput().getType(), op));
    return;
  }
  if (isa<FromLocalOp>(op))
    return; // a global value again: its type says what it is
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
