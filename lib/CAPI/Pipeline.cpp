//===- Pipeline.cpp - C API: the muon-to-llvm pipeline --------------------===//

#include "muon-c/Pipeline.h"

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/Target.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

MuonLLVMPipelineOptions muonLLVMPipelineOptionsDefault(void) {
  MuonLLVMPipelineOptions options;
  options.target = mlirStringRefCreate("cpu", 3);
  options.assignOwners = true;
  return options;
}

MlirLogicalResult muonBuildMuonToLLVMPipeline(MlirOpPassManager pm,
                                              MuonLLVMPipelineOptions options,
                                              MlirStringCallback errorCallback,
                                              void *userData) {
  llvm::StringRef target = unwrap(options.target);
  const muon::TargetLowering *found = muon::lookupTargetLowering(target);
  if (!found) {
    if (errorCallback) {
      std::string message;
      llvm::raw_string_ostream os(message);
      os << "muon-to-llvm: unknown target '" << target
         << "'; available targets: ";
      llvm::interleave(
          muon::getAllTargetLowerings(), os,
          [&](const muon::TargetLowering &t) { os << t.name; }, ", ");
      errorCallback(wrap(llvm::StringRef(message)), userData);
    }
    return mlirLogicalResultFailure();
  }
  muon::MuonToLLVMOptions cxxOptions;
  cxxOptions.target = found->target;
  cxxOptions.assignOwners = options.assignOwners;
  muon::buildMuonToLLVMPipeline(*unwrap(pm), cxxOptions);
  return mlirLogicalResultSuccess();
}
