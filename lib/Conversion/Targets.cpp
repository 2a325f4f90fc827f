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
      // Tensors in device memory: the GPU library computes Newton-Schulz
      // (bf16 tensor cores or exact fp32), the elementwise ops are kernels
      // of muon-elementwise-to-gpu, and the runtime stages each collective's
      // buffers through the host (over MPI and NCCL alike).
      {Target::Cuda, "cuda",
       "tensors in NVIDIA GPU memory: Newton-Schulz in the GPU library, "
       "elementwise ops as generated kernels",
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
