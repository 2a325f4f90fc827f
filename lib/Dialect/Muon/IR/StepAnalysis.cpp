//===- StepAnalysis.cpp - The plan of every parameter of a muon.step ------===//

#include "muon/Dialect/Muon/IR/StepAnalysis.h"

using namespace mlir;
using namespace ::muon::optim;
namespace dist = ::muon::dist;
namespace layout = ::muon::layout;
namespace plan = ::muon::plan;

FailureOr<StepFacts> muon::optim::analyzeStep(StepOp step,
                                             SymbolTableCollection *tables) {
  // Planning reads layouts; a global-view step has none yet.
  if (step.isGlobalView())
    return step.emitOpError(
        "is a global-view step (plain tensor operands) and has no layouts to "
        "plan; run convert-shard-to-dist first, which gives each operand the "
        "!dist.tensor type of its shard annotation");
  StepFacts facts;
  auto p0 = cast<dist::DistTensorType>(step.getParams()[0].getType());
  facts.meshOp = dist::lookupMesh(step, p0.getMesh(), tables);
  if (!facts.meshOp)
    return step.emitOpError("unknown mesh ") << p0.getMesh();
  facts.mesh = dist::toLayoutMesh(facts.meshOp);
  for (int64_t i = 0, e = step.getNumParams(); i < e; ++i) {
    ParamFacts pf;
    pf.type = cast<dist::DistTensorType>(step.getParams()[i].getType());
    pf.shape.assign(pf.type.getShape().begin(), pf.type.getShape().end());
    FailureOr<layout::Layout> l = dist::toLayout(
        pf.type.getLayout(), facts.meshOp, step,
        [&] { return step.emitOpError(); }, tables);
    if (failed(l))
      return failure();
    pf.layout = *l;
    auto gradType = cast<dist::DistTensorType>(step.getGrads()[i].getType());
    FailureOr<layout::Layout> gl = dist::toLayout(
        gradType.getLayout(), facts.meshOp, step,
        [&] { return step.emitOpError(); }, tables);
    if (failed(gl))
      return failure();
    pf.gradLayout = *gl;

    ParamAttr info = step.getParamInfoOf(i);
    plan::LocalTo local;
    if (info.isLocal()) {
      local.axis = facts.meshOp.getAxisIndex(info.getAxis().getValue());
      if (local.axis < 0)
        return step.emitOpError("parameter ")
               << step.describeParam(i) << " is annotated "
               << stringifyLocalKind(info.getKind()) << " = "
               << info.getAxis().getValue() << "[" << info.getIndex()
               << "], but mesh " << p0.getMesh() << " has no axis '"
               << info.getAxis().getValue() << "'";
      local.index = info.getIndex();
    }
    plan::NsBlocks blocks;
    if (info.isSplit()) {
      blocks.dim = info.getSplitDim();
      blocks.sizes.assign(info.getSplitSizes().begin(),
                          info.getSplitSizes().end());
    }
    std::string err = plan::planParam(pf.shape, pf.layout, facts.mesh, local,
                                      pf.plan, blocks);
    if (!err.empty())
      return step.emitOpError("parameter ") << step.describeParam(i) << " "
                                            << err;
    facts.params.push_back(std::move(pf));
  }
  return facts;
}
