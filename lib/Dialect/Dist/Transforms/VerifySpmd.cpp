//===- VerifySpmd.cpp - Every rank issues the same collectives ------------===//
//
// The prototype this project replaces deadlocked because only the owner
// called a collective every rank must join. This pass rejects such code in
// two ways: a structural check (no collective under control flow that can
// differ between the members of its communicator) and a simulation of every
// rank that compares the collective sequences communicator by communicator.
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

namespace muon {
namespace dist {
#define GEN_PASS_DEF_DISTVERIFYSPMD
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace muon

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {

using MeshAxis = std::pair<std::string, std::string>; // (mesh, axis)

/// The mesh axes a value may differ over between ranks; `any` when it may
/// depend on runtime data (then it may differ everywhere).
struct Variance {
  bool any = false;
  std::set<MeshAxis> axes;

  void join(const Variance &o) {
    any |= o.any;
    axes.insert(o.axes.begin(), o.axes.end());
  }
};

std::set<MeshAxis> axesOf(FlatSymbolRefAttr mesh, ArrayAttr axes) {
  std::set<MeshAxis> s;
  for (Attribute a : axes)
    s.insert({mesh.getValue().str(), cast<StringAttr>(a).getValue().str()});
  return s;
}

std::string axisList(ArrayAttr axes) {
  std::string s;
  for (Attribute a : axes)
    s += (s.empty() ? "" : ", ") + cast<StringAttr>(a).getValue().str();
  return "[" + s + "]";
}

bool containsCollective(Operation *op) {
  return op
      ->walk([](CollectiveOpInterface) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

//===----------------------------------------------------------------------===//
// 1. Control flow around collectives
//===----------------------------------------------------------------------===//

class VarianceAnalysis {
public:
  VarianceAnalysis(FunctionOpInterface func, SymbolTableCollection &tables) {
    func->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto rankOp = dyn_cast<RankOp>(op)) {
        Variance v;
        if (MeshOp mesh = lookupMesh(op, rankOp.getMeshAttr(), &tables))
          v.axes = axesOf(rankOp.getMeshAttr(), mesh.getAxisNames());
        else
          v.any = true;
        set(rankOp.getResult(), v);
      } else if (auto coord = dyn_cast<CoordOp>(op)) {
        set(coord.getResult(),
            Variance{false, axesOf(coord.getMeshAttr(), coord.getAxes())});
      } else if (op->hasTrait<OpTrait::ConstantLike>()) {
        for (Value r : op->getResults())
          set(r, Variance());
      } else if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        set(forOp.getInductionVar(), bounds(forOp));
      } else if (op->getNumRegions() == 0 && isMemoryEffectFree(op)) {
        Variance v;
        for (Value operand : op->getOperands())
          v.join(get(operand));
        for (Value r : op->getResults())
          set(r, v);
      }
    });
  }

  Variance get(Value v) const {
    auto it = values.find(v);
    return it == values.end() ? Variance{true, {}} : it->second;
  }

