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
#include "muon/Support/SymbolReferences.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <numeric>
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

  /// Whether `o` added anything.
  bool join(const Variance &o) {
    size_t before = axes.size();
    bool wasAny = any;
    any |= o.any;
    axes.insert(o.axes.begin(), o.axes.end());
    return any != wasAny || axes.size() != before;
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

/// Which functions issue collectives, directly or through the functions
/// they call, and on which mesh axes: a call is checked like the
/// collectives it reaches.
class CollectiveReach {
public:
  CollectiveReach(Operation *root, SymbolTableCollection &tables)
      : tables(tables) {
    root->walk([&](FunctionOpInterface f) {
      Info &info = infos[f.getOperation()];
      f->walk([&](Operation *op) {
        if (auto coll = dyn_cast<CollectiveOpInterface>(op)) {
          std::set<MeshAxis> a = axesOf(coll.getMeshAttr(), coll.getAxes());
          info.axes.insert(a.begin(), a.end());
          info.reaches = true;
        } else if (auto call = dyn_cast<CallOpInterface>(op)) {
          if (FunctionOpInterface g = callee(call))
            info.callees.push_back(g.getOperation());
        }
      });
    });
    // Up the call graph, from each function that gained something to its
    // callers, until nothing changes (calls may form cycles). A worklist:
    // sweeping every function until a sweep changes nothing takes as many
    // sweeps as the longest call chain.
    DenseMap<Operation *, SmallVector<Operation *>> callers;
    SmallVector<Operation *> todo;
    for (auto &[f, info] : infos) {
      for (Operation *g : info.callees)
        callers[g].push_back(f);
      if (info.reaches)
        todo.push_back(f);
    }
    while (!todo.empty()) {
      Operation *g = todo.pop_back_val();
      // Copied: the caller may be `g` itself (recursion).
      std::set<MeshAxis> axes = infos.find(g)->second.axes;
      for (Operation *f : callers.lookup(g)) {
        Info &info = infos.find(f)->second;
        size_t before = info.axes.size();
        info.axes.insert(axes.begin(), axes.end());
        if (!info.reaches || info.axes.size() != before) {
          info.reaches = true;
          todo.push_back(f);
        }
      }
    }
  }

  /// The function a call runs, when it has a body here.
  FunctionOpInterface callee(CallOpInterface call) const {
    auto f = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&tables));
    return f && !f.isExternal() ? f : FunctionOpInterface();
  }

  /// Whether a call leads to collectives.
  bool reaches(CallOpInterface call) const {
    FunctionOpInterface f = callee(call);
    return f && infos.lookup(f.getOperation()).reaches;
  }

  /// The mesh axes of the collectives a call leads to.
  std::set<MeshAxis> axesReached(CallOpInterface call) const {
    FunctionOpInterface f = callee(call);
    return f ? infos.lookup(f.getOperation()).axes : std::set<MeshAxis>();
  }

  /// Whether `op` or anything nested in it issues a collective, itself or
  /// through a call. Remembered per op: the simulation asks again on every
  /// iteration of a loop around `op`, and walking a large body each time
  /// would cost iterations x body size, which no budget counts.
  bool contains(Operation *op) const {
    auto [it, isNew] = containsCache.try_emplace(op, false);
    if (isNew)
      it->second = op->walk([&](Operation *inner) {
                       if (isa<CollectiveOpInterface>(inner))
                         return WalkResult::interrupt();
                       if (auto call = dyn_cast<CallOpInterface>(inner);
                           call && reaches(call))
                         return WalkResult::interrupt();
                       return WalkResult::advance();
                     }).wasInterrupted();
    return it->second;
  }

  /// Calls `fn` on `f` and on every function it calls, directly or not,
  /// once each.
  void forEachReached(FunctionOpInterface f,
                      function_ref<void(Operation *)> fn) const {
    DenseSet<Operation *> seen;
    SmallVector<Operation *> todo{f.getOperation()};
    while (!todo.empty()) {
      Operation *g = todo.pop_back_val();
      if (!seen.insert(g).second)
        continue;
      fn(g);
      auto it = infos.find(g);
      if (it != infos.end())
        todo.append(it->second.callees.begin(), it->second.callees.end());
    }
  }

  /// Calls `fn` on every collective of `f` and of the functions it reaches.
  void forEachCollective(FunctionOpInterface f,
                         function_ref<void(CollectiveOpInterface)> fn) const {
    forEachReached(f, [&](Operation *g) {
      g->walk([&](CollectiveOpInterface coll) { fn(coll); });
    });
  }

