//===- ConvertShardToDist.cpp - Import a shard-annotated module -----------===//
//
// Each shard.grid becomes a dist.mesh of the same name. In each function,
// an argument annotated by `shard.shard %arg to %s` takes the !dist.tensor
// type of %s; an annotation of a value that already has a layout is either
// the same layout (nothing to do) or, with annotate_for_users, a
// dist.redistribute to the layout its users want. A global-view muon.step
// is rebuilt on the imported values, and the function returns the imported
// values. The upstream uses the shard dialect leaves undefined (two
// different shardings for one value) are errors, as is every use of an
// annotated value by an op that could not take a !dist.tensor.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/ShardToDist/ShardToDist.h"
#include "muon/Dialect/Dist/IR/DistTypes.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Support/VerifyPassOutput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Verifier.h"

namespace muon {
#define GEN_PASS_DEF_CONVERTSHARDTODIST
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;
namespace dist = ::muon::dist;
using ::muon::dist::DistTensorType;
using ::muon::optim::StepOp;

namespace {
bool isShardOp(Operation *op) {
  return isa_and_nonnull<shard::ShardDialect>(op->getDialect());
}

/// Ops that may use a value the import gives a !dist.tensor type.
bool takesImportedValues(Operation *user) {
  if (auto step = dyn_cast<StepOp>(user))
    return step.isGlobalView();
  return isa<shard::ShardOp, func::ReturnOp>(user);
}

/// "the gradient of parameter #0 ('w')", for operand `index` of `step`.
std::string describeStepOperand(StepOp step, unsigned index) {
  int64_t n = step.getNumParams();
  if (index >= 3 * n)
    return "operand #" + std::to_string(index);
  static const char *roles[] = {"parameter", "gradient", "momentum buffer"};
  std::string s = roles[index / n];
  if (index / n != 0)
    s += " of parameter";
  return s + " " + step.describeParam(index % n);
}

/// Imports the annotations and global-view steps of one function body.
class FunctionImport {
public:
  FunctionImport(func::FuncOp fn,
                 const llvm::DenseMap<StringAttr, dist::MeshOp> &meshes,
                 SymbolTableCollection &tables)
      : fn(fn), meshes(meshes), tables(tables) {}

  LogicalResult run() {
    Block &body = fn.getBody().front();
    for (BlockArgument arg : body.getArguments())
      if (isa<RankedTensorType>(arg.getType()) && failed(importArgument(arg)))
        return failure();
    for (Operation &op : body) {
      LogicalResult ok = success();
      if (auto sh = dyn_cast<shard::ShardOp>(op))
        ok = importAnnotation(sh);
      else if (auto step = dyn_cast<StepOp>(op); step && step.isGlobalView())
        ok = importStep(step);
      else if (auto ret = dyn_cast<func::ReturnOp>(op))
        importReturn(ret);
      if (failed(ok))
        return failure();
    }
    // Replaced values are used only by ops replaced later: erase those
    // first. Shardings then have no users left.
    for (Operation *op : llvm::reverse(replaced)) {
      for (Value r : op->getResults())
        r.replaceAllUsesWith(imported.lookup(r));
      op->erase();
    }
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<shard::ShardingOp>(op) && op.use_empty())
        op.erase();
    fn.setType(FunctionType::get(fn.getContext(), body.getArgumentTypes(),
                                 body.getTerminator()->getOperandTypes()));
    return success();
  }

private:
  /// The !dist.tensor type that annotation `sh` gives its value, computed
  /// once (an argument's annotations are read for the argument and again
  /// when imported).
  FailureOr<DistTensorType> typeOf(shard::ShardOp sh) {
    if (DistTensorType known = types.lookup(sh))
      return known;
    FailureOr<DistTensorType> type = computeTypeOf(sh);
    if (succeeded(type))
      types[sh] = *type;
    return type;
  }

