//===- Pipeline.cpp - C API: the muon-to-llvm pipeline --------------------===//

#include "muon-c/Pipeline.h"

#include "muon/Conversion/Passes.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

namespace {
/// The targets by name, as the textual option spells them.
struct TargetName {
  const char *name;
  muon::Target target;
};
constexpr TargetName kTargets[] = {{"cpu", muon::Target::Cpu}};
} // namespace

MuonLLVMPipelineOptions muonLLVMPipelineOptionsDefault(void) {
  MuonLLVMPipelineOptions options;
  options.target = mlirStringRefCreateFromCString("cpu");
  options.assignOwners = true;
  return options;
}

MlirLogicalResult muonBuildMuonToLLVMPipeline(MlirOpPassManager pm,
                                              MuonLLVMPipelineOptions options,
                                              MlirStringCallback errorCallback,
                                              void *userData) {
  llvm::StringRef target = unwrap(options.target);
  const TargetName *found = nullptr;
  for (const TargetName &t : kTargets)
    if (target == t.name)
      found = &t;
  if (!found) {
    if (errorCallback) {
      mlir::detail::CallbackOstream os(errorCallback, userData);
      os << "muon-to-llvm: unknown target '" << target
         << "'; available targets: ";
      llvm::interleave(
          kTargets, os, [&](const TargetName &t) { os << t.name; }, ", ");
    }
    return mlirLogicalResultFailure();
  }
  muon::MuonToLLVMOptions cxxOptions;
  cxxOptions.target = found->target;
  cxxOptions.assignOwners = options.assignOwners;
  muon::buildMuonToLLVMPipeline(*unwrap(pm), cxxOptions);
  return mlirLogicalResultSuccess();
}
