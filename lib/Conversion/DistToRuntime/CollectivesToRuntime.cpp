//===- CollectivesToRuntime.cpp - dist collectives to runtime calls -------===//
//
// One OpConversionPattern per collective and rank query. A collective on a
// local tensor becomes a runtime call on buffers: bufferization.to_buffer of
// the operand, a fresh result buffer, the communicator created at the top
// of the function, and the members' extents along the split dim.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/DistToRuntime/DistToRuntime.h"
#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace muon::dist;
using muon::CommunicatorTable;
using muon::RuntimeCalls;
using muon::RuntimeFn;
namespace layout = muon::layout;

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

namespace {
/// The mesh and axes of a collective or dist.coord.
std::pair<FlatSymbolRefAttr, ArrayAttr> commOf(Operation *op) {
  if (auto c = dyn_cast<CollectiveOpInterface>(op))
    return {c.getMeshAttr(), c.getAxes()};
  auto coord = cast<CoordOp>(op);
  return {coord.getMeshAttr(), coord.getAxes()};
}

std::string keyOf(MeshOp mesh, ArrayRef<int> axes) {
  std::string s = mesh.getSymName().str();
  for (int a : axes)
    s += "," + std::to_string(a);
  return s;
}
} // namespace

LogicalResult CommunicatorTable::createFor(func::FuncOp fn, RuntimeCalls &rt) {
  OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
  Location loc = fn.getLoc();
  WalkResult r = fn.walk([&](Operation *op) {
    if (!isa<CollectiveOpInterface, CoordOp>(op))
      return WalkResult::advance();
    auto [meshName, axes] = commOf(op);
    MeshOp mesh = lookupMesh(op, meshName);
    if (!mesh) {
      op->emitOpError("unknown mesh ") << meshName;
      return WalkResult::interrupt();
    }
    std::vector<int> indices = axisIndices(mesh, axes);
    auto key = std::make_pair(fn.getOperation(), keyOf(mesh, indices));
    auto it = entries.find(key);
    if (it == entries.end()) {
      Entry e;
      SmallVector<int64_t> axisList(indices.begin(), indices.end());
      for (int a : indices)
        e.size *= mesh.getShape()[a];
      e.handle = rt.callValue(b, loc, RuntimeFn::muon_rt_comm,
                              {rt.i64Table(b, loc, mesh.getShape()),
                               rt.i64Table(b, loc, axisList)});
      it = entries.emplace(key, e).first;
    }
    // A stack slot, not a heap buffer: target=cuda puts the step's heap
    // buffers in device memory, where the host-side runtime cannot write
    // the table. At the top of the function, so that a loop around the
    // collective does not grow the stack on every iteration.
    int64_t k = it->second.size;
    if (findsExtentsAtRunTime(op) &&
        !extentTables.count({fn.getOperation(), k}))
      extentTables[{fn.getOperation(), k}] = memref::AllocaOp::create(
          b, loc, MemRefType::get({k}, b.getI64Type()));
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

Value CommunicatorTable::lookup(Operation *op) const {
  auto [meshName, axes] = commOf(op);
  MeshOp mesh = lookupMesh(op, meshName);
  auto fn = op->getParentOfType<func::FuncOp>();
  if (!mesh || !fn)
    return {};
  auto it = entries.find({fn.getOperation(), keyOf(mesh, axisIndices(mesh, axes))});
  return it == entries.end() ? Value() : it->second.handle;
}

Value CommunicatorTable::extentTable(Operation *op) const {
  auto fn = op->getParentOfType<func::FuncOp>();
  auto it = extentTables.find({fn.getOperation(), groupSize(op)});
  return it == extentTables.end() ? Value() : it->second;
}

/// Whether a split of length `length` with `sizes` (or none) is found at
/// run time (the one test CollectiveLowering::extents and
/// findsExtentsAtRunTime share).
static bool runTimeExtents(int64_t length,
                           std::optional<ArrayRef<int64_t>> sizes) {
  return !sizes && ShapedType::isDynamic(length);
}

template <typename BatchOp>
static bool batchFindsExtentsAtRunTime(BatchOp op, bool gathering) {
  for (auto [i, dim] : llvm::enumerate(op.getDims())) {
    if (dim < 0)
      continue;
    Value v = gathering ? op.getResults()[i] : op.getInputs()[i];
    if (runTimeExtents(cast<ShapedType>(v.getType()).getDimSize(dim),
                       op.getItemSplit(i).first))
      return true;
  }
  return false;
}

bool muon::findsExtentsAtRunTime(Operation *op) {
  auto dimOf = [](Value v, int64_t d) {
    return cast<ShapedType>(v.getType()).getDimSize(d);
  };
  if (auto g = dyn_cast<AllGatherOp>(op))
    return runTimeExtents(dimOf(g.getResult(), g.getGatherDim()), std::nullopt);
  if (auto g = dyn_cast<GatherOp>(op))
    return runTimeExtents(dimOf(g.getResult(), g.getGatherDim()), g.getSizes());
  if (auto s = dyn_cast<ScatterOp>(op))
    return runTimeExtents(dimOf(s.getInput(), s.getScatterDim()), s.getSizes());
  if (auto s = dyn_cast<ReduceScatterOp>(op))
    return runTimeExtents(dimOf(s.getInput(), s.getScatterDim()), s.getSizes());
  if (auto g = dyn_cast<GatherBatchOp>(op))
    return batchFindsExtentsAtRunTime(g, /*gathering=*/true);
  if (auto s = dyn_cast<ScatterBatchOp>(op))
    return batchFindsExtentsAtRunTime(s, /*gathering=*/false);
  return false;
}

int64_t CommunicatorTable::groupSize(Operation *op) const {
  auto [meshName, axes] = commOf(op);
  MeshOp mesh = lookupMesh(op, meshName);
  int64_t n = 1;
  for (int a : axisIndices(mesh, axes))
    n *= mesh.getShape()[a];
  return n;
}

//===----------------------------------------------------------------------===//
// Extents and result sizes
//===----------------------------------------------------------------------===//

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

/// What the collective patterns share: the runtime, the communicators, and
/// the extent logic.
class CollectiveLowering {
public:
  CollectiveLowering(RuntimeCalls &rt, CommunicatorTable &comms)
      : rt(rt), comms(comms) {}

  Value commRank(OpBuilder &b, Location loc, Value comm) const {
    Value r = rt.callValue(b, loc, RuntimeFn::muon_rt_comm_rank, {comm});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), r);
  }

  /// Size `d` of `operand`; with a root, the root's size (its operand is
  /// the only one that means anything: others pass placeholders).
  Value operandDim(OpBuilder &b, Location loc, Value operand, int64_t d,
                   Value comm, std::optional<int64_t> root) const {
    if (!root)
      return tensor::DimOp::create(b, loc, operand, d);
    Value v = rt.callValue(b, loc, RuntimeFn::muon_rt_root_dim,
                           {comm, RuntimeCalls::unrankedBufferOf(b, loc, operand),
                            RuntimeCalls::i64(b, loc, *root),
                            RuntimeCalls::i64(b, loc, d)});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  struct Extents {
    Value table;                 ///< memref<?xi64>, one entry per member
    Value total;                 ///< index: the full length, when dynamic
    SmallVector<int64_t> values; ///< when static
  };

  /// The members' lengths along the split dim. Static when the full length
  /// is (chunk rule, weights) or `sizes` are given: a constant table.
  /// Otherwise (the length depends on the rank, e.g. a storage split of an
  /// uneven TP shard) they are found at run time: gathers exchange the
  /// members' actual lengths, scatters apply the chunk rule to the length
  /// the root (or, for reduce_scatter, every member) holds.
  Extents extents(OpBuilder &b, Location loc, Operation *op, Value input,
                  int64_t dim, bool gathering, int64_t length,
                  std::optional<ArrayRef<int64_t>> sizes,
                  std::optional<ArrayRef<int64_t>> weights,
                  std::optional<int64_t> root) const {
    int64_t k = comms.groupSize(op);
    std::vector<int64_t> w;
    if (weights)
      w.assign(weights->begin(), weights->end());
    Extents e;
    if (!runTimeExtents(length, sizes)) {
      if (sizes)
        e.values.assign(sizes->begin(), sizes->end());
      else {
        std::vector<int64_t> chunks = layout::chunkSizes(length, k, w);
        e.values.assign(chunks.begin(), chunks.end());
      }
      e.table = rt.i64Table(b, loc, e.values);
      return e;
    }
    Value comm = comms.lookup(op);
    Value buf = comms.extentTable(op);
    assert(buf && "CommunicatorTable::createFor makes every run-time table");
    e.table = memref::CastOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI64Type()), buf);
    Value total;
    if (gathering) {
      total = rt.callValue(b, loc, RuntimeFn::muon_rt_member_dims,
                           {comm, RuntimeCalls::unrankedBufferOf(b, loc, input),
                            RuntimeCalls::i64(b, loc, dim), e.table});
    } else {
      Value len = operandDim(b, loc, input, dim, comm, root);
      total = arith::IndexCastOp::create(b, loc, b.getI64Type(), len);
      rt.call(b, loc, RuntimeFn::muon_rt_chunk_extents,
              {total, rt.i64Table(b, loc, w), e.table});
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
                                 std::optional<int64_t> root) const {
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

  /// Calls `fn` with `args` and the async flag (1 when `op` has a token):
  /// the result held in `buf`, and the request standing for the token.
  SmallVector<Value> callWithToken(OpBuilder &b, Location loc, Operation *op,
                                   RuntimeFn fn, SmallVector<Value> args,
                                   Value buf, RankedTensorType outT) const {
    bool async = op->getNumResults() > 1;
    args.push_back(RuntimeCalls::i64(b, loc, async ? 1 : 0));
    Value request = rt.callValue(b, loc, fn, args);
    SmallVector<Value> results{RuntimeCalls::tensorOf(b, loc, buf, outT)};
    if (async)
      results.push_back(request);
    return results;
  }

  /// A collective over a split dim: gather-like (`gathering`) or
  /// scatter-like. Emits the call with `extra` arguments after the dim;
  /// returns the result, and the request when the op has a token.
  SmallVector<Value> splitCollective(OpBuilder &b, Operation *op, Value input,
                        RuntimeFn fn, int64_t dim, bool gathering,
                        std::optional<ArrayRef<int64_t>> sizes,
                        std::optional<ArrayRef<int64_t>> weights,
                        ArrayRef<int64_t> extra,
                        std::optional<int64_t> root = std::nullopt) const {
    Location loc = op->getLoc();
    auto inT = cast<RankedTensorType>(input.getType());
    auto outT = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t length = gathering ? outT.getDimSize(dim) : inT.getDimSize(dim);
    Value comm = comms.lookup(op);
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
    return callWithToken(b, loc, op, fn, args, buf, outT);
  }

  /// A collective whose result has the operand's shape; returns the
  /// result, and the request when the op has a token.
  SmallVector<Value>
  sameShapeCollective(OpBuilder &b, Operation *op, Value input, RuntimeFn fn,
                      ArrayRef<int64_t> extra,
                      std::optional<int64_t> root = std::nullopt) const {
    Location loc = op->getLoc();
    auto outT = cast<RankedTensorType>(op->getResult(0).getType());
    Value comm = comms.lookup(op);
    SmallVector<Value> dyn;
    for (int64_t d = 0; d < outT.getRank(); ++d)
      if (outT.isDynamicDim(d))
        dyn.push_back(operandDim(b, loc, input, d, comm, root));
    auto [buf, out] = RuntimeCalls::allocate(b, loc, outT, dyn);
    SmallVector<Value> args{comm, RuntimeCalls::unrankedBufferOf(b, loc, input),
                            out};
    for (int64_t v : extra)
      args.push_back(RuntimeCalls::i64(b, loc, v));
    return callWithToken(b, loc, op, fn, args, buf, outT);
  }

  RuntimeCalls &rt;
  CommunicatorTable &comms;
};

/// A pattern for one dist op, with the shared lowering at hand. It applies
/// only where the communicator table has the op's communicator (the
/// function was prepared by CommunicatorTable::createFor).
template <typename Op>
struct DistPattern : OpConversionPattern<Op> {
  using Adaptor = typename OpConversionPattern<Op>::OpAdaptor;
  DistPattern(MLIRContext *ctx, const CollectiveLowering &lowering)
      : OpConversionPattern<Op>(ctx), lowering(lowering) {}

  LogicalResult
  matchAndRewrite(Op op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (needsCommunicator() && !lowering.comms.lookup(op))
      return rewriter.notifyMatchFailure(op, "no communicator prepared");
    return lower(op, adaptor, rewriter);
  }
  virtual bool needsCommunicator() const { return true; }
  virtual LogicalResult lower(Op op, Adaptor adaptor,
                              ConversionPatternRewriter &rewriter) const = 0;

  CollectiveLowering lowering; // two references: cheap to copy
};

struct AllGatherToRuntime : DistPattern<AllGatherOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(AllGatherOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.splitCollective(
                               rewriter, op, adaptor.getInput(),
                               RuntimeFn::muon_rt_all_gather,
                               op.getGatherDim(), true, std::nullopt,
                               std::nullopt, {}));
    return success();
  }
};

struct GatherToRuntime : DistPattern<GatherOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(GatherOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, lowering.splitCollective(
                rewriter, op, adaptor.getInput(), RuntimeFn::muon_rt_gather,
                op.getGatherDim(), true, op.getSizes(), op.getWeights(),
                {static_cast<int64_t>(op.getRoot())}));
    return success();
  }
};

struct ScatterToRuntime : DistPattern<ScatterOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(ScatterOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t root = static_cast<int64_t>(op.getRoot());
    rewriter.replaceOp(
        op, lowering.splitCollective(
                rewriter, op, adaptor.getInput(), RuntimeFn::muon_rt_scatter,
                op.getScatterDim(), false, op.getSizes(), op.getWeights(),
                {root}, root));
    return success();
  }
};

struct ReduceScatterToRuntime : DistPattern<ReduceScatterOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(ReduceScatterOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, lowering.splitCollective(rewriter, op, adaptor.getInput(),
                                     RuntimeFn::muon_rt_reduce_scatter,
                                     op.getScatterDim(), false, op.getSizes(),
                                     op.getWeights(),
                                     {runtimeReduction(op.getReduction())}));
    return success();
  }
};

struct AllReduceToRuntime : DistPattern<AllReduceOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(AllReduceOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.sameShapeCollective(
                               rewriter, op, adaptor.getInput(),
                               RuntimeFn::muon_rt_all_reduce,
                               {runtimeReduction(op.getReduction())}));
    return success();
  }
};