  FailureOr<DistTensorType> computeTypeOf(shard::ShardOp sh) {
    auto emit = [&] { return sh.emitOpError(); };
    auto sharding = sh.getSharding().getDefiningOp<shard::ShardingOp>();
    if (!sharding)
      return emit() << "takes a sharding that no shard.sharding op defines; "
                       "the import reads static shard.sharding ops";
    auto mesh = meshes.lookup(sharding.getGridAttr().getAttr());
    if (!mesh)
      return emit() << "has a sharding on grid " << sharding.getGridAttr()
                    << ", which is not a shard.grid of this module";
    auto type = cast<RankedTensorType>(sh.getResult().getType());
    if (!type.hasStaticShape())
      return emit() << "annotates a tensor of dynamic shape " << type
                    << "; dist tensors have static shapes";
    FailureOr<dist::LayoutAttr> layout =
        muon::importSharding(sharding, type.getShape(), mesh, emit);
    if (failed(layout))
      return failure();
    return DistTensorType::get(fn.getContext(), type.getShape(),
                               type.getElementType(), *layout);
  }

  /// Every use of `value` (about to become a !dist.tensor) must take one.
  LogicalResult checkUsers(Value value, StringRef what) {
    for (Operation *user : value.getUsers())
      if (!takesImportedValues(user))
        return user->emitOpError("uses ")
               << what
               << ", which the import gives a !dist.tensor type; only "
                  "shard.shard, a global-view muon.step and func.return may "
                  "use an annotated value";
    return success();
  }

  /// An argument takes the sharding of its own annotation (shard.shard
  /// without annotate_for_users), else the one its users all ask for.
  LogicalResult importArgument(BlockArgument arg) {
    std::string what = "argument #" + std::to_string(arg.getArgNumber());
    // `disagreeing`: an annotate_for_users annotation that differs from the
    // first one, an error unless the argument has a sharding of its own.
    shard::ShardOp own, forUsers, disagreeing;
    DistTensorType ownType, usersType;
    // In program order, so that "the first" annotation reads as such.
    SmallVector<shard::ShardOp> annotations;
    for (Operation *user : arg.getUsers())
      if (auto sh = dyn_cast<shard::ShardOp>(user))
        annotations.push_back(sh);
    llvm::sort(annotations, [](shard::ShardOp a, shard::ShardOp b) {
      return a->isBeforeInBlock(b);
    });
    for (shard::ShardOp sh : annotations) {
      FailureOr<DistTensorType> type = typeOf(sh);
      if (failed(type))
        return failure();
      if (!sh.getAnnotateForUsers()) {
        if (own && *type != ownType) {
          InFlightDiagnostic diag =
              sh.emitOpError("gives ")
              << what
              << " a second sharding, different from its first (the shard "
                 "dialect leaves this undefined); add annotate_for_users to "
                 "redistribute it for this annotation's users";
          diag.attachNote(own.getLoc()) << "the first sharding";
          return diag;
        }
        own = sh;
        ownType = *type;
      } else if (!forUsers) {
        forUsers = sh;
        usersType = *type;
      } else if (*type != usersType && !own) {
        // Decided below: fine if the argument has a sharding of its own.
        disagreeing = sh;
      }
    }
    if (!own && !forUsers) {
      for (OpOperand &use : arg.getUses())
        if (auto step = dyn_cast<StepOp>(use.getOwner());
            step && step.isGlobalView() &&
            use.getOperandNumber() < 3 * step.getNumParams())
          return step.emitOpError("takes ")
                 << what << " as its "
                 << describeStepOperand(step, use.getOperandNumber())
                 << ", which has no shard annotation; annotate it with "
                    "shard.shard so the import knows its layout";
      return success();
    }
    if (!own && disagreeing) {
      InFlightDiagnostic diag =
          disagreeing.emitOpError("asks for a sharding of ")
          << what
          << " different from the first annotate_for_users one, and the "
             "argument has no sharding of its own; annotate it once without "
             "annotate_for_users";
      diag.attachNote(forUsers.getLoc()) << "the first annotate_for_users";
      return diag;
    }
    if (failed(checkUsers(arg, what)))
      return failure();
    arg.setType(own ? ownType : usersType);
    imported[arg] = arg;
    return success();
  }

