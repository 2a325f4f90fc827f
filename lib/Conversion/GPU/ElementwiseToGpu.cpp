//===- ElementwiseToGpu.cpp - The step's elementwise ops as GPU kernels ---===//
//
// target=cuda keeps every tensor of the step in device memory, so the
// elementwise work (momentum, the Nesterov mix, the update with weight
// decay, the scaling of split parameters, and the copies between buffers)
// must run on the device. Each such op becomes a launch of a kernel in the
// module's `gpu.module @muon_kernels`, on the runtime's compute stream (the
// stream Newton-Schulz and the collectives are ordered on), so nothing
// waits between them; kernels that print the same share one, as the host
// kernels of target=cpu do (KernelForms.h).
//
// A kernel is a grid-stride loop over the op's iteration space. When every
// operand is contiguous and indexed by the identity, the loop walks the
// elements linearly; otherwise each linear index is split into the op's
// loop indices and each operand is indexed through its map.
//
//===----------------------------------------------------------------------===//

#include "../Bufferization/KernelForms.h"
#include "muon/Conversion/Passes.h"
#include "muon/Conversion/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"

namespace muon {
#define GEN_PASS_DEF_MUONELEMENTWISETOGPU
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kKernelModule = "muon_kernels";
/// Threads per block, and the most blocks a launch asks for: a grid-stride
/// loop covers the rest, and a bounded grid keeps index math in range.
constexpr int64_t kThreads = 256;
constexpr int64_t kMaxBlocks = 65536;

/// Why `op` cannot be a kernel of this pass, or empty: every loop parallel
/// and every operand indexed by a projected permutation of the loops.
std::string unsupported(linalg::GenericOp op) {
  for (utils::IteratorType t : op.getIteratorTypesArray())
    if (t != utils::IteratorType::parallel)
      return "has a reduction loop";
  // The kernel recovers the loop indices itself; the body's own queries of
  // them would be left outside any linalg op.
  if (!op.getBody()->getOps<linalg::IndexOp>().empty())
    return "reads its loop indices (linalg.index)";
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return "indexes an operand by " + [&] {
        std::string s;
        llvm::raw_string_ostream os(s);
        map.print(os);
        return s;
      }();
  return {};
}

/// `memref.copy` as the elementwise op it is.
LogicalResult copyToGeneric(memref::CopyOp copy, RewriterBase &rewriter) {
  auto source = dyn_cast<MemRefType>(copy.getSource().getType());
  auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
  if (!source || !target)
    return copy.emitError("muon-elementwise-to-gpu: a copy of unranked "
                          "buffers cannot run as a GPU kernel");
  rewriter.setInsertionPoint(copy);
  AffineMap id = rewriter.getMultiDimIdentityMap(source.getRank());
  SmallVector<utils::IteratorType> loops(source.getRank(),
                                         utils::IteratorType::parallel);
  linalg::GenericOp::create(
      rewriter, copy.getLoc(), ValueRange{copy.getSource()},
      ValueRange{copy.getTarget()}, ArrayRef<AffineMap>{id, id}, loops,
      [](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, args[0]);
      });
  rewriter.eraseOp(copy);
  return success();
}

