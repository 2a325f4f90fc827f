//===- LinalgToLoops.cpp - convert-linalg-to-loops where there is linalg --===//
//
// Why: after muon-outline-elementwise every linalg op of a step sits in a
// few small kernel functions; the step function itself, most of the
// module, has none. Upstream's `convert-linalg-to-loops` still hands the
// whole step function to the greedy rewrite driver, which tries to fold
// every op of it: a fifth of a second on a large step, for no rewrite.
// Functions without a linalg op are skipped; the others get upstream's pass
// unchanged (run as a dynamic pipeline on that function).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Passes.h"

namespace muon {
#define GEN_PASS_DEF_MUONLINALGTOLOOPS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

struct MuonLinalgToLoops
    : muon::impl::MuonLinalgToLoopsBase<MuonLinalgToLoops> {
  void runOnOperation() override {
    bool any = getOperation()
                   .walk([](linalg::LinalgOp) { return WalkResult::interrupt(); })
                   .wasInterrupted();
    if (!any)
      return;
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(createConvertLinalgToLoopsPass());
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace
