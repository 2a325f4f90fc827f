//===- DistToRuntime.cpp - Lower dist ops to the step runtime -------------===//
//
// After muon-expand-step a function is SPMD code on local tensors between a
// dist.to_local at every argument and a dist.from_local at every result.
// This pass makes that boundary the ABI (local tensors), checks the shards
// handed in, creates the communicators up front and turns each collective
// into a runtime call on buffers.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "muon/Conversion/Passes.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/IR/DistOps.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/MapVector.h"

#include <map>

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

/// The runtime's number for a reduction (muon_runtime.h): a switch, so that
/// a new #dist.reduce kind is a compile-time warning here, not a silent
/// off-by-one across the ABI.
int64_t runtimeReduction(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Sum:
    return MUON_RT_SUM;
  case ReduceKind::Avg:
    return MUON_RT_AVG;
  case ReduceKind::Max:
    return MUON_RT_MAX;
  case ReduceKind::Min:
    return MUON_RT_MIN;
  }
  llvm_unreachable("unknown reduction");
}

/// A communicator: a mesh and the axes (in order) that span it.
struct CommKey {
  mutable MeshOp mesh;
  SmallVector<int64_t> axes;
  std::string str() const {
    std::string s = mesh.getSymName().str();
    for (int64_t a : axes)
      s += "," + std::to_string(a);
    return s;
  }
};

class FunctionLowering {
public:
  FunctionLowering(func::FuncOp f, RuntimeCalls &rt) : f(f), rt(rt) {}

