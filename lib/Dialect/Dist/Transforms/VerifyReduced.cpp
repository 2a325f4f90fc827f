//===- VerifyReduced.cpp - The reduction obligation of `reduced` values ---===//
//
// A `reduced` value promises that its gradient is summed over the axis. The
// promise is lost, silently, where the local view rebuilds a layout that
// says `replicate`: the backward pass would treat the per-rank gradients as
// already reduced. This pass reports that, and the two other ways a
// declared layout can contradict the value (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "muon/Dialect/Dist/IR/DistLayout.h"
#include "muon/Dialect/Dist/Transforms/Passes.h"

namespace muon {
namespace dist {
#define GEN_PASS_DEF_DISTVERIFYREDUCED
#include "muon/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist
} // namespace muon

using namespace mlir;
using namespace muon;
using namespace muon::dist;

namespace {
void report(FromLocalOp op, const LayoutFinding &f, StringRef axis) {
  auto diag = op.emitError();
  switch (f.kind) {
  case LayoutFinding::Kind::DropsReduction:
    diag << "result is reduced over mesh axis '" << axis
         << "' (its gradient is partial there, to be summed) but its type "
            "declares replicate: the gradient would leave unreduced; declare "
            "it reduced (dist-propagate-reduced does) or reach replicate "
            "with dist.redistribute";
    return;
  case LayoutFinding::Kind::Varies:
    diag << "result differs between the ranks of mesh axis '" << axis
         << "' (a shard, a partial value or a storage piece not gathered or "
            "reduced over it) but its type declares it the same on every rank";
    return;
  case LayoutFinding::Kind::NotReduced:
    diag << "result type declares reduced on mesh axis '" << axis
         << "' but no reduced value reaches it over that axis: its gradient "
            "would be summed over ranks that already hold all of it";
    return;
  }
}

struct DistVerifyReducedPass
    : public ::muon::dist::impl::DistVerifyReducedBase<DistVerifyReducedPass> {
  using DistVerifyReducedBase::DistVerifyReducedBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyDistTypesIn(module)))
      return signalPassFailure();
    ReducedAnalysis analysis(module, rule);
    bool failedAny = false;
    module.walk([&](FromLocalOp op) {
      for (const LayoutFinding &f : analysis.check(op)) {
        MeshOp mesh = analysis.lookup(op.getInput())->mesh;
        StringRef axis =
            cast<StringAttr>(mesh.getAxisNames()[f.axis]).getValue();
        report(op, f, axis);
        failedAny = true;
      }
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
