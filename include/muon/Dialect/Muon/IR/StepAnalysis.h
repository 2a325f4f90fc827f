//===- StepAnalysis.h - The plan of every parameter of a muon.step -*- C++ -*-//
//
// One place that turns a muon.step's types and annotations into
// muon::plan::ParamPlans; the verifier, the passes and the report use it.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_MUON_IR_STEPANALYSIS_H
#define MUON_DIALECT_MUON_IR_STEPANALYSIS_H

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Plan/ParamPlan.h"

namespace muon {
namespace optim {

struct ParamFacts {
  dist::DistTensorType type;
  std::vector<int64_t> shape;
  layout::Layout layout;
  layout::Layout gradLayout;
  plan::ParamPlan plan;
};

struct StepFacts {
  dist::MeshOp meshOp;
  layout::Mesh mesh;
  std::vector<ParamFacts> params;
};

/// Plans every parameter of `step`. Its operand types must already verify
/// against their mesh; planning errors (e.g. an EP/PP annotation that
/// contradicts the layout) are emitted on the op.
mlir::FailureOr<StepFacts>
analyzeStep(StepOp step, mlir::SymbolTableCollection *tables = nullptr);

} // namespace optim
} // namespace muon

#endif // MUON_DIALECT_MUON_IR_STEPANALYSIS_H