  LogicalResult run() {
    if (failed(localizeBoundary()) || failed(collectComms()))
      return failure();
    // A step result the function does not return leaves a dist.from_local
    // nobody reads: dead, not an error.
    f.walk([](FromLocalOp op) {
      if (op->use_empty())
        op.erase();
    });
    OpBuilder b = OpBuilder::atBlockBegin(&f.front());
    emitArgChecks(b);
    emitComms(b);
    SmallVector<Operation *> ops;
    f.walk([&](Operation *op) {
      if (op->getDialect() && isa<DistDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(lower(op)))
        return failure();
    return success();
  }

private:
  // --- The boundary -------------------------------------------------------

  LogicalResult localizeBoundary() {
    Block &entry = f.front();
    SmallVector<Type> argTypes, resultTypes;
    for (BlockArgument arg : entry.getArguments()) {
      auto dt = dyn_cast<DistTensorType>(arg.getType());
      if (!dt) {
        argTypes.push_back(arg.getType());
        continue;
      }
      RankedTensorType local = localTensorType(dt, f);
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        auto toLocal = dyn_cast<ToLocalOp>(user);
        if (!toLocal)
          return user->emitOpError("uses distributed argument #")
                 << arg.getArgNumber()
                 << " directly; the CPU lowering expects only dist.to_local "
                    "on arguments (run muon-expand-step first)";
        OpBuilder b(toLocal);
        Value v = arg;
        if (toLocal.getType() != local)
          v = tensor::CastOp::create(b, toLocal.getLoc(), toLocal.getType(), v);
        toLocal.getResult().replaceAllUsesWith(v);
        toLocal.erase();
      }
      arg.setType(local);
      argTypes.push_back(local);
      checkedArgs.push_back({arg, dt});
    }
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    if (!llvm::hasSingleElement(f.getBody()))
      return f.emitOpError("has several blocks; the CPU lowering expects "
                           "structured control flow (scf)");
    for (OpOperand &operand : ret->getOpOperands()) {
      auto dt = dyn_cast<DistTensorType>(operand.get().getType());
      if (!dt) {
        resultTypes.push_back(operand.get().getType());
        continue;
      }
      auto fromLocal = operand.get().getDefiningOp<FromLocalOp>();
      if (!fromLocal)
        return ret.emitOpError("returns distributed value #")
               << operand.getOperandNumber()
               << " not built by dist.from_local; run muon-expand-step first";
      RankedTensorType local = localTensorType(dt, f);
      OpBuilder b(ret);
      Value v = fromLocal.getInput();
      if (v.getType() != local)
        v = tensor::CastOp::create(b, ret.getLoc(), local, v);
      operand.set(v);
      if (fromLocal->use_empty())
        fromLocal.erase();
      resultTypes.push_back(local);
    }
    f.setFunctionType(FunctionType::get(f.getContext(), argTypes, resultTypes));
    return success();
  }

  /// Before anything else: every rank checks the shards it was handed.
  void emitArgChecks(OpBuilder &b) {
    for (auto [arg, dt] : checkedArgs) {
      MeshOp mesh = lookupMesh(f, dt.getMesh());
      layout::Mesh lm = toLayoutMesh(mesh);
      SmallVector<int64_t> table;
      for (int64_t r = 0; r < lm.numRanks(); ++r) {
        layout::LocalShard s = localShardOf(dt, f, lm.coords(r));
        table.append(s.shape.begin(), s.shape.end());
      }
      Location loc = f.getLoc();
      rt.call(b, loc, RuntimeFn::muon_rt_check_arg, {RuntimeCalls::i64(b, loc, cast<BlockArgument>(arg).getArgNumber()),
               RuntimeCalls::unrankedBufferOf(b, loc, arg),
               rt.i64Table(b, loc, table)});
    }
  }

  // --- Communicators ------------------------------------------------------

  FailureOr<CommKey> keyOf(Operation *op, FlatSymbolRefAttr meshName,
                           ArrayAttr axes) {
    MeshOp mesh = lookupMesh(op, meshName);
    if (!mesh)
      return op->emitOpError("unknown mesh ") << meshName;
    CommKey k{mesh, {}};
    for (Attribute a : axes)
      k.axes.push_back(mesh.getAxisIndex(cast<StringAttr>(a).getValue()));
    return k;
  }

  FailureOr<CommKey> keyOf(Operation *op) {
    if (auto c = dyn_cast<CollectiveOpInterface>(op))
      return keyOf(op, c.getMeshAttr(), c.getAxes());
    auto coord = cast<CoordOp>(op);
    return keyOf(op, coord.getMeshAttr(), coord.getAxes());
  }

  LogicalResult collectComms() {
    WalkResult r = f.walk([&](Operation *op) {
      if (!isa<CollectiveOpInterface, CoordOp>(op))
        return WalkResult::advance();
      FailureOr<CommKey> k = keyOf(op);
      if (failed(k))
        return WalkResult::interrupt();
      comms.insert({k->str(), {*k, Value()}});
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// Communicators are created unconditionally at the top: creation is
  /// collective over the world, so no rank may skip one.
  void emitComms(OpBuilder &b) {
    Location loc = f.getLoc();
    for (auto &[name, entry] : comms) {
      CommKey &k = entry.first;
      Value shape = rt.i64Table(b, loc, k.mesh.getShape());
      Value axes = rt.i64Table(b, loc, k.axes);
      entry.second = rt.call(b, loc, RuntimeFn::muon_rt_comm, {shape, axes})
                         .getResult(0);
    }
  }

  Value commOf(Operation *op) { return comms[keyOf(op)->str()].second; }

  int64_t groupSize(Operation *op) {
    CommKey k = *keyOf(op);
    int64_t n = 1;
    for (int64_t a : k.axes)
      n *= k.mesh.getShape()[a];
    return n;
  }

  Value commRank(OpBuilder &b, Location loc, Value comm) {
    Value r = rt.call(b, loc, RuntimeFn::muon_rt_comm_rank, {comm})
                  .getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), r);
  }

  // --- Ops ----------------------------------------------------------------

  /// The members' lengths along the split dim. Static when the full length
  /// is (chunk rule, weights) or `sizes` are given: a constant table.
  /// Otherwise (the length depends on the rank, e.g. a storage split of an
  /// uneven TP shard) they are found at run time: gathers exchange the
  /// members' actual lengths, scatters apply the chunk rule to the length
  /// the root (or, for reduce_scatter, every member) holds.
  /// Size `d` of `operand`; with a root, the root's size (its operand is
  /// the only one that means anything: others pass placeholders).
  Value operandDim(OpBuilder &b, Location loc, Value operand, int64_t d,
                   Value comm, std::optional<int64_t> root) {
    if (!root)
      return tensor::DimOp::create(b, loc, operand, d);
    Value v = rt.call(b, loc, RuntimeFn::muon_rt_root_dim, {comm, RuntimeCalls::unrankedBufferOf(b, loc, operand),
                       RuntimeCalls::i64(b, loc, *root),
                       RuntimeCalls::i64(b, loc, d)})
                  .getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  struct Extents {
    Value table;              ///< memref<?xi64>, one entry per member
    Value total;              ///< index: the full length, when dynamic
    SmallVector<int64_t> values; ///< when static
  };

  Extents extents(OpBuilder &b, Location loc, Operation *op, Value input,
                  int64_t dim, bool gathering, int64_t length,
                  std::optional<ArrayRef<int64_t>> sizes,
                  std::optional<ArrayRef<int64_t>> weights,
                  std::optional<int64_t> root) {
    int64_t k = groupSize(op);
    Extents e;
    if (sizes || !ShapedType::isDynamic(length)) {
      if (sizes) {
        e.values.assign(sizes->begin(), sizes->end());
      } else {
        std::vector<int64_t> w;
        if (weights)
          w.assign(weights->begin(), weights->end());
        for (int64_t i = 0; i < k; ++i)
          e.values.push_back(layout::chunk(length, k, i, w).size);
      }
      e.table = rt.i64Table(b, loc, e.values);
      return e;
    }
    Value comm = commOf(op);
    Value buf = memref::AllocaOp::create(
        b, loc, MemRefType::get({k}, b.getI64Type()));
    e.table = memref::CastOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI64Type()), buf);
    Value total;
    if (gathering) {
      total = rt.call(b, loc, RuntimeFn::muon_rt_member_dims, {comm, RuntimeCalls::unrankedBufferOf(b, loc, input),
                       RuntimeCalls::i64(b, loc, dim), e.table})
                  .getResult(0);
    } else {
      Value len = operandDim(b, loc, input, dim, comm, root);
      total = arith::IndexCastOp::create(b, loc, b.getI64Type(), len);
      std::vector<int64_t> w;
      if (weights)
        w.assign(weights->begin(), weights->end());
      rt.call(b, loc, RuntimeFn::muon_rt_chunk_extents, {total, rt.i64Table(b, loc, w), e.table});
    }
    e.total = arith::IndexCastOp::create(b, loc, b.getIndexType(), total);
    return e;
  }

  /// Dynamic sizes of a result: the split dim from the member's extent (or
  /// the full length when gathering), every other dim from the operand (the
  /// root's for rooted scatters).
  SmallVector<Value> resultSizes(OpBuilder &b, Location loc,
                                 RankedTensorType type, Value operand,
                                 int64_t splitDim, const Extents &ext,
                                 Value comm, bool gathering,
                                 std::optional<int64_t> root) {
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d != splitDim) {
        sizes.push_back(operandDim(b, loc, operand, d, comm, root));
      } else if (gathering && ext.total) {
        sizes.push_back(ext.total);
      } else if (gathering) {
        int64_t total = 0;
        for (int64_t v : ext.values)
          total += v;
        sizes.push_back(arith::ConstantIndexOp::create(b, loc, total));
      } else {
        Value idx = commRank(b, loc, comm);
        Value e = memref::LoadOp::create(b, loc, ext.table, ValueRange{idx});
        sizes.push_back(
            arith::IndexCastOp::create(b, loc, b.getIndexType(), e));
      }
    }
    return sizes;
  }

  LogicalResult requireF32(Operation *op) {
    for (Type t : op->getOperandTypes())
      if (auto tt = dyn_cast<RankedTensorType>(t); tt && !tt.getElementType().isF32())
        return op->emitOpError("operand type ")
               << t << " is not lowered to the CPU runtime: only f32 tensors are";
    return success();
  }

  /// A collective over a split dim: gather-like (`gathering`) or
  /// scatter-like. Emits the call with `extra` arguments after the dim.
  LogicalResult splitCollective(Operation *op, RuntimeFn fn, int64_t dim,
                                bool gathering,
                                std::optional<ArrayRef<int64_t>> sizes,
                                std::optional<ArrayRef<int64_t>> weights,
                                ArrayRef<int64_t> extra,
                                std::optional<int64_t> root = std::nullopt) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value input = op->getOperand(0);
    auto inT = cast<RankedTensorType>(input.getType());
    auto outT = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t length = gathering ? outT.getDimSize(dim) : inT.getDimSize(dim);
    Value comm = commOf(op);
    Extents ext = extents(b, loc, op, input, dim, gathering, length, sizes,
                          weights, root);
    auto [buf, out] = RuntimeCalls::allocate(
        b, loc, outT,
        resultSizes(b, loc, outT, input, dim, ext, comm, gathering, root));
    SmallVector<Value> args{comm, RuntimeCalls::unrankedBufferOf(b, loc, input),
                            out, RuntimeCalls::i64(b, loc, dim)};
    for (int64_t v : extra)
      args.push_back(RuntimeCalls::i64(b, loc, v));
    args.push_back(ext.table);
    args.push_back(RuntimeCalls::i64(b, loc, 0)); // synchronous
    rt.call(b, loc, fn, args);
    op->getResult(0).replaceAllUsesWith(RuntimeCalls::tensorOf(b, loc, buf, outT));
    op->erase();
    return success();
  }

  /// A collective whose result has the operand's shape.
  LogicalResult sameShapeCollective(Operation *op, RuntimeFn fn,
                                    ArrayRef<int64_t> extra,
                                    std::optional<int64_t> root = std::nullopt) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value input = op->getOperand(0);
    auto outT = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < outT.getRank(); ++d)
      if (outT.isDynamicDim(d))
        dyn.push_back(operandDim(b, loc, input, d, commOf(op), root));
    auto [buf, out] = RuntimeCalls::allocate(b, loc, outT, dyn);
    SmallVector<Value> args{commOf(op),
                            RuntimeCalls::unrankedBufferOf(b, loc, input), out};
    for (int64_t v : extra)
      args.push_back(RuntimeCalls::i64(b, loc, v));
    args.push_back(RuntimeCalls::i64(b, loc, 0)); // synchronous
    rt.call(b, loc, fn, args);
    op->getResult(0).replaceAllUsesWith(RuntimeCalls::tensorOf(b, loc, buf, outT));
    op->erase();
    return success();
  }

  LogicalResult lower(Operation *op) {
    if (auto c = dyn_cast<CollectiveOpInterface>(op)) {
      if (op->getNumResults() > 1 && !op->getResult(1).use_empty())
        return op->emitOpError("is asynchronous (!dist.token); the CPU "
                               "lowering runs collectives synchronously and "
                               "does not lower tokens yet");
      if (failed(requireF32(op)))
        return failure();
    }
    if (auto g = dyn_cast<AllGatherOp>(op))
      return splitCollective(op, RuntimeFn::muon_rt_all_gather, g.getGatherDim(), true,
                             std::nullopt, std::nullopt, {});
    if (auto g = dyn_cast<GatherOp>(op))
      return splitCollective(op, RuntimeFn::muon_rt_gather, g.getGatherDim(), true,
                             g.getSizes(), g.getWeights(),
                             {static_cast<int64_t>(g.getRoot())});
    if (auto s = dyn_cast<ScatterOp>(op))
      return splitCollective(op, RuntimeFn::muon_rt_scatter, s.getScatterDim(), false,
                             s.getSizes(), s.getWeights(),
                             {static_cast<int64_t>(s.getRoot())},
                             static_cast<int64_t>(s.getRoot()));
    if (auto s = dyn_cast<ReduceScatterOp>(op))
      return splitCollective(op, RuntimeFn::muon_rt_reduce_scatter, s.getScatterDim(),
                             false, std::nullopt, std::nullopt,
                             {runtimeReduction(s.getReduction())});
    if (auto a = dyn_cast<AllReduceOp>(op))
      return sameShapeCollective(op, RuntimeFn::muon_rt_all_reduce,
                                 {runtimeReduction(a.getReduction())});
    if (auto bc = dyn_cast<BroadcastOp>(op))
      return sameShapeCollective(op, RuntimeFn::muon_rt_broadcast,
                                 {static_cast<int64_t>(bc.getRoot())},
                                 static_cast<int64_t>(bc.getRoot()));
    if (auto a = dyn_cast<AllToAllOp>(op)) {
      auto outT = cast<RankedTensorType>(a.getResult().getType());
      if (!outT.hasStaticShape())
        return op->emitOpError("with a dynamic result is not lowered yet");
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto [buf, out] = RuntimeCalls::allocate(b, loc, outT, {});
      rt.call(b, loc, RuntimeFn::muon_rt_all_to_all, {commOf(op), RuntimeCalls::unrankedBufferOf(b, loc, a.getInput()),
               out, RuntimeCalls::i64(b, loc, a.getSplitDim()),
               RuntimeCalls::i64(b, loc, a.getConcatDim()),
               RuntimeCalls::i64(b, loc, 0)});
      a.getResult().replaceAllUsesWith(RuntimeCalls::tensorOf(b, loc, buf, outT));
      op->erase();
      return success();
    }
    if (auto r = dyn_cast<RankOp>(op)) {
      OpBuilder b(op);
      Value v = rt.call(b, op->getLoc(), RuntimeFn::muon_rt_world_rank, {})
                    .getResult(0);
      r.getResult().replaceAllUsesWith(arith::IndexCastOp::create(
          b, op->getLoc(), b.getIndexType(), v));
      op->erase();
      return success();
    }
    if (auto c = dyn_cast<CoordOp>(op)) {
      OpBuilder b(op);
      c.getResult().replaceAllUsesWith(commRank(b, op->getLoc(), commOf(op)));
      op->erase();
      return success();
    }
    if (isa<MeshOp, FlatGroupOp>(op))
      return success();
    return op->emitOpError("is not lowered to the CPU runtime")
           << (isa<RedistributeOp>(op)
                   ? ": expand redistributions first (muon-expand-step)"
                   : isa<ToLocalOp, FromLocalOp>(op)
                         ? ": only at function arguments / results"
                         : "");
  }

  func::FuncOp f;
  RuntimeCalls &rt;
  SmallVector<std::pair<Value, DistTensorType>> checkedArgs;
  llvm::MapVector<std::string, std::pair<CommKey, Value>,
                  std::map<std::string, unsigned>>
      comms;
};

struct ConvertDistToRuntimePass
    : muon::impl::ConvertDistToRuntimeBase<ConvertDistToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RuntimeCalls rt(module);
    for (auto f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal())
        continue;
      if (failed(FunctionLowering(f, rt).run()))
        return signalPassFailure();
      // Public functions are entry points: hosts call them through MLIR's
      // C interface (_mlir_ciface_<name>, memrefs by descriptor pointer).
      if (f.isPublic())
        f->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
    }
    // Meshes and groups are compile-time facts; drop them once unused.
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (isa<MeshOp, FlatGroupOp>(op))
        op.erase();
  }
};

} // namespace
