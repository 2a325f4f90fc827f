//===- Targets.cpp - The lowering of each code generation target ----------===//
//
// One row per muon::Target. A new target adds a row with its patterns.
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Target.h"
#include "muon/Conversion/MuonToRuntime/MuonToRuntime.h"

#include "llvm/Support/ErrorHandling.h"

using namespace muon;

llvm::ArrayRef<TargetLowering> muon::getAllTargetLowerings() {
  static const TargetLowering targets[] = {
      {Target::Cpu, "cpu", "host code over the MPI + CBLAS runtime",
       checkNewtonSchulzOperand, populateNewtonSchulzToRuntimePatterns,
       populateDistCollectiveToRuntimePatterns},
      // The GPU computes Newton-Schulz (bf16 tensor cores or exact fp32) on
      // buffers staged from host memory; collectives stay on MPI.
      {Target::Cuda, "cuda",
       "Newton-Schulz on an NVIDIA GPU, the rest on the host over MPI",
       checkNewtonSchulzOperand, populateNewtonSchulzToCudaPatterns,
       populateDistCollectiveToRuntimePatterns},
  };
  return targets;
}

const TargetLowering &muon::getTargetLowering(Target target) {
  for (const TargetLowering &t : getAllTargetLowerings())
    if (t.target == target)
      return t;
  llvm_unreachable("a muon::Target without a row in Targets.cpp");
}

const TargetLowering *muon::lookupTargetLowering(llvm::StringRef name) {
  for (const TargetLowering &t : getAllTargetLowerings())
    if (t.name == name)
      return &t;
  return nullptr;
}
