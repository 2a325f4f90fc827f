//===- Pipeline.cpp - C API: the muon-to-llvm pipeline --------------------===//

#include "muon-c/Pipeline.h"

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/Target.h"

#include "mlir/CAPI/IR.h"
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

namespace {
/// Sets `cxxOptions` from `options`; false after telling `errorCallback`
/// about an unknown target.
bool toCxxOptions(MuonLLVMPipelineOptions options,
                  muon::MuonToLLVMOptions &cxxOptions,
                  MlirStringCallback errorCallback, void *userData) {
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
    return false;
  }
  cxxOptions.target = found->target;
  cxxOptions.assignOwners = options.assignOwners;
  return true;
}
} // namespace

MlirLogicalResult muonBuildMuonToLLVMPipeline(MlirOpPassManager pm,
                                              MuonLLVMPipelineOptions options,
                                              MlirStringCallback errorCallback,
                                              void *userData) {
  muon::MuonToLLVMOptions cxxOptions;
  if (!toCxxOptions(options, cxxOptions, errorCallback, userData))
    return mlirLogicalResultFailure();
  muon::buildMuonToLLVMPipeline(*unwrap(pm), cxxOptions);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult muonRunMuonToLLVMPipeline(MlirOperation module,
                                            MuonLLVMPipelineOptions options,
                                            MlirStringCallback errorCallback,
                                            void *userData) {
  muon::MuonToLLVMOptions cxxOptions;
  auto moduleOp = llvm::dyn_cast<mlir::ModuleOp>(unwrap(module));
  if (!toCxxOptions(options, cxxOptions, errorCallback, userData) || !moduleOp)
    return mlirLogicalResultFailure();
  return wrap(muon::runMuonToLLVMPipeline(moduleOp, cxxOptions));
}