  LogicalResult importAnnotation(shard::ShardOp sh) {
    Value src = sh.getSrc();
    Value from = imported.lookup(src);
    if (!from) {
      Operation *def = src.getDefiningOp();
      return sh.emitOpError("annotates a value defined by ")
             << (def ? "'" + def->getName().getStringRef().str() + "'"
                     : std::string("a block argument of a nested region"))
             << "; the import gives layouts to function arguments, "
                "global-view muon.step results and annotations of those";
    }
    FailureOr<DistTensorType> type = typeOf(sh);
    if (failed(type) ||
        failed(checkUsers(sh.getResult(), "an annotated value")))
      return failure();
    auto fromType = cast<DistTensorType>(from.getType());
    replaced.push_back(sh);
    if (sh.getAnnotateForUsers())
      usersAnnotations.insert(sh.getResult());
    if (*type == fromType) {
      imported[sh.getResult()] = from;
      return success();
    }
    if (!sh.getAnnotateForUsers())
      return sh.emitOpError("gives its value a sharding different from the "
                            "layout it already has, ")
             << fromType.getLayout()
             << " (the shard dialect leaves this undefined); add "
                "annotate_for_users to redistribute it for this "
                "annotation's users";
    if (usersAnnotations.contains(src))
      return sh.emitOpError("annotates for its users a value that an "
                            "annotate_for_users annotation produced, with a "
                            "different sharding (the shard dialect leaves "
                            "this undefined)");
    OpBuilder b(sh);
    Value moved = dist::RedistributeOp::create(b, sh.getLoc(), *type, from);
    imported[sh.getResult()] = moved;
    return success();
  }

  /// The step again, on imported operands; its results keep the layouts
  /// of the parameters and momenta.
  LogicalResult importStep(StepOp step) {
    SmallVector<Value> operands;
    for (OpOperand &use : step->getOpOperands()) {
      Value v = use.get();
      if (!isa<RankedTensorType>(v.getType())) {
        operands.push_back(v); // lr / weight_decay
        continue;
      }
      Value from = imported.lookup(v);
      if (!from)
        return step.emitOpError("takes as its ")
               << describeStepOperand(step, use.getOperandNumber())
               << " a value with no shard annotation; annotate it with "
                  "shard.shard so the import knows its layout";
      operands.push_back(from);
    }
    for (Value r : step->getResults())
      if (failed(checkUsers(r, "a result of a global-view muon.step")))
        return failure();
    OpBuilder b(step);
    auto rebuilt = cast<StepOp>(b.clone(*step));
    rebuilt->setOperands(operands);
    int64_t n = step.getNumParams();
    for (int64_t i = 0; i < n; ++i) {
      rebuilt.getNewParams()[i].setType(operands[i].getType());
      rebuilt.getNewMomenta()[i].setType(operands[2 * n + i].getType());
    }
    replaced.push_back(step);
    for (auto [old, now] : llvm::zip(step->getResults(), rebuilt->getResults()))
      imported[old] = now;
    // The layouts met here for the first time: the step's own rules
    // (gradient and momentum layouts against the parameter's) apply now.
    if (failed(mlir::verify(rebuilt)) ||
        failed(rebuilt.verifySymbolUses(tables)))
      return failure();
    return success();
  }

  void importReturn(func::ReturnOp ret) {
    for (OpOperand &use : ret->getOpOperands())
      if (Value v = imported.lookup(use.get()))
        use.set(v);
  }