struct MuonElementwiseToGpu
    : muon::impl::MuonElementwiseToGpuBase<MuonElementwiseToGpu> {
  using KernelsByHash = muon::KernelsByForm<gpu::GPUFuncOp>;

  using MuonElementwiseToGpuBase::MuonElementwiseToGpuBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!chip.empty() && !muon::isKnownCudaChip(chip)) {
      // At the module's location, without the module printed after it.
      emitError(module.getLoc(), "muon-elementwise-to-gpu: chip '")
          << chip
          << "' is not a GPU architecture LLVM's NVPTX backend knows (e.g. "
             "sm_90, sm_90a)";
      return signalPassFailure();
    }
    if (failed(toGenerics(module)))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> ops;
    bool ok = true;
    module.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics() || !op->getParentOfType<func::FuncOp>())
        return;
      if (std::string why = unsupported(op); !why.empty()) {
        op.emitError("muon-elementwise-to-gpu: this op ")
            << why << ", which no GPU kernel of target=cuda computes";
        ok = false;
        return;
      }
      if (op->getParentOfType<ModuleOp>() != module) {
        op.emitError("muon-elementwise-to-gpu: target=cuda compiles steps of "
                     "the top-level module only; this op is in a nested "
                     "module");
        ok = false;
        return;
      }
      ops.push_back(op);
    });
    // The runtime allocates the step's heap buffers in device memory,
    // where host code cannot read them.
    module.walk([&](memref::AllocOp alloc) {
      if (!isa<FloatType>(alloc.getType().getElementType())) {
        alloc.emitError("muon-elementwise-to-gpu: target=cuda allocates "
                        "every heap buffer of a step in device memory, "
                        "which host code cannot read; this one holds ")
            << alloc.getType().getElementType();
        ok = false;
      }
    });
    if (!ok)
      return signalPassFailure();
    llvm::DenseMap<Operation *, Value> streams;
    if (failed(markSteps(module, streams)))
      return signalPassFailure();
    if (ops.empty())
      return;
    // The file gpu-module-to-binary links the kernels with; without it
    // upstream reports an error and then compiles all the same. A module
    // without kernels needs no toolkit.
    constexpr llvm::StringLiteral libdevice = "nvvm/libdevice/libdevice.10.bc";
    if (!cudaPath.empty() &&
        !llvm::sys::fs::exists(cudaPath + "/" + libdevice.str())) {
      emitError(module.getLoc(), "muon-elementwise-to-gpu: the CUDA toolkit '")
          << cudaPath << "' has no " << libdevice
          << " (target=cuda links the kernels with it): point "
             "$MUON_CUDA_PATH (or $CUDA_HOME, $CUDA_PATH) at the toolkit's "
             "directory";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
    auto kernels = kernelModule(module, symbols);
    SymbolTable kernelSymbols(kernels);
    KernelsByHash byForm;
    for (linalg::GenericOp op : ops)
      outline(op, kernels, kernelSymbols, byForm,
              streams.lookup(op->getParentOfType<func::FuncOp>()));
  }

  /// Every function with a body of the module runs as a target=cuda step:
  /// muon_rt_cuda_step_begin first (its result is the stream kernels are
  /// launched on, kept in `streams`), muon_rt_cuda_step_end before each
  /// return.
  static LogicalResult markSteps(ModuleOp module,
                                 llvm::DenseMap<Operation *, Value> &streams) {
    SmallVector<func::FuncOp> fns;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        fns.push_back(fn);
    muon::RuntimeCalls rt(module);
    for (func::FuncOp fn : fns) {
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      streams[fn] = rt.callValue(b, fn.getLoc(),
                                 muon::RuntimeFn::muon_rt_cuda_step_begin, {});
      fn.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        rt.call(b, ret.getLoc(), muon::RuntimeFn::muon_rt_cuda_step_end, {});
      });
    }
    return failure(rt.failed());
  }

  /// Copies and named linalg ops (fill, mul, ...) become linalg.generic.
  LogicalResult toGenerics(ModuleOp module) {
    SmallVector<Operation *> work;
    module.walk([&](Operation *op) {
      if (!op->getParentOfType<func::FuncOp>())
        return;
      if (isa<memref::CopyOp>(op))
        work.push_back(op);
      else if (auto named = dyn_cast<linalg::LinalgOp>(op);
               named && !isa<linalg::GenericOp>(op) &&
               named.hasPureBufferSemantics())
        work.push_back(op);
    });
    IRRewriter rewriter(module.getContext());
    for (Operation *op : work) {
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        if (failed(copyToGeneric(copy, rewriter)))
          return failure();
        continue;
      }
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter,
                                           cast<linalg::LinalgOp>(op))))
        return op->emitError("muon-elementwise-to-gpu: this op has no "
                             "linalg.generic form to run as a GPU kernel");
    }
    return success();
  }

  /// The module's `gpu.module @muon_kernels`, made when missing.
  static gpu::GPUModuleOp kernelModule(ModuleOp module, SymbolTable &symbols) {
    if (auto existing = symbols.lookup<gpu::GPUModuleOp>(kKernelModule))
      return existing;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    symbols.insert(kernels);
    return kernels;
  }

  /// The extent of each loop of `op`, and their product (the number of
  /// iterations; 1 for an op without loops).
  static Value loopSizes(linalg::GenericOp op, OpBuilder &b,
                         SmallVectorImpl<Value> &sizes) {
    Location loc = op.getLoc();
    for (Range r : cast<linalg::LinalgOp>(op.getOperation())
                       .createLoopRanges(b, loc))
      sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
    if (sizes.empty())
      return arith::ConstantIndexOp::create(b, loc, 1);
    Value n = sizes.front();
    for (Value size : ArrayRef<Value>(sizes).drop_front())
      n = arith::MulIOp::create(b, loc, n, size);
    return n;
  }

  /// Whether every operand is contiguous and indexed by the identity.
  static bool linear(linalg::GenericOp op) {
    for (AffineMap map : op.getIndexingMapsArray())
      if (!map.isIdentity())
        return false;
    for (Value v : op->getOperands())
      if (auto t = dyn_cast<MemRefType>(v.getType());
          !t || !t.getLayout().isIdentity())
        return false;
    return true;
  }

  /// The kernel body: a grid-stride loop running `op` (a clone in the
  /// kernel, erased here) one iteration per step.
  static void buildLoop(linalg::GenericOp op, OpBuilder &b) {
    Location loc = op.getLoc();
    SmallVector<Value> sizes;
    Value n = loopSizes(op, b, sizes);
    Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value threads = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
    Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value grid = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
    Value start = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, threads), thread);
    Value step = arith::MulIOp::create(b, loc, grid, threads);
    auto loop = scf::ForOp::create(b, loc, start, n, step);
    b.setInsertionPointToStart(loop.getBody());
    Value at = loop.getInductionVar();

    bool isLinear = linear(op);
    SmallVector<Value> operands(op->getOperands());
    // Loop indices from the linear one (innermost fastest).
    SmallVector<Value> ivs;
    if (isLinear) {
      for (Value &v : operands) {
        auto t = cast<MemRefType>(v.getType());
        if (t.getRank() <= 1)
          continue;
        ReassociationIndices all;
        for (int64_t d = 0; d < t.getRank(); ++d)
          all.push_back(d);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(loop);
        v = memref::CollapseShapeOp::create(b, loc, v,
                                            ArrayRef<ReassociationIndices>{all});
      }
    } else {
      ivs.resize(sizes.size());
      Value rest = at;
      for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
        ivs[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, sizes[d]);
        if (d > 0)
          rest = arith::DivUIOp::create(b, loc, rest, sizes[d]);
      }
    }
    auto indicesOf = [&](OpOperand &operand) {
      SmallVector<Value> idx;
      if (isLinear) {
        if (cast<MemRefType>(operands[operand.getOperandNumber()].getType())
                .getRank() == 1)
          idx.push_back(at);
        return idx;
      }
      for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
        idx.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
      return idx;
    };

    Block &payload = op.getRegion().front();
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (arg.use_empty())
        continue;
      // A scalar operand (what linalg.fill fills with) is its own value.
      if (!isa<MemRefType>(operand.get().getType())) {
        mapping.map(arg, operand.get());
        continue;
      }
      mapping.map(arg, memref::LoadOp::create(
                           b, loc, operands[operand.getOperandNumber()],
                           indicesOf(operand)));
    }
    for (Operation &inner : payload.without_terminator())
      b.clone(inner, mapping);
    auto yield = cast<linalg::YieldOp>(payload.getTerminator());
    for (auto [value, init] :
         llvm::zip(yield.getValues(), op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value),
                              operands[init.getOperandNumber()],
                              indicesOf(init));
    op.erase();
  }

  void outline(linalg::GenericOp op, gpu::GPUModuleOp kernels,
               SymbolTable &kernelSymbols, KernelsByHash &byForm,
               Value stream) {
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    SmallVector<Value> args(op->getOperands());
    args.append(captured.begin(), captured.end());
    SmallVector<Type> argTypes;
    for (Value v : args)
      argTypes.push_back(muon::generalisedKernelType(v.getType()));

    // The candidate kernel, built detached, compared with those kept.
    OpBuilder b(ctx);
    auto fn = gpu::GPUFuncOp::create(b, loc, "elementwise",
                                     FunctionType::get(ctx, argTypes, {}));
    fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
    Block &entry = fn.getBody().front();
    b.setInsertionPointToStart(&entry);
    IRMapping mapping;
    for (auto [v, arg] : llvm::zip(args, entry.getArguments()))
      mapping.map(v, arg);
    auto body = cast<linalg::GenericOp>(b.clone(*op, mapping));
    llvm::hash_code hash = KernelsByHash::hashOf(fn, body);
    buildLoop(body, b);
    b.setInsertionPointToEnd(&entry);
    gpu::ReturnOp::create(b, loc);
    gpu::GPUFuncOp shared = byForm.findEqual(fn, hash);
    if (shared) {
      fn.erase();
    } else {
      kernelSymbols.insert(fn); // renames it if the name is taken
      byForm.keep(fn, hash);
      shared = fn;
    }

    // The launch: enough blocks of kThreads for one iteration per thread,
    // at least one, at most kMaxBlocks.
    b.setInsertionPoint(op);
    SmallVector<Value> sizes;
    Value n = loopSizes(op, b, sizes);
    Value threads = arith::ConstantIndexOp::create(b, loc, kThreads);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value blocks = arith::CeilDivUIOp::create(b, loc, n, threads);
    blocks = arith::MaxUIOp::create(b, loc, blocks, one);
    blocks = arith::MinUIOp::create(
        b, loc, blocks, arith::ConstantIndexOp::create(b, loc, kMaxBlocks));
    SmallVector<Value> launchArgs;
    for (auto [v, t] : llvm::zip(args, argTypes))
      launchArgs.push_back(v.getType() == t
                               ? v
                               : memref::CastOp::create(b, loc, t, v)
                                     .getResult());
    gpu::LaunchFuncOp::create(
        b, loc, SymbolRefAttr::get(kernels.getNameAttr(),
                                   {FlatSymbolRefAttr::get(shared)}),
        gpu::KernelDim3{blocks, one, one}, gpu::KernelDim3{threads, one, one},
        /*dynamicSharedMemorySize=*/Value(), launchArgs,
        /*asyncObject=*/stream);
    op.erase();
  }
};
} // namespace