  Variance bounds(scf::ForOp forOp) const {
    Variance v = get(forOp.getLowerBound());
    v.join(get(forOp.getUpperBound()));
    v.join(get(forOp.getStep()));
    return v;
  }

private:
  void set(Value v, Variance var) { values[v] = std::move(var); }
  DenseMap<Value, Variance> values;
};

LogicalResult checkControlFlow(FunctionOpInterface func,
                               SymbolTableCollection &tables) {
  VarianceAnalysis analysis(func, tables);
  LogicalResult result = success();
  func->walk([&](CollectiveOpInterface coll) {
    Operation *op = coll.getOperation();
    std::set<MeshAxis> comm = axesOf(coll.getMeshAttr(), coll.getAxes());
    for (Operation *p = op->getParentOp(); p && p != func.getOperation();
         p = p->getParentOp()) {
      Variance v;
      std::string what;
      if (auto ifOp = dyn_cast<scf::IfOp>(p)) {
        v = analysis.get(ifOp.getCondition());
        what = "the scf.if condition";
      } else if (auto forOp = dyn_cast<scf::ForOp>(p)) {
        v = analysis.bounds(forOp);
        what = "the scf.for trip count";
      } else if (isa<scf::ExecuteRegionOp>(p)) {
        continue;
      } else {
        v.any = true;
        what = "'" + p->getName().getStringRef().str() + "' control flow";
      }
      std::string why;
      if (v.any)
        why = what + " may depend on runtime data, which can differ between "
                     "ranks";
      for (const MeshAxis &a : v.axes)
        if (comm.count(a))
          why = what + " depends on the coordinate on mesh axis '" +
                a.second + "', one of the communicator's own axes";
      if (why.empty())
        continue;
      InFlightDiagnostic diag =
          op->emitOpError("breaks the SPMD rule: the ranks of its "
                          "communicator (mesh ")
          << coll.getMeshAttr() << " axes " << axisList(coll.getAxes())
          << ") may not all reach it: " << why
          << "; every member must issue every collective (hoist it out and "
             "let non-owners pass a placeholder)";
      diag.attachNote(p->getLoc()) << "the control flow is here";
      result = failure();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result;
}

//===----------------------------------------------------------------------===//
// 2. Simulate every rank; compare sequences per communicator
//===----------------------------------------------------------------------===//

struct Event {
  Operation *op;
  std::string comm; // mesh + the set of axes
  std::string desc; // everything that must agree between members
};

/// Runs the rank-dependent skeleton of a function for one rank: folds rank
/// queries and the arithmetic on them, takes the branches and loop trip
/// counts they decide, and records the collectives in program order.
class RankSimulator {
public:
  RankSimulator(int64_t rank, SymbolTableCollection &tables)
      : rank(rank), tables(tables) {}

  LogicalResult run(Block &block) {
    for (Operation &op : block)
      if (failed(visit(&op)))
        return failure();
    return success();
  }

  std::vector<Event> events;

private:
  int64_t rank;
  SymbolTableCollection &tables;
  DenseMap<Value, Attribute> env;

  Attribute lookup(Value v) {
    if (Attribute a = env.lookup(v))
      return a;
    Attribute a;
    if (matchPattern(v, m_Constant(&a)))
      return a;
    return {};
  }

  std::optional<int64_t> intOf(Value v) {
    if (auto a = dyn_cast_or_null<IntegerAttr>(lookup(v)))
      return a.getValue().getSExtValue();
    return std::nullopt;
  }

  LogicalResult undecidable(Operation *op, StringRef what) {
    return op->emitOpError("dist-verify-spmd: cannot decide ")
           << what << " on rank " << rank
           << ", and it contains collectives";
  }

  LogicalResult visit(Operation *op) {
    if (auto coll = dyn_cast<CollectiveOpInterface>(op)) {
      record(coll);
      return success();
    }
    if (isa<RankOp, CoordOp>(op)) {
      auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
      MeshOp mesh = lookupMesh(op, meshRef, &tables);
      env[op->getResult(0)] = IntegerAttr::get(
          IndexType::get(op->getContext()), rankQueryValue(op, mesh, rank));
      return success();
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      std::optional<int64_t> cond = intOf(ifOp.getCondition());
      if (!cond)
        return containsCollective(op) ? undecidable(op, "this branch")
                                      : success();
      Region &region = *cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
      if (region.empty())
        return success();
      if (failed(run(region.front())))
        return failure();
      auto yield = cast<scf::YieldOp>(region.front().getTerminator());
      for (auto [res, v] : llvm::zip(ifOp.getResults(), yield.getOperands()))
        if (Attribute a = lookup(v))
          env[res] = a;
      return success();
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      if (!containsCollective(op))
        return success();
      std::optional<int64_t> lb = intOf(forOp.getLowerBound()),
                             ub = intOf(forOp.getUpperBound()),
                             st = intOf(forOp.getStep());
      if (!lb || !ub || !st || *st <= 0)
        return undecidable(op, "this loop's trip count");
      // In 128 bits: ub - lb and i + step can leave int64 (a trip count
      // that overflows must not slip past the cap).
      __int128 span = static_cast<__int128>(*ub) - *lb;
      if (span > 0 && span / *st > kMaxTrips)
        return op->emitOpError("dist-verify-spmd: more than ")
               << kMaxTrips << " iterations to simulate";
      for (__int128 i = *lb; i < *ub; i += *st) {
        env[forOp.getInductionVar()] = IntegerAttr::get(
            forOp.getInductionVar().getType(), static_cast<int64_t>(i));
        for (BlockArgument arg : forOp.getRegionIterArgs())
          env.erase(arg);
        if (failed(run(*forOp.getBody())))
          return failure();
      }
      return success();
    }
    if (op->getNumRegions() != 0) {
      if (!containsCollective(op))
        return success();
      if (auto exec = dyn_cast<scf::ExecuteRegionOp>(op))
        return run(exec.getRegion().front());
      return undecidable(op, "the control flow of '" +
                                 op->getName().getStringRef().str() + "'");
    }
    fold(op);
    return success();
  }

  /// Constant-folds `op` when every operand is known.
  void fold(Operation *op) {
    if (op->getNumOperands() == 0 || op->getNumResults() == 0)
      return;
    SmallVector<Attribute> operands;
    for (Value v : op->getOperands()) {
      Attribute a = lookup(v);
      if (!a)
        return;
      operands.push_back(a);
    }
    SmallVector<OpFoldResult> results;
    if (failed(op->fold(operands, results)) ||
        results.size() != op->getNumResults())
      return;
    for (auto [res, folded] : llvm::zip(op->getResults(), results)) {
      if (auto a = dyn_cast<Attribute>(folded))
        env[res] = a;
      else if (Attribute a = lookup(cast<Value>(folded)))
        env[res] = a;
    }
  }

  void record(CollectiveOpInterface coll) {
    Operation *op = coll.getOperation();
    std::vector<std::string> sorted;
    for (Attribute a : coll.getAxes())
      sorted.push_back(cast<StringAttr>(a).getValue().str());
    std::sort(sorted.begin(), sorted.end());
    std::string comm = "@" + coll.getMeshAttr().getValue().str() + " [";
    for (auto [i, a] : llvm::enumerate(sorted))
      comm += (i ? ", " : "") + a;
    comm += "]";

    std::string desc;
    llvm::raw_string_ostream os(desc);
    os << op->getName() << " axes " << axisList(coll.getAxes());
    for (NamedAttribute attr : op->getAttrDictionary())
      if (attr.getName() != "mesh" && attr.getName() != "axes")
        os << " " << attr.getName().getValue() << " = " << attr.getValue();
    os << " : ";
    llvm::interleaveComma(op->getOperandTypes(), os);
    os << " -> ";
    llvm::interleaveComma(op->getResultTypes(), os);
    events.push_back({op, comm, desc});
  }

  static constexpr int64_t kMaxTrips = 1 << 20;
};

struct CommKey {
  std::string comm;
  std::vector<int64_t> others; // coordinates on the axes outside the comm
  bool operator<(const CommKey &o) const {
    return std::tie(comm, others) < std::tie(o.comm, o.others);
  }
};

LogicalResult checkSequences(FunctionOpInterface func,
                             SymbolTableCollection &tables, bool print) {
  // The meshes the function's collectives run on; all ranks of the world
  // must be members of each, so they must have one size.
  MeshOp mesh;
  LogicalResult sizes = success();
  func->walk([&](CollectiveOpInterface coll) {
    MeshOp m = lookupMesh(coll, coll.getMeshAttr(), &tables);
    if (!m)
      return WalkResult::advance();
    if (mesh && m.getNumRanks() != mesh.getNumRanks()) {
      coll->emitOpError("dist-verify-spmd: one function uses meshes of ")
          << mesh.getNumRanks() << " and " << m.getNumRanks()
          << " ranks; cannot tell which ranks run it";
      sizes = failure();
      return WalkResult::interrupt();
    }
    mesh = m;
    return WalkResult::advance();
  });
  if (failed(sizes))
    return failure();
  if (!mesh || func.isExternal())
    return success();

  int64_t numRanks = mesh.getNumRanks();
  std::vector<std::vector<Event>> perRank;
  for (int64_t r = 0; r < numRanks; ++r) {
    RankSimulator sim(r, tables);
    if (failed(sim.run(func.getFunctionBody().front())))
      return failure();
    perRank.push_back(std::move(sim.events));
  }

  // Group every rank's events by communicator instance.
  std::map<CommKey, std::map<int64_t, std::vector<const Event *>>> byComm;
  std::map<std::string, Operation *> someOp;
  for (int64_t r = 0; r < numRanks; ++r) {
    for (const Event &e : perRank[r]) {
      auto coll = cast<CollectiveOpInterface>(e.op);
      MeshOp m = lookupMesh(e.op, coll.getMeshAttr(), &tables);
      layout::Mesh lm = toLayoutMesh(m);
      std::vector<int64_t> c = lm.coords(r);
      std::set<MeshAxis> comm = axesOf(coll.getMeshAttr(), coll.getAxes());
      CommKey key{e.comm, {}};
      for (int a = 0; a < lm.numAxes(); ++a)
        if (!comm.count({coll.getMeshAttr().getValue().str(),
                         lm.axisNames[a]}))
          key.others.push_back(c[a]);
      byComm[key][r].push_back(&e);
      someOp.emplace(e.comm, e.op);
    }
  }

  llvm::raw_ostream &os = llvm::outs();
  for (auto &[key, members] : byComm) {
    // Every rank whose outside coordinates match is a member, events or not.
    auto anyColl = cast<CollectiveOpInterface>(someOp[key.comm]);
    MeshOp m = lookupMesh(anyColl, anyColl.getMeshAttr(), &tables);
    layout::Mesh lm = toLayoutMesh(m);
    std::set<MeshAxis> comm =
        axesOf(anyColl.getMeshAttr(), anyColl.getAxes());
    std::vector<int64_t> ranks;
    for (int64_t r = 0; r < numRanks; ++r) {
      std::vector<int64_t> c = lm.coords(r), others;
      for (int a = 0; a < lm.numAxes(); ++a)
        if (!comm.count({anyColl.getMeshAttr().getValue().str(),
                         lm.axisNames[a]}))
          others.push_back(c[a]);
      if (others == key.others)
        ranks.push_back(r);
    }
    int64_t first = ranks.front();
    const std::vector<const Event *> &ref = members[first];
    for (int64_t r : ranks) {
      const std::vector<const Event *> &seq = members[r];
      size_t i = 0;
      while (i < ref.size() && i < seq.size() && ref[i]->desc == seq[i]->desc)
        ++i;
      if (i == ref.size() && i == seq.size())
        continue;
      std::string ranksStr;
      for (int64_t x : ranks)
        ranksStr += (ranksStr.empty() ? "" : ", ") + std::to_string(x);
      auto describe = [&](const std::vector<const Event *> &s, int64_t who) {
        return i < s.size() ? "`" + s[i]->desc + "` on rank " +
                                  std::to_string(who)
                            : "nothing on rank " + std::to_string(who);
      };
      const Event *at = i < seq.size() ? seq[i] : ref[i];
      InFlightDiagnostic diag =
          at->op->emitOpError("breaks the SPMD rule: collective sequences "
                              "diverge on the communicator of ranks {")
          << ranksStr << "}: collective #" << i << " is "
          << describe(ref, first) << " but " << describe(seq, r);
      return failure();
    }
    if (print) {
      os << "communicator " << key.comm << " ranks {";
      llvm::interleaveComma(ranks, os);
      os << "}: " << ref.size() << " collectives\n";
      for (const Event *e : ref)
        os << "  " << e->desc << "\n";
    }
  }
  return success();
}

struct DistVerifySpmdPass
    : public ::muon::dist::impl::DistVerifySpmdBase<DistVerifySpmdPass> {
  using DistVerifySpmdBase::DistVerifySpmdBase;

  void runOnOperation() override {
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    SymbolTableCollection tables;
    bool ok = true;
    getOperation().walk([&](FunctionOpInterface func) {
      if (func.isExternal())
        return;
      if (failed(checkControlFlow(func, tables)) ||
          failed(checkSequences(func, tables, printSequences)))
        ok = false;
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