  func::FuncOp fn;
  const llvm::DenseMap<StringAttr, dist::MeshOp> &meshes;
  SymbolTableCollection &tables;
  /// Each annotated value (argument, annotation or step result) -> the
  /// value with its !dist.tensor type.
  llvm::DenseMap<Value, Value> imported;
  /// The results of annotate_for_users annotations (before import): one
  /// annotated for its users again with another layout is undefined.
  llvm::DenseSet<Value> usersAnnotations;
  /// The type each annotation gives its value (typeOf).
  llvm::DenseMap<Operation *, DistTensorType> types;
  /// Annotations and steps to erase once their values are imported.
  SmallVector<Operation *> replaced;
};

/// The mesh a grid becomes: same name, sizes, and the axis names of its
/// dist.axis_names attribute (default a0, a1, ...).
FailureOr<dist::MeshOp> importGrid(shard::GridOp grid) {
  ArrayRef<int64_t> shape = grid.getShape();
  for (auto [i, size] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(size))
      return grid.emitOpError("has a dynamic size on axis ")
             << i << "; a dist mesh needs static sizes";
  MLIRContext *ctx = grid.getContext();
  SmallVector<Attribute> names;
  if (Attribute attr = grid->getAttr(muon::kAxisNamesAttr)) {
    auto array = dyn_cast<ArrayAttr>(attr);
    if (!array || array.size() != shape.size() ||
        !llvm::all_of(array, [](Attribute a) {
          auto s = dyn_cast<StringAttr>(a);
          return s && !s.getValue().empty();
        }))
      return grid.emitOpError("has ")
             << muon::kAxisNamesAttr << " = " << attr << "; expected "
             << shape.size() << " non-empty strings, one per grid axis";
    names.assign(array.begin(), array.end());
  } else {
    for (size_t i = 0; i < shape.size(); ++i)
      names.push_back(StringAttr::get(ctx, "a" + std::to_string(i)));
  }
  OpBuilder b(grid);
  auto mesh = dist::MeshOp::create(b, grid.getLoc(), grid.getSymNameAttr(),
                                   b.getArrayAttr(names),
                                   b.getDenseI64ArrayAttr(shape),
                                   DenseI64ArrayAttr());
  if (failed(mesh.verify())) {
    mesh.erase();
    return failure();
  }
  return mesh;
}
} // namespace

LogicalResult muon::importShardAnnotations(ModuleOp module) {
  SmallVector<shard::GridOp> grids;
  llvm::SetVector<func::FuncOp> functions;
  WalkResult walk = module.walk([&](Operation *op) {
    auto step = dyn_cast<StepOp>(op);
    bool globalStep = step && step.isGlobalView();
    if (!isShardOp(op) && !globalStep)
      return WalkResult::advance();
    if (auto grid = dyn_cast<shard::GridOp>(op)) {
      grids.push_back(grid);
      return WalkResult::advance();
    }
    if (!isa<shard::ShardingOp, shard::ShardOp>(op) && !globalStep) {
      op->emitOpError("has no counterpart in dist; convert-shard-to-dist "
                      "imports shard.grid, shard.sharding and shard.shard "
                      "(the annotations), not shard's collectives or "
                      "queries");
      return WalkResult::interrupt();
    }
    auto fn = dyn_cast<func::FuncOp>(op->getParentOp());
    if (!fn || op->getBlock() != &fn.getBody().front()) {
      op->emitOpError("sits in '")
          << op->getParentOp()->getName()
          << "'; convert-shard-to-dist imports annotations and steps in a "
             "function's body block";
      return WalkResult::interrupt();
    }
    if (auto sharding = dyn_cast<shard::ShardingOp>(op))
      for (Operation *user : sharding->getUsers())
        if (!isa<shard::ShardOp>(user)) {
          user->emitOpError("uses a !shard.sharding value; the import "
                            "turns shardings into layouts and keeps no "
                            "sharding values");
          return WalkResult::interrupt();
        }
    functions.insert(fn);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Every grid first: the annotations read the meshes. The grids go at
  // once, so that symbol lookups find the mesh of that name.
  llvm::DenseMap<StringAttr, dist::MeshOp> meshes;
  for (shard::GridOp grid : grids) {
    FailureOr<dist::MeshOp> mesh = importGrid(grid);
    if (failed(mesh))
      return failure();
    meshes[grid.getSymNameAttr()] = *mesh;
  }
  for (shard::GridOp grid : grids)
    grid.erase();

  SymbolTableCollection tables;
  for (func::FuncOp fn : functions) {
    if (!SymbolTable::symbolKnownUseEmpty(fn, module))
      return fn.emitOpError("holds shard annotations or a global-view "
                            "muon.step and is called; the import changes "
                            "its signature and does not rewrite calls, so "
                            "import a function no other function calls");
    if (failed(FunctionImport(fn, meshes, tables).run()))
      return failure();
  }
  return success();
}

namespace {
struct ConvertShardToDistPass
    : muon::impl::ConvertShardToDistBase<ConvertShardToDistPass> {
  void runOnOperation() override {
    if (failed(muon::importShardAnnotations(getOperation())) ||
        failed(muon::verifyPassOutput(getOperation(), getArgument())))
      signalPassFailure();
  }
};
} // namespace