struct BroadcastToRuntime : DistPattern<BroadcastOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(BroadcastOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t root = static_cast<int64_t>(op.getRoot());
    rewriter.replaceOp(op, lowering.sameShapeCollective(
                               rewriter, op, adaptor.getInput(),
                               RuntimeFn::muon_rt_broadcast, {root}, root));
    return success();
  }
};

struct AllToAllToRuntime : DistPattern<AllToAllOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(AllToAllOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outT = cast<RankedTensorType>(op.getResult().getType());
    auto [buf, out] = RuntimeCalls::allocate(rewriter, loc, outT, {});
    lowering.rt.call(
        rewriter, loc, RuntimeFn::muon_rt_all_to_all,
        {lowering.comms.lookup(op),
         RuntimeCalls::unrankedBufferOf(rewriter, loc, adaptor.getInput()),
         out, RuntimeCalls::i64(rewriter, loc, op.getSplitDim()),
         RuntimeCalls::i64(rewriter, loc, op.getConcatDim()),
         RuntimeCalls::i64(rewriter, loc, 0)});
    rewriter.replaceOp(op, RuntimeCalls::tensorOf(rewriter, loc, buf, outT));
    return success();
  }
};

/// The split dim of a batch item (-1: a broadcast item, whole tensors).
int64_t itemDim(GatherBatchOp op, size_t i) { return op.getDims()[i]; }
int64_t itemDim(ScatterBatchOp op, size_t i) { return op.getDims()[i]; }
int64_t itemDim(BroadcastBatchOp, size_t) { return -1; }