private:
  struct Info {
    bool reaches = false;
    std::set<MeshAxis> axes;
    std::vector<Operation *> callees;
  };
  SymbolTableCollection &tables;
  DenseMap<Operation *, Info> infos;
  mutable DenseMap<Operation *, bool> containsCache;
};

//===----------------------------------------------------------------------===//
// 1. Control flow around collectives
//===----------------------------------------------------------------------===//

class VarianceAnalysis {
public:
  /// `args`: what the entry block's arguments may vary over; without it
  /// (an entry point) they are runtime data.
  VarianceAnalysis(FunctionOpInterface func, SymbolTableCollection &tables,
                   const std::vector<Variance> *args = nullptr) {
    if (args && !func.isExternal())
      for (auto [arg, v] :
           llvm::zip(func.getFunctionBody().front().getArguments(), *args))
        set(arg, v);
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

/// What the arguments of each function may vary over. A private function
/// whose every use is a call runs only where the module calls it: its
/// arguments vary as the operands its calls pass (joined over the calls,
/// to a fixed point, since calls may form cycles). Any other function is an
/// entry point, whose arguments are runtime data.
class ArgumentVariance {
public:
  ArgumentVariance(Operation *root, SymbolTableCollection &tables,
                   const CollectiveReach &reach) {
    std::vector<FunctionOpInterface> order;
    root->walk([&](FunctionOpInterface f) {
      if (!f.isExternal())
        order.push_back(f);
    });
    if (llvm::none_of(order,
                      [](FunctionOpInterface f) { return f.isPrivate(); }))
      return; // every function is an entry point (a compiled step's case)
    // Every reference to a function, in one walk (asking per function
    // would rescan the module). An op whose references nobody can list
    // leaves every function an entry point.
    DenseMap<Operation *, bool> onlyCalled;
    if (failed(muon::walkSymbolReferences(root, [&](Operation *user,
                                                    SymbolRefAttr ref) {
          auto f = dyn_cast_or_null<FunctionOpInterface>(
              tables.lookupNearestSymbolFrom(user, ref));
          if (!f)
            return;
          auto call = dyn_cast<CallOpInterface>(user);
          bool asCallee =
              call && call.getCallableForCallee() == CallInterfaceCallable(ref);
          auto [it, first] = onlyCalled.try_emplace(f.getOperation(), asCallee);
          if (!first)
            it->second &= asCallee;
        })))
      return;
    for (FunctionOpInterface f : order)
      if (f.isPrivate() && onlyCalled.lookup(f.getOperation()))
        // Nothing flows in before the first call is seen.
        args[f.getOperation()].assign(
            f.getFunctionBody().front().getNumArguments(), Variance());
    std::vector<FunctionOpInterface> todo(order.rbegin(), order.rend());
    DenseSet<Operation *> queued;
    for (FunctionOpInterface f : order)
      queued.insert(f.getOperation());
    while (!todo.empty()) {
      FunctionOpInterface f = todo.back();
      todo.pop_back();
      queued.erase(f.getOperation());
      VarianceAnalysis analysis(f, tables, of(f));
      f->walk([&](CallOpInterface call) {
        FunctionOpInterface g = reach.callee(call);
        auto it = g ? args.find(g.getOperation()) : args.end();
        if (it == args.end())
          return;
        std::vector<Variance> &in = it->second;
        bool changed = false;
        if (call.getArgOperands().size() != in.size()) {
          // Not a call the callee's arguments can be read from.
          for (Variance &v : in)
            changed |= v.join(Variance{true, {}});
        } else {
          for (auto [v, operand] : llvm::zip(in, call.getArgOperands()))
            changed |= v.join(analysis.get(operand));
        }
        if (changed && queued.insert(g.getOperation()).second)
          todo.push_back(g);
      });
    }
  }

  /// The argument variances of `f`; null for an entry point.
  const std::vector<Variance> *of(FunctionOpInterface f) const {
    auto it = args.find(f.getOperation());
    return it == args.end() ? nullptr : &it->second;
  }

  /// Whether `f` runs only through calls in this module (so it is checked
  /// where it is called, not as an entry point).
  bool isCallee(FunctionOpInterface f) const { return of(f) != nullptr; }

private:
  DenseMap<Operation *, std::vector<Variance>> args;
};

LogicalResult checkControlFlow(FunctionOpInterface func,
                               SymbolTableCollection &tables,
                               const CollectiveReach &reach,
                               const ArgumentVariance &arguments) {
  VarianceAnalysis analysis(func, tables, arguments.of(func));
  LogicalResult result = success();
  func->walk([&](Operation *op) {
    auto coll = dyn_cast<CollectiveOpInterface>(op);
    auto call = dyn_cast<CallOpInterface>(op);
    if (!coll && !(call && reach.reaches(call)))
      return WalkResult::advance();
    std::set<MeshAxis> comm = coll ? axesOf(coll.getMeshAttr(), coll.getAxes())
                                   : reach.axesReached(call);
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
      InFlightDiagnostic diag = op->emitOpError("breaks the SPMD rule: ");
      if (coll)
        diag << "the ranks of its communicator (mesh " << coll.getMeshAttr()
             << " axes " << axisList(coll.getAxes()) << ")";
      else
        diag << "it calls @"
             << SymbolTable::getSymbolName(reach.callee(call)).getValue()
             << ", which issues collectives, and their members";
      diag << " may not all reach it: " << why
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

/// A communicator class: one mesh and a set of its axes. Its instances are
/// told apart by the coordinates on the other axes.
struct CommClass {
  std::string name;         // "@mesh [a, b]", axes sorted
  layout::Mesh mesh;
  std::vector<bool> inComm; // per mesh axis
};

/// The communicator classes of a function's collectives, and for each
/// collective what its members must agree on.
class CommClasses {
public:
  explicit CommClasses(SymbolTableCollection &tables) : tables(tables) {}

  /// The class of `coll` (added on first sight); -1 when its mesh is
  /// unknown (reported by the verifiers, never simulated).
  int classOf(CollectiveOpInterface coll) {
    auto it = classOfOp.find(coll.getOperation());
    if (it != classOfOp.end())
      return it->second;
    MeshOp m = lookupMesh(coll, coll.getMeshAttr(), &tables);
    if (!m)
      return classOfOp[coll.getOperation()] = -1;
    std::vector<std::string> sorted;
    for (Attribute a : coll.getAxes())
      sorted.push_back(cast<StringAttr>(a).getValue().str());
    std::sort(sorted.begin(), sorted.end());
    std::string name = "@" + coll.getMeshAttr().getValue().str() + " [";
    for (auto [i, a] : llvm::enumerate(sorted))
      name += (i ? ", " : "") + a;
    name += "]";
    int index = -1;
    for (auto [i, c] : llvm::enumerate(classes))
      if (c.name == name)
        index = static_cast<int>(i);
    if (index < 0) {
      CommClass c{name, toLayoutMesh(m), {}};
      for (const std::string &axis : c.mesh.axisNames)
        c.inComm.push_back(llvm::is_contained(sorted, axis));
      classes.push_back(std::move(c));
      index = static_cast<int>(classes.size()) - 1;
    }
    descs[coll.getOperation()] = describeCollective(coll);
    return classOfOp[coll.getOperation()] = index;
  }

  const CommClass &get(int c) const { return classes[c]; }
  size_t size() const { return classes.size(); }
  const std::string &desc(Operation *op) const { return descs.at(op); }

  /// The coordinates of `rank` on the axes outside class `c`: the instance
  /// of the communicator the rank belongs to.
  std::vector<int64_t> instanceOf(int c, int64_t rank) const {
    const CommClass &cc = classes[c];
    std::vector<int64_t> coords = cc.mesh.coords(rank), others;
    for (size_t a = 0; a < coords.size(); ++a)
      if (!cc.inComm[a])
        others.push_back(coords[a]);
    return others;
  }

  /// The members of an instance, in rank order (enumerates only the
  /// communicator's own axes).
  std::vector<int64_t> members(int c, const std::vector<int64_t> &others) const {
    const CommClass &cc = classes[c];
    std::vector<int> axes;
    std::vector<int64_t> coords(cc.mesh.numAxes(), 0);
    for (int a = 0, o = 0; a < cc.mesh.numAxes(); ++a) {
      if (cc.inComm[a])
        axes.push_back(a);
      else
        coords[a] = others[o++];
    }
    std::vector<int64_t> ranks;
    int64_t n = cc.mesh.groupSize(axes);
    for (int64_t i = 0; i < n; ++i) {
      // Row-major over the communicator's axes in mesh order.
      int64_t rest = i;
      for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
        coords[*it] = rest % cc.mesh.sizes[*it];
        rest /= cc.mesh.sizes[*it];
      }
      ranks.push_back(cc.mesh.rank(coords));
    }
    return ranks;
  }

private:
  static std::string describeCollective(CollectiveOpInterface coll) {
    Operation *op = coll.getOperation();
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
    return desc;
  }

  SymbolTableCollection &tables;
  std::vector<CommClass> classes;
  DenseMap<Operation *, int> classOfOp;
  DenseMap<Operation *, std::string> descs;
};

/// Runs the rank-dependent skeleton of a function for one rank: folds rank
/// queries and the arithmetic on them, takes the branches and loop trip
/// counts they decide, and records the collectives in program order, one
/// sequence per communicator class.
class RankSimulator {
public:
  /// Operations simulated over all ranks of one function before the pass
  /// gives up with a diagnostic (ranks x skeleton size; about a minute).
  static constexpr int64_t kMaxSimulatedOps = int64_t(1) << 28;

  RankSimulator(SymbolTableCollection &tables, CommClasses &classes,
                const CollectiveReach &reach, int64_t &budget)
      : tables(tables), classes(classes), reach(reach), budget(budget) {}

  LogicalResult simulate(int64_t r, FunctionOpInterface func) {
    rank = r;
    env.clear();
    sequences.assign(classes.size(), {});
    root = func;
    calling.clear();
    calling.insert(func.getOperation());
    return run(func.getFunctionBody().front());
  }

  /// Per communicator class, the collectives this rank issued.
  std::vector<std::vector<Operation *>> sequences;

private:
  int64_t rank = 0;
  SymbolTableCollection &tables;
  CommClasses &classes;
  const CollectiveReach &reach;
  int64_t &budget;
  DenseMap<Value, Attribute> env;
  /// The function simulated, and those being run through calls (a cycle
  /// cannot be decided).
  FunctionOpInterface root;
  DenseSet<Operation *> calling;

  LogicalResult run(Block &block) {
    // The simulation follows structured control flow only: which of the
    // blocks after the entry block (which runs once, as no branch may
    // target it) a rank reaches would need the branches decided.
    Region *region = block.getParent();
    if (region && !region->hasOneBlock()) {
      bool collectives = false;
      for (Block &later : llvm::drop_begin(region->getBlocks()))
        for (Operation &op : later)
          collectives |= reach.contains(&op);
      if (collectives)
        return region->getParentOp()->emitOpError(
                   "dist-verify-spmd: cannot decide which of the ")
               << region->getBlocks().size()
               << " blocks of this region rank " << rank
               << " runs, and it contains collectives (use structured "
                  "control flow: scf.if, scf.index_switch, scf.for)";
    }
    for (Operation &op : block)
      if (failed(visit(&op)))
        return failure();
    return success();
  }

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
    if (--budget < 0) {
      // Reported at the function simulated: the op that used up the budget
      // (often a loop's terminator, or one in a callee) is not the cause.
      return root->emitOpError("dist-verify-spmd: simulating every rank "
                               "needs more than ")
             << kMaxSimulatedOps
             << " operation visits (ranks x operations around collectives); "
                "verify the program on a smaller mesh of the same shape";
    }
    if (auto coll = dyn_cast<CollectiveOpInterface>(op)) {
      int c = classes.classOf(coll);
      if (c >= 0)
        sequences[c].push_back(op);
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
        return reach.contains(op) ? undecidable(op, "this branch") : success();
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
      if (!reach.contains(op))
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
    if (auto call = dyn_cast<CallOpInterface>(op); call && reach.reaches(call))
      return runCall(call);
    if (op->getNumRegions() != 0) {
      if (!reach.contains(op))
        return success();
      if (auto exec = dyn_cast<scf::ExecuteRegionOp>(op))
        return run(exec.getRegion().front());
      return undecidable(op, "the control flow of '" +
                                 op->getName().getStringRef().str() + "'");
    }
    fold(op);
    return success();
  }

  /// Runs the body of a function a call leads to collectives through, with
  /// what is known of the arguments; what it returns is known after.
  LogicalResult runCall(CallOpInterface call) {
    FunctionOpInterface f = reach.callee(call);
    if (calling.contains(f.getOperation()))
      return undecidable(call, "how deep the recursion through @" +
                                   SymbolTable::getSymbolName(f).str() +
                                   " goes");
    Block &body = f.getFunctionBody().front();
    if (body.getNumArguments() != call.getArgOperands().size())
      return undecidable(call, "the arguments of this call");
    for (auto [arg, v] : llvm::zip(body.getArguments(), call.getArgOperands()))
      if (Attribute a = lookup(v))
        env[arg] = a;
      else
        env.erase(arg);
    calling.insert(f.getOperation());
    LogicalResult ran = run(body);
    calling.erase(f.getOperation());
    if (failed(ran))
      return failure();
    Operation *ret = body.getTerminator();
    if (ret && ret->getNumOperands() == call->getNumResults())
      for (auto [res, v] : llvm::zip(call->getResults(), ret->getOperands()))
        if (Attribute a = lookup(v))
          env[res] = a;
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

  static constexpr int64_t kMaxTrips = 1 << 20;
};

/// One communicator instance: the sequence its first member issued, which
/// every later member must repeat.
struct Instance {
  int64_t first;
  std::vector<Operation *> sequence;
};

std::string rankList(const std::vector<int64_t> &ranks) {
  // Communicators can have thousands of members: name the first few.
  constexpr size_t kShown = 16;
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kShown)
    s += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return s;
}

/// Simulates rank after rank and compares each rank's sequence on every
/// communicator class with the instance's first member as it goes: time is
/// ranks x (skeleton + classes), memory one sequence per instance.
LogicalResult checkSequences(FunctionOpInterface func,
                             SymbolTableCollection &tables,
                             const CollectiveReach &reach, bool print) {
  // The meshes the function's collectives run on; all ranks of the world
  // must be members of each, so they must have one size. Every class is
  // known before the first rank runs, so a rank that issues nothing on a
  // communicator is still compared with its members.
  CommClasses classes(tables);
  MeshOp mesh;
  LogicalResult sizes = success();
  reach.forEachCollective(func, [&](CollectiveOpInterface coll) {
    MeshOp m = lookupMesh(coll, coll.getMeshAttr(), &tables);
    if (!m || failed(sizes))
      return;
    if (mesh && m.getNumRanks() != mesh.getNumRanks()) {
      coll->emitOpError("dist-verify-spmd: one function uses meshes of ")
          << mesh.getNumRanks() << " and " << m.getNumRanks()
          << " ranks; cannot tell which ranks run it";
      sizes = failure();
      return;
    }
    mesh = m;
    classes.classOf(coll);
  });
  if (failed(sizes))
    return failure();
  if (!mesh || func.isExternal())
    return success();
  if (failed(checkEnumerableMesh(func, mesh, "dist-verify-spmd")))
    return failure();

  int64_t numRanks = mesh.getNumRanks();
  int64_t budget = RankSimulator::kMaxSimulatedOps;
  RankSimulator sim(tables, classes, reach, budget);
  std::vector<std::map<std::vector<int64_t>, Instance>> instances(
      classes.size());
  for (int64_t r = 0; r < numRanks; ++r) {
    if (failed(sim.simulate(r, func)))
      return failure();
    for (size_t c = 0; c < classes.size(); ++c) {
      std::vector<int64_t> key = classes.instanceOf(c, r);
      auto [it, isNew] = instances[c].try_emplace(key);
      std::vector<Operation *> &seq = sim.sequences[c];
      if (isNew) {
        it->second = Instance{r, std::move(seq)};
        continue;
      }
      const std::vector<Operation *> &ref = it->second.sequence;
      size_t i = 0;
      while (i < ref.size() && i < seq.size() &&
             classes.desc(ref[i]) == classes.desc(seq[i]))
        ++i;
      if (i == ref.size() && i == seq.size())
        continue;
      auto describe = [&](const std::vector<Operation *> &s, int64_t who) {
        return i < s.size() ? "`" + classes.desc(s[i]) + "` on rank " +
                                  std::to_string(who)
                            : "nothing on rank " + std::to_string(who);
      };
      Operation *at = i < seq.size() ? seq[i] : ref[i];
      return at->emitOpError("breaks the SPMD rule: collective sequences "
                             "diverge on the communicator of ranks {")
             << rankList(classes.members(c, key)) << "}: collective #" << i
             << " is " << describe(ref, it->second.first) << " but "
             << describe(seq, r);
    }
  }

  if (print) {
    // By class name, then instance coordinates: a stable, readable order.
    std::vector<size_t> order(classes.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::sort(order, [&](size_t a, size_t b) {
      return classes.get(a).name < classes.get(b).name;
    });
    llvm::raw_ostream &os = llvm::outs();
    for (size_t c : order)
      for (auto &[key, inst] : instances[c]) {
        if (inst.sequence.empty())
          continue;
        os << "communicator " << classes.get(c).name << " ranks {";
        llvm::interleaveComma(classes.members(c, key), os);
        os << "}: " << inst.sequence.size() << " collectives\n";
        for (Operation *op : inst.sequence)
          os << "  " << classes.desc(op) << "\n";
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
    CollectiveReach reach(getOperation(), tables);
    ArgumentVariance arguments(getOperation(), tables, reach);
    DenseSet<Operation *> brokenControlFlow;
    getOperation().walk([&](FunctionOpInterface func) {
      if (!func.isExternal() &&
          failed(checkControlFlow(func, tables, reach, arguments)))
        brokenControlFlow.insert(func.getOperation());
    });
    bool ok = brokenControlFlow.empty();
    getOperation().walk([&](FunctionOpInterface func) {
      // A function run only through calls is simulated at each of them,
      // with the caller's arguments. A simulation through control flow
      // already refused would only repeat that error as a divergence.
      if (func.isExternal() || arguments.isCallee(func))
        return;
      bool broken = false;
      if (!brokenControlFlow.empty())
        reach.forEachReached(func, [&](Operation *g) {
          broken |= brokenControlFlow.contains(g);
        });
      if (!broken &&
          failed(checkSequences(func, tables, reach, printSequences)))
        ok = false;
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
