//===- ReducedAnalysis.cpp - Which local values are reduced, which vary ---===//

#include "muon/Dialect/Dist/Transforms/ReducedAnalysis.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
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
    run(f, states);
    return WalkResult::skip(); // its body is done; nested functions too
  });
}

void ReducedAnalysis::run(FunctionOpInterface f, Facts &into) {
  Facts *outer = cur;
  cur = &into;
  inProgress.insert(f.getOperation());
  // Post-order: the ops in a region come before the op that holds it, so
  // what a region yields is known when its results are given facts.
  f->walk<WalkOrder::PostOrder>([&](Operation *op) {
    if (op != f.getOperation())
      visit(op);
  });
  inProgress.erase(f.getOperation());
  cur = outer;
}

const ReducedState *ReducedAnalysis::find(Value v) const {
  auto it = cur->find(v);
  return it == cur->end() ? nullptr : &it->second;
}

/// A key for `callee` with `args`: the same facts give the same results.
static std::string contextKey(Operation *callee,
                              ArrayRef<std::optional<ReducedState>> args) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(callee));
  for (const std::optional<ReducedState> &a : args) {
    key += '|';
    if (!a)
      continue;
    key += std::to_string(
        reinterpret_cast<uintptr_t>(a->mesh.getAsOpaquePointer()));
    for (const llvm::SmallBitVector *bits :
         {&a->reduced, &a->reachedByReduced, &a->varying}) {
      key += ':';
      for (unsigned i = 0; i < bits->size(); ++i)
        key += (*bits)[i] ? '1' : '0';
    }
  }
  return key;
}

std::optional<SmallVector<std::optional<ReducedState>>>
ReducedAnalysis::callResults(FunctionOpInterface callee,
                             ArrayRef<std::optional<ReducedState>> args) {
  if (inProgress.contains(callee.getOperation()))
    return std::nullopt; // a recursion: the call is every other op
  std::string key = contextKey(callee.getOperation(), args);
  if (auto it = summaries.find(key); it != summaries.end())
    return it->second;
  Block &entry = callee.getFunctionBody().front();
  Facts local;
  for (auto [arg, facts] : llvm::zip(entry.getArguments(), args))
    if (facts)
      local[arg] = *facts;
  run(callee, local);
  Facts *outer = cur;
  cur = &local;
  SmallVector<std::optional<ReducedState>> results;
  for (unsigned i = 0; i < callee.getResultTypes().size(); ++i) {
    SmallVector<Value> returned;
    for (Block &block : callee.getFunctionBody())
      if (block.mightHaveTerminator() &&
          block.getTerminator()->hasTrait<OpTrait::ReturnLike>() &&
          i < block.getTerminator()->getNumOperands())
        returned.push_back(block.getTerminator()->getOperand(i));
    results.push_back(combine(returned));
  }
  cur = outer;
  return summaries[key] = results;
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

/// The facts of values an op combines: varying where any is; `reduced`
/// follows the rule, minus the varying axes.
std::optional<ReducedState> ReducedAnalysis::combine(ArrayRef<Value> values) {
  std::optional<ReducedState> out;
  for (Value v : values) {
    const ReducedState *s = find(v);
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

std::optional<ReducedState>
ReducedAnalysis::rankTableEntry(tensor::ExtractOp extract) {
  auto rank = extract.getIndices().size() == 1
                  ? extract.getIndices()[0].getDefiningOp<RankOp>()
                  : RankOp();
  DenseIntElementsAttr table;
  if (!rank || !matchPattern(extract.getTensor(), m_Constant(&table)))
    return std::nullopt;
  MeshOp mesh = lookupMesh(rank, rank.getMeshAttr(), &tables);
  if (!mesh || table.getNumElements() != mesh.getNumRanks())
    return std::nullopt;
  SmallVector<APInt> entries(table.getValues<APInt>());
  ArrayRef<int64_t> sizes = mesh.getShape();
  int n = static_cast<int>(sizes.size());
  ReducedState s{mesh, llvm::SmallBitVector(n), llvm::SmallBitVector(n),
                 llvm::SmallBitVector(n)};
  // Row-major ranks: the entry of rank r against that of the rank with
  // r's coordinate on axis a set to 0.
  int64_t stride = 1;
  for (int a = n - 1; a >= 0; --a) {
    for (int64_t r = 0; r < static_cast<int64_t>(entries.size()); ++r)
      if (entries[r] != entries[r - (r / stride) % sizes[a] * stride]) {
        s.varying.set(a);
        break;
      }
    stride *= sizes[a];
  }
  return s;
}

void ReducedAnalysis::visit(Operation *op) {
  auto setAll = [&](const std::optional<ReducedState> &s) {
    if (!s)
      return;
    for (Value r : op->getResults())
      (*cur)[r] = *s;
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
        (*cur)[op->getResult(i)] = *s;
    }
    return;
  }
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    // The callee's body, run with the facts of the call's operands (once per
    // callee and facts): what it returns is what the call gives.
    auto callee = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&tables));
    if (callee && !callee.isExternal() &&
        callee.getFunctionBody().front().getNumArguments() ==
            call.getArgOperands().size()) {
      SmallVector<std::optional<ReducedState>> args;
      for (Value v : call.getArgOperands()) {
        const ReducedState *facts = find(v);
        args.push_back(facts ? std::optional<ReducedState>(*facts)
                             : std::nullopt);
      }
      if (auto results = callResults(callee, args)) {
        for (auto [r, facts] : llvm::zip(op->getResults(), *results))
          if (facts)
            (*cur)[r] = *facts;
        return;
      }
    }
  }
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    // As for scf.if: the condition that chooses is left out.
    setAll(combine({select.getTrueValue(), select.getFalseValue()}));
    return;
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    // A constant table indexed by dist.rank (how dist-lower-redistribute
    // finds each rank's offsets) varies only over the axes along which its
    // entries differ.
    if (std::optional<ReducedState> s = rankTableEntry(extract)) {
      setAll(s);
      return;
    }
  }
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective) {
    // A tensor result takes the facts of every operand (a slice offset from
    // a rank query too); a scalar only those of scalar operands (a rank
    // query and arithmetic on it), not a tensor's shape or elements read
    // into it.
    SmallVector<Value> all(op->getOperands()), scalars;
    for (Value v : op->getOperands())
      if (!isa<TensorType>(v.getType()))
        scalars.push_back(v);
    std::optional<ReducedState> forTensors = combine(all),
                                forScalars = combine(scalars);
    for (Value r : op->getResults())
      if (const std::optional<ReducedState> &s =
              isa<TensorType>(r.getType()) ? forTensors : forScalars)
        (*cur)[r] = *s;
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
    (*cur)[op->getResult(i)] = s;
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
