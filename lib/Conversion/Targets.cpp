//===- Targets.cpp - The lowering of each code generation target ----------===//

#include "muon/Conversion/Target.h"
#include "muon/Conversion/MuonToRuntime/MuonToRuntime.h"

#include "llvm/Support/ErrorHandling.h"

using namespace muon;

const TargetLowering &muon::getTargetLowering(Target target) {
  static const TargetLowering cpu{
      Target::Cpu, "cpu", "host code over the MPI + CBLAS runtime",
      populateNewtonSchulzToRuntimePatterns,
      populateDistCollectiveToRuntimePatterns};
  switch (target) {
  case Target::Cpu:
    return cpu;
  }
  llvm_unreachable("unknown target");
}
