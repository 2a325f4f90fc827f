//===- CheckOutput.cpp - One check of what several passes generated -------===//
//
// Each of our IR-generating passes verifies its own output. Where passes
// run back to back in muon-to-llvm, each check would verify the whole step
// again, mostly IR the previous check had verified; this pass checks their
// combined output once and names them all.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"
#include "muon/Support/VerifyPassOutput.h"

namespace muon {
#define GEN_PASS_DEF_MUONCHECKOUTPUT
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

namespace {
struct MuonCheckOutput : muon::impl::MuonCheckOutputBase<MuonCheckOutput> {
  using MuonCheckOutputBase::MuonCheckOutputBase;

  void runOnOperation() override {
    if (failed(muon::verifyPassOutput(getOperation(), generatedBy)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
