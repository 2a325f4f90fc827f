//===- StepShards.cpp - C API: what each rank of a step stores ------------===//
//
// The shapes of a step's parameters and the local shard of each tensor on a
// rank, from the step's facts (the layout library's arithmetic, as the
// compiler types the shards). Hosts that call a compiled step use them to
// cut their tensors.
//
//===----------------------------------------------------------------------===//

#include "muon-c/Step.h"

#include "NullOperation.h"

#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Dialect/Muon/IR/StepAnalysis.h"
#include "muon/Plan/ParamPlan.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"

#include <climits>
#include <cstdint>
#include <string>

using namespace mlir;
using ::muon::optim::StepOp;
namespace optim = ::muon::optim;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;

namespace {
constexpr intptr_t kNoParam = INTPTR_MIN;

/// The facts of `stepOp` when it is a step that plans, with `param` in
/// range (kNoParam: no parameter asked for); else a diagnostic and failure.
FailureOr<optim::StepFacts> factsOf(MlirOperation stepOp, intptr_t param,
                                    const char *what) {
  if (muon::capi::isNullOperation(stepOp, what))
    return failure();
  Operation *op = unwrap(stepOp);
  auto step = dyn_cast<StepOp>(op);
  if (!step)
    return op->emitError(what)
           << ": expected a 'muon.step', got '" << op->getName() << "'";
  if (param != kNoParam && (param < 0 || param >= step.getNumParams()))
    return step.emitOpError("has no parameter ")
           << param << " (it has " << step.getNumParams() << ")";
  return optim::analyzeStep(step);
}
} // namespace

/// Whether every output pointer is given; else a diagnostic naming the
/// first that is NULL.
static bool
given(MlirOperation step, const char *fn,
      std::initializer_list<std::pair<const char *, const void *>> outputs) {
  for (auto [name, pointer] : outputs)
    if (!pointer) {
      unwrap(step)->emitError(fn) << ": " << name << " is NULL";
      return false;
    }
  return true;
}

int64_t muonStepNumRanks(MlirOperation step) {
  FailureOr<optim::StepFacts> facts = factsOf(step, kNoParam, "muonStepNumRanks");
  return succeeded(facts) ? facts->mesh.numRanks() : -1;
}

intptr_t muonStepParamRank(MlirOperation step, intptr_t param) {
  FailureOr<optim::StepFacts> facts = factsOf(step, param, "muonStepParamRank");
  return succeeded(facts)
             ? static_cast<intptr_t>(facts->params[param].shape.size())
             : -1;
}

MlirLogicalResult muonStepParamName(MlirOperation stepOp, intptr_t param,
                                    MlirStringCallback callback,
                                    void *userData) {
  if (muonStepParamRank(stepOp, param) < 0)
    return mlirLogicalResultFailure();
  auto step = cast<StepOp>(unwrap(stepOp));
  std::string name;
  if (auto info = step.getParamInfoOf(param))
    name = info.getName().str();
  if (name.empty())
    name = "param" + std::to_string(param);
  if (callback)
    callback(wrap(llvm::StringRef(name)), userData);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult muonStepParamShape(MlirOperation step, intptr_t param,
                                     int64_t *shape) {
  FailureOr<optim::StepFacts> facts =
      factsOf(step, param, "muonStepParamShape");
  if (failed(facts) || !given(step, "muonStepParamShape", {{"shape", shape}}))
    return mlirLogicalResultFailure();
  for (int64_t s : facts->params[param].shape)
    *shape++ = s;
  return mlirLogicalResultSuccess();
}

intptr_t muonStepParamBlocks(MlirOperation step, intptr_t param, int64_t *dim,
                             int64_t *sizes) {
  FailureOr<optim::StepFacts> facts =
      factsOf(step, param, "muonStepParamBlocks");
  if (failed(facts))
    return -1;
  const plan::NsBlocks &blocks = facts->params[param].plan.blocks;
  if (dim)
    *dim = blocks.dim;
  if (sizes)
    for (int64_t s : blocks.sizes)
      *sizes++ = s;
  return static_cast<intptr_t>(blocks.sizes.size());
}

static bool rankInRange(MlirOperation step, optim::StepFacts &facts,
                        int64_t rank) {
  if (rank >= 0 && rank < facts.mesh.numRanks())
    return true;
  unwrap(step)->emitError("rank ")
      << rank << " is not a rank of mesh @"
      << facts.meshOp.getSymName()
      << ", which has " << facts.mesh.numRanks() << " ranks";
  return false;
}

MlirLogicalResult muonStepLocalShard(MlirOperation step, intptr_t param,
                                     MuonTensorKind kind, int64_t rank,
                                     int64_t *localShape,
                                     int64_t *localOffsets, bool *flattened,
                                     int64_t *computeShape,
                                     int64_t *computeOffsets) {
  FailureOr<optim::StepFacts> facts =
      factsOf(step, param, "muonStepLocalShard");
  if (failed(facts) || !rankInRange(step, *facts, rank) ||
      !given(step, "muonStepLocalShard",
             {{"localShape", localShape},
              {"localOffsets", localOffsets},
              {"flattened", flattened},
              {"computeShape", computeShape},
              {"computeOffsets", computeOffsets}}))
    return mlirLogicalResultFailure();
  if (kind != MuonTensorParam && kind != MuonTensorGrad &&
      kind != MuonTensorMomentum) {
    unwrap(step)->emitError("muonStepLocalShard: unknown tensor kind ")
        << static_cast<int>(kind);
    return mlirLogicalResultFailure();
  }
  const optim::ParamFacts &p = facts->params[param];
  const layout::Layout &l = kind == MuonTensorGrad ? p.gradLayout : p.layout;
  std::vector<int64_t> coords = facts->mesh.coords(rank);
  layout::LocalShard local = layout::localShard(p.shape, l, facts->mesh, coords);
  layout::LocalShard compute =
      layout::computeShard(p.shape, l, facts->mesh, coords);
  size_t dims = p.shape.size();
  for (size_t d = 0; d < dims; ++d) {
    localShape[d] = d < local.shape.size() ? local.shape[d] : 0;
    localOffsets[d] = d < local.offsets.size() ? local.offsets[d] : 0;
    computeShape[d] = compute.shape[d];
    computeOffsets[d] = compute.offsets[d];
  }
  *flattened = local.flattened;
  return mlirLogicalResultSuccess();
}

int muonStepRankHoldsParam(MlirOperation step, intptr_t param,
                           int64_t rank) {
  FailureOr<optim::StepFacts> facts =
      factsOf(step, param, "muonStepRankHoldsParam");
  if (failed(facts) || !rankInRange(step, *facts, rank))
    return -1;
  return plan::inGroup(facts->params[param].plan,
                               facts->mesh.coords(rank))
             ? 1
             : 0;
}

MlirLogicalResult muonStepPartialTerm(MlirOperation step, intptr_t param,
                                      int64_t rank, int64_t *term,
                                      int64_t *terms, double *scale) {
  FailureOr<optim::StepFacts> facts =
      factsOf(step, param, "muonStepPartialTerm");
  if (failed(facts) || !rankInRange(step, *facts, rank) ||
      !given(step, "muonStepPartialTerm",
             {{"term", term}, {"terms", terms}, {"scale", scale}}))
    return mlirLogicalResultFailure();
  layout::PartialTerms t = layout::partialTerms(
      facts->params[param].gradLayout, facts->mesh, facts->mesh.coords(rank));
  *term = t.index;
  *terms = t.count;
  *scale = t.scale;
  return mlirLogicalResultSuccess();
}