/// dist.gather_batch / dist.scatter_batch / dist.broadcast_batch: one batch
/// of runtime items ended by one exchange (muon_rt_batch_begin,
/// muon_rt_batch_item per item, muon_rt_batch_end). Each item's extents and
/// result buffer are made as for the single op just before its
/// muon_rt_batch_item, which copies the extents: items of one size share
/// the function's run-time extent table. `Kind` is the runtime's
/// MUON_RT_BATCH_*.
template <typename BatchOp, int64_t Kind>
struct BatchToRuntime : DistPattern<BatchOp> {
  static constexpr bool Gathering = Kind == MUON_RT_BATCH_GATHER;
  using DistPattern<BatchOp>::DistPattern;
  using Adaptor = typename DistPattern<BatchOp>::Adaptor;
  LogicalResult lower(BatchOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    const CollectiveLowering &l = this->lowering;
    Location loc = op.getLoc();
    Value comm = l.comms.lookup(op);
    Value batch =
        l.rt.callValue(rewriter, loc, RuntimeFn::muon_rt_batch_begin,
                       {comm, RuntimeCalls::i64(rewriter, loc, Kind)});
    SmallVector<std::pair<Value, RankedTensorType>> buffers;
    for (auto [i, input] : llvm::enumerate(adaptor.getInputs())) {
      auto outT = cast<RankedTensorType>(op.getResults()[i].getType());
      int64_t dim = itemDim(op, i);
      int64_t root = op.getRoots()[i];
      auto inT = cast<RankedTensorType>(input.getType());
      // A scatter's or broadcast's operand is meaningful on its root only.
      std::optional<int64_t> rootOfOperand =
          Gathering ? std::nullopt : std::optional<int64_t>(root);
      CollectiveLowering::Extents ext;
      if (dim >= 0) {
        int64_t length = Gathering ? outT.getDimSize(dim) : inT.getDimSize(dim);
        auto [sizes, weights] = op.getItemSplit(i);
        ext = l.extents(rewriter, loc, op, input, dim, Gathering, length, sizes,
                        weights, rootOfOperand);
      } else {
        ext.table = l.rt.i64Table(rewriter, loc, {}); // whole tensors
      }
      auto [buf, out] = RuntimeCalls::allocate(
          rewriter, loc, outT,
          l.resultSizes(rewriter, loc, outT, input, dim, ext, comm, Gathering,
                        rootOfOperand));
      l.rt.call(rewriter, loc, RuntimeFn::muon_rt_batch_item,
                {batch, RuntimeCalls::unrankedBufferOf(rewriter, loc, input),
                 out,
                 RuntimeCalls::i64(rewriter, loc, std::max<int64_t>(0, dim)),
                 RuntimeCalls::i64(rewriter, loc, root), ext.table});
      buffers.push_back({buf, outT});
    }
    // Asynchronous with a token: the token becomes the request handle.
    Value request = l.rt.callValue(
        rewriter, loc, RuntimeFn::muon_rt_batch_end,
        {batch, RuntimeCalls::i64(rewriter, loc, op.getToken() ? 1 : 0)});
    SmallVector<Value> results;
    for (auto [buf, outT] : buffers)
      results.push_back(RuntimeCalls::tensorOf(rewriter, loc, buf, outT));
    if (op.getToken())
      results.push_back(request);
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// dist.wait: one muon_rt_wait per token (request handle).
struct WaitToRuntime : DistPattern<WaitOp> {
  using DistPattern::DistPattern;
  bool needsCommunicator() const override { return false; }
  LogicalResult lower(WaitOp op, Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    for (Value request : adaptor.getTokens())
      lowering.rt.call(rewriter, op.getLoc(), RuntimeFn::muon_rt_wait,
                       {request});
    rewriter.eraseOp(op);
    return success();
  }
};

/// dist.completed_token: request 0, which muon_rt_wait treats as complete.
struct CompletedTokenToRuntime : DistPattern<CompletedTokenOp> {
  using DistPattern::DistPattern;
  bool needsCommunicator() const override { return false; }
  LogicalResult lower(CompletedTokenOp op, Adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, RuntimeCalls::i64(rewriter, op.getLoc(), 0));
    return success();
  }
};

struct RankToRuntime : DistPattern<RankOp> {
  using DistPattern::DistPattern;
  bool needsCommunicator() const override { return false; }
  LogicalResult lower(RankOp op, Adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value v = lowering.rt.callValue(rewriter, op.getLoc(),
                                    RuntimeFn::muon_rt_world_rank, {});
    rewriter.replaceOp(op, arith::IndexCastOp::create(
                               rewriter, op.getLoc(), rewriter.getIndexType(),
                               v));
    return success();
  }
};

struct CoordToRuntime : DistPattern<CoordOp> {
  using DistPattern::DistPattern;
  LogicalResult lower(CoordOp op, Adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.commRank(rewriter, op.getLoc(),
                                             lowering.comms.lookup(op)));
    return success();
  }
};

} // namespace

void muon::populateDistCollectiveToRuntimePatterns(
    RuntimeCalls &rt, CommunicatorTable &comms, RewritePatternSet &patterns) {
  CollectiveLowering lowering(rt, comms);
  patterns.add<AllGatherToRuntime, GatherToRuntime, ScatterToRuntime,
               ReduceScatterToRuntime, AllReduceToRuntime, BroadcastToRuntime,
               AllToAllToRuntime,
               BatchToRuntime<GatherBatchOp, MUON_RT_BATCH_GATHER>,
               BatchToRuntime<ScatterBatchOp, MUON_RT_BATCH_SCATTER>,
               BatchToRuntime<BroadcastBatchOp, MUON_RT_BATCH_BROADCAST>,
               WaitToRuntime,
               CompletedTokenToRuntime, RankToRuntime, CoordToRuntime>(
      patterns.getContext(), lowering);
}
