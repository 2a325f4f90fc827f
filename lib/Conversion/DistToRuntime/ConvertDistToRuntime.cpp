//===- ConvertDistToRuntime.cpp - The convert-dist-to-runtime pass --------===//
//
// A thin driver over the patterns: it checks what the patterns assume (with
// a diagnostic at the op that breaks it), creates each function's
// communicators at its top, runs the conversion (boundary + the target's
// collective patterns), and then puts the shard checks of the arguments in
// front of everything.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/ConversionConfig.h"
#include "muon/Conversion/DistToRuntime/DistToRuntime.h"
#include "muon/Conversion/Passes.h"
#include "muon/Conversion/Target.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Runtime/muon_runtime.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace muon {
#define GEN_PASS_DEF_CONVERTDISTTORUNTIME
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;
using namespace muon::dist;
using muon::RuntimeCalls;
using muon::RuntimeFn;
namespace layout = muon::layout;

namespace {

/// The runtime writes an asynchronous batch's results when its request is
/// waited on, and a buffer lives as long as the block that holds its value
/// (ownership-based deallocation frees it at the block's end). So wherever
/// the token leaves a region (scf.yield), every result must leave with it;
/// then the results are alive wherever the token is waited on. And no
/// result may be read before that wait: the read would race with the
/// runtime's write. The request must be waited exactly once on every path:
/// the token goes to a dist.wait in the block that made it, or leaves that
/// block by an scf.yield of a region that runs once (scf.if,
/// scf.index_switch, scf.execute_region), never into a nested region (one
/// that may run never or many times) or another op.
LogicalResult checkAsyncResultsLive(Operation *op) {
  Value token = op->getResults().back();
  SmallVector<Value> results(op->getResults().drop_back());
  Block *home = op->getBlock();
  while (true) {
    if (!token.hasOneUse())
      return op->emitOpError("is asynchronous: its token must have one use "
                             "(a dist.wait, or an scf.yield towards one), "
                             "it has ")
             << std::distance(token.use_begin(), token.use_end());
    OpOperand &use = *token.use_begin();
    Operation *tokenUser = use.getOwner();
    auto refuse = [&](const Twine &why) {
      InFlightDiagnostic d = op->emitOpError("is asynchronous: its token ")
                             << why;
      d.attachNote(tokenUser->getLoc()) << "the token is used here";
      return d;
    };
    if (!isa<WaitOp, scf::YieldOp>(tokenUser))
      return refuse("goes to '" + tokenUser->getName().getStringRef() +
                    "'; it must go to a dist.wait, or an scf.yield towards "
                    "one");
    if (tokenUser->getBlock() != home)
      return refuse("is waited or yielded inside a nested region, which may "
                    "run never or several times; wait it in the block that "
                    "made it, or yield it out of the region");
    if (isa<scf::YieldOp>(tokenUser) &&
        !isa<scf::IfOp, scf::IndexSwitchOp, scf::ExecuteRegionOp>(
            tokenUser->getParentOp()))
      return refuse("is yielded by '" +
                    tokenUser->getParentOp()->getName().getStringRef() +
                    "', whose region may run several times; only the "
                    "region of an scf.if, scf.index_switch or "
                    "scf.execute_region may pass a token out");
    for (auto [i, r] : llvm::enumerate(results))
      for (Operation *user : r.getUsers()) {
        Operation *at = tokenUser->getBlock()->findAncestorOpInBlock(*user);
        if (at && at != tokenUser && at->isBeforeInBlock(tokenUser)) {
          InFlightDiagnostic d =
              op->emitOpError("is asynchronous: result #")
              << i
              << " is read before its token is waited on; the runtime "
                 "writes it at the dist.wait, so read it after";
          d.attachNote(user->getLoc()) << "read here";
          return d;
        }
      }
    auto yield = dyn_cast<scf::YieldOp>(tokenUser);
    if (!yield)
      return success();
    Operation *parent = yield->getParentOp();
    SmallVector<Value> outer;
    for (Value r : results) {
      auto at = llvm::find_if(yield->getOpOperands(), [&](OpOperand &o) {
        return o.get() == r;
      });
      if (at == yield->getOpOperands().end())
        return op->emitOpError("is asynchronous: its token leaves the region "
                               "but result #")
               << (llvm::find(op->getResults(), r) - op->result_begin())
               << " does not; the runtime writes the results at the wait, "
                  "so yield them together";
      outer.push_back(parent->getResult(at->getOperandNumber()));
    }
    token = parent->getResult(use.getOperandNumber());
    results = outer;
    home = parent->getBlock();
  }
}

/// What the patterns assume of a function, checked with a diagnostic at the
/// op that breaks it.
LogicalResult checkLowerable(func::FuncOp f) {
  if (!llvm::hasSingleElement(f.getBody()))
    return f.emitOpError("has several blocks; the CPU lowering expects "
                         "structured control flow (scf)");
  // First, since a redistribution also breaks the rules on arguments and
  // results checked below, and this says what to do.
  WalkResult redistribute = f.walk([](RedistributeOp op) {
    op.emitOpError("is not lowered to the CPU runtime: lower "
                   "redistributions first (dist-lower-redistribute)");
    return WalkResult::interrupt();
  });
  if (redistribute.wasInterrupted())
    return failure();
  for (BlockArgument arg : f.getArguments())
    if (auto dt = dyn_cast<DistTensorType>(arg.getType());
        dt && !dt.getElementType().isF32())
      return f.emitOpError("argument #")
             << arg.getArgNumber() << " has type " << dt
             << "; the CPU runtime takes f32 tensors only";
  for (BlockArgument arg : f.getArguments())
    if (isa<DistTensorType>(arg.getType()))
      for (Operation *user : arg.getUsers())
        if (!isa<ToLocalOp>(user)) {
          InFlightDiagnostic d =
              user->emitOpError("uses distributed argument #")
              << arg.getArgNumber()
              << " directly; the CPU lowering expects only "
                 "dist.to_local on arguments";
          // An op holding the distributed value across a region or a call
          // (or a region's terminator passing it on, such as a branch's
          // scf.yield) is not followed by the lowering; anything else should
          // have been expanded into the local view.
          if (user->getNumRegions() > 0 || isa<CallOpInterface>(user) ||
              (user->hasTrait<OpTrait::IsTerminator>() &&
               !isa<func::ReturnOp>(user)))
            d << " (a muon.step inside a loop, a branch or a called function "
                 "is not lowered: write it in the function's own body, and "
                 "loop around the compiled step on the host)";
          else
            d << " (run muon-expand-step first)";
          return d;
        }
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  for (OpOperand &operand : ret->getOpOperands())
    if (isa<DistTensorType>(operand.get().getType()) &&
        !operand.get().getDefiningOp<FromLocalOp>())
      return ret.emitOpError("returns distributed value #")
             << operand.getOperandNumber()
             << " not built by dist.from_local; run muon-expand-step first";

  WalkResult r = f.walk([&](Operation *op) {
    if (!op->getDialect() || !isa<DistDialect>(op->getDialect()))
      return WalkResult::advance();
    if (isa<CollectiveOpInterface>(op)) {
      // A token result, used or not, makes the op asynchronous: lowered for
      // the rooted ops the step uses, whose input the runtime copies.
      bool async = llvm::any_of(op->getResultTypes(), llvm::IsaPred<TokenType>);
      if (async && !isa<GatherOp, ScatterOp, BroadcastOp, GatherBatchOp,
                        ScatterBatchOp, BroadcastBatchOp>(op)) {
        op->emitOpError("is asynchronous (!dist.token); the CPU lowering "
                        "runs it synchronously: only the rooted ones "
                        "(dist.gather, dist.scatter, dist.broadcast and "
                        "their batches) lower asynchronously");
        return WalkResult::interrupt();
      }
      if (async && failed(checkAsyncResultsLive(op)))
        return WalkResult::interrupt();
      for (Type t : op->getOperandTypes())
        if (failed(muon::requireF32Operand(op, t)))
          return WalkResult::interrupt();
      if (auto a = dyn_cast<AllToAllOp>(op);
          a && !cast<RankedTensorType>(a.getResult().getType())
                    .hasStaticShape()) {
        op->emitOpError("with a dynamic result is not lowered yet");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (auto t = dyn_cast<ToLocalOp>(op);
        t && isa<BlockArgument>(t.getInput()) &&
        cast<BlockArgument>(t.getInput()).getOwner() == &f.front())
      return WalkResult::advance();
    if (auto fl = dyn_cast<FromLocalOp>(op);
        fl && llvm::all_of(fl->getUsers(),
                           [&](Operation *u) { return u == ret; }))
      return WalkResult::advance();
    if (isa<RankOp, CoordOp, MeshOp, FlatGroupOp, WaitOp, CompletedTokenOp>(
            op))
      return WalkResult::advance();
    op->emitOpError("is not lowered to the CPU runtime")
        << (isa<ToLocalOp, FromLocalOp>(op)
                ? ": only at function arguments / results"
                : "");
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

/// The argument shape tables below visit every rank, and a collective's
/// extent tables every member of its communicator: bound both, as every
/// pass that visits every rank does (a scatter over 2^31 members ran out
/// of memory building its table).
LogicalResult checkEnumerable(func::FuncOp f,
                              const muon::CommunicatorTable &comms) {
  for (Type t : f.getArgumentTypes())
    if (auto dt = dyn_cast<DistTensorType>(t))
      if (failed(checkEnumerableMesh(f, lookupMesh(f, dt.getMesh()),
                                     "convert-dist-to-runtime")))
        return failure();
  WalkResult r = f.walk([&](CollectiveOpInterface op) {
    int64_t k = comms.groupSize(op);
    if (k > kMaxEnumeratedRanks) {
      op->emitOpError("convert-dist-to-runtime builds tables with an entry "
                      "per member of this collective's communicator, which "
                      "has ")
          << k << " ranks; at most " << kMaxEnumeratedRanks << " are supported";
      return WalkResult::interrupt();
    }
    if (k > muon::kMaxRunTimeExtentMembers && muon::findsExtentsAtRunTime(op)) {
      op->emitOpError("finds its members' lengths at run time (no `sizes`, "
                      "and the split length depends on the rank), in a "
                      "table of 8 bytes per member on the stack; its "
                      "communicator has ")
          << k << " ranks, at most " << muon::kMaxRunTimeExtentMembers
          << " are supported (give `sizes`, or make the length the same on "
             "every rank)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// Every rank's expected local shape of each distributed argument, recorded
/// before the signature changes: the runtime's shape tables
/// (muon_rt_check_arg, muon_runtime.h), one per argument type.
struct ArgumentShapeTables {
  /// (argument number, index into `tables`) per distributed argument.
  SmallVector<std::pair<unsigned, unsigned>> args;
  SmallVector<SmallVector<int64_t>> tables;
};

ArgumentShapeTables argumentShapeTables(func::FuncOp f) {
  ArgumentShapeTables out;
  // Parameters, gradients and momenta share a few types: one table each.
  DenseMap<Type, unsigned> byType;
  for (BlockArgument arg : f.getArguments()) {
    auto dt = dyn_cast<DistTensorType>(arg.getType());
    if (!dt)
      continue;
    auto [it, fresh] = byType.try_emplace(dt, out.tables.size());
    if (fresh) {
      SmallVector<int64_t> &table = out.tables.emplace_back();
      muon::dist::LocalShapeRuns shapes = muon::dist::localShapeRuns(dt, f);
      table = {MUON_RT_SHAPE_RUNS,
               toLayoutMesh(lookupMesh(f, dt.getMesh())).numRanks(),
               shapes.dims};
      table.append(shapes.runs);
    }
    out.args.push_back({arg.getArgNumber(), it->second});
  }
  return out;
}

/// Before anything else: every rank checks the shards it was handed.
void emitArgChecks(func::FuncOp f, RuntimeCalls &rt,
                   const ArgumentShapeTables &shapes) {
  OpBuilder b = OpBuilder::atBlockBegin(&f.front());
  Location loc = f.getLoc();
  SmallVector<Value> tableOf(shapes.tables.size());
  for (auto [index, table] : shapes.args) {
    if (!tableOf[table])
      tableOf[table] = rt.i64Table(b, loc, shapes.tables[table]);
    rt.call(b, loc, RuntimeFn::muon_rt_check_arg,
            {RuntimeCalls::i64(b, loc, index),
             RuntimeCalls::unrankedBufferOf(b, loc, f.getArgument(index)),
             tableOf[table]});
  }
}

/// Turns the roles muon-expand-step recorded on `f` (muon_arg_roles /
/// muon_result_roles) into the public ABI table __muon_roles_<f>
/// (muon_runtime.h, "Entry points"), and drops the attributes.
LogicalResult emitRoleTable(func::FuncOp f) {
  auto args = f->getAttrOfType<ArrayAttr>("muon_arg_roles");
  auto results = f->getAttrOfType<ArrayAttr>("muon_result_roles");
  if (!args && !results)
    return success();
  if (!args || !results)
    return f.emitOpError("carries only one of muon_arg_roles and "
                         "muon_result_roles");
  if (args.size() != f.getNumArguments() ||
      results.size() != f.getNumResults())
    return f.emitOpError("has roles for ")
           << args.size() << " arguments and " << results.size()
           << " results, but its signature has " << f.getNumArguments()
           << " and " << f.getNumResults()
           << " (a pass changed the signature after muon-expand-step)";
  // Only entry points (public functions) publish a table; a private
  // function is not called by a host.
  if (!f.isPublic()) {
    f->removeAttr("muon_arg_roles");
    f->removeAttr("muon_result_roles");
    return success();
  }
  SmallVector<int64_t> table{MUON_RT_ROLES_VERSION,
                             static_cast<int64_t>(args.size()),
                             static_cast<int64_t>(results.size())};
  for (ArrayAttr list : {args, results})
    for (Attribute entry : list) {
      auto roles = dyn_cast<ArrayAttr>(entry);
      if (!roles)
        return f.emitOpError("has a malformed role list ") << entry;
      table.push_back(static_cast<int64_t>(roles.size()));
      for (Attribute r : roles) {
        auto d = dyn_cast<DictionaryAttr>(r);
        auto role = d ? d.getAs<StringAttr>("role") : StringAttr();
        auto step = d ? d.getAs<IntegerAttr>("step") : IntegerAttr();
        auto param = d ? d.getAs<IntegerAttr>("param") : IntegerAttr();
        std::optional<int64_t> code =
            !role                            ? std::nullopt
            : role.getValue() == "param"    ? std::optional<int64_t>(MUON_RT_ROLE_PARAM)
            : role.getValue() == "grad"     ? std::optional<int64_t>(MUON_RT_ROLE_GRAD)
            : role.getValue() == "momentum" ? std::optional<int64_t>(MUON_RT_ROLE_MOMENTUM)
            : role.getValue() == "lr"       ? std::optional<int64_t>(MUON_RT_ROLE_LR)
            : role.getValue() == "weight_decay"
                ? std::optional<int64_t>(MUON_RT_ROLE_WEIGHT_DECAY)
                : std::nullopt;
        if (!code || !step || !param)
          return f.emitOpError("has a malformed role ") << r;
        table.append({*code, step.getInt(), param.getInt()});
      }
    }
  // Beside it, each buffer's number of dims (0 for an f64 scalar): a host
  // that builds descriptors checks it, as the compiled code reads each
  // descriptor with the dims it was compiled for.
  SmallVector<int64_t> dims = {
      static_cast<int64_t>(f.getNumArguments() + f.getNumResults())};
  for (TypeRange types :
       {TypeRange(f.getArgumentTypes()), TypeRange(f.getResultTypes())})
    for (Type t : types)
      dims.push_back(isa<ShapedType>(t) ? cast<ShapedType>(t).getRank() : 0);
  auto module = f->getParentOfType<ModuleOp>();
  for (auto [prefix, values] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"__muon_roles_", table},
        {"__muon_dims_", dims}}) {
    std::string name = (prefix + f.getSymName()).str();
    if (module.lookupSymbol(name))
      return f.emitOpError("cannot publish its role table: the symbol @")
             << name << " is taken";
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    auto type =
        MemRefType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
    memref::GlobalOp::create(
        b, f.getLoc(), name, b.getStringAttr("public"), type,
        DenseElementsAttr::get(
            RankedTensorType::get(type.getShape(), b.getI64Type()), values),
        /*constant=*/true, /*alignment=*/nullptr);
  }
  f->removeAttr("muon_arg_roles");
  f->removeAttr("muon_result_roles");
  return success();
}

struct ConvertDistToRuntimePass
    : muon::impl::ConvertDistToRuntimeBase<ConvertDistToRuntimePass> {
  using ConvertDistToRuntimeBase::ConvertDistToRuntimeBase;

  void runOnOperation() override {
    // Layouts are read below: every !dist.tensor must verify first.
    if (failed(muon::dist::verifyDistTypesIn(getOperation())))
      return signalPassFailure();
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    RuntimeCalls rt(module);
    muon::CommunicatorTable comms;
    SmallVector<func::FuncOp> functions;
    DenseMap<Operation *, ArgumentShapeTables> argTables;
    SmallVector<func::FuncOp> all;
    module.walk([&](func::FuncOp f) { all.push_back(f); });
    for (func::FuncOp f : all) {
      if (f.isExternal())
        continue;
      // A step result the function does not return leaves a
      // dist.from_local nobody reads: dead, not an error.
      f.walk([](FromLocalOp op) {
        if (op->use_empty())
          op.erase();
      });
      if (failed(checkLowerable(f)) || failed(checkEnumerable(f, comms)) ||
          failed(comms.createFor(f, rt)))
        return signalPassFailure();
      argTables[f] = argumentShapeTables(f);
      functions.push_back(f);
    }

    muon::DistToLocalTypeConverter converter(module);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<DistDialect>();
    target.addLegalOp<MeshOp, FlatGroupOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    // Tokens become request handles, also where scf.if / scf.for carry them.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    muon::populateDistBoundaryPatterns(converter, patterns);
    muon::getTargetLowering(this->target)
        .populateCollectivePatterns(rt, comms, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns),
                                      muon::conversionConfig())) ||
        rt.failed())
      return signalPassFailure();

    for (func::FuncOp f : functions) {
      if (failed(emitRoleTable(f)))
        return signalPassFailure();
      emitArgChecks(f, rt, argTables[f]);
      // Public functions are entry points: hosts call them through MLIR's
      // C interface (_mlir_ciface_<name>, memrefs by descriptor pointer).
      if (f.isPublic())
        f->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    }
    if (rt.failed())
      return signalPassFailure();
    // Meshes and groups are compile-time facts; drop them once unused.
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (isa<MeshOp, FlatGroupOp>(op))
        op.erase();
    if (checkOutput && failed(muon::verifyPassOutput(module, getArgument())))
      signalPassFailure();
  }
};

} // namespace
