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
  // muon-to-llvm's own defaults, read from its options struct so that the
  // two cannot drift apart (the strings outlive the call: a target's name
  // is static, the chip is kept here).
  static const muon::MuonToLLVMOptions defaults;
  MuonLLVMPipelineOptions options;
  llvm::StringRef target = muon::getTargetLowering(defaults.target).name;
  options.target = mlirStringRefCreate(target.data(), target.size());
  options.assignOwners = defaults.assignOwners;
  options.nsStackBytes = defaults.nsStackBytes;
  options.batchCollectives = defaults.batchCollectives;
  options.maxPrefetchBytes = defaults.maxPrefetchBytes;
  options.placeDeallocations = defaults.placeDeallocations;
  static const std::string chip = defaults.cudaChip;
  options.cudaChip = mlirStringRefCreate(chip.data(), chip.size());
  return options;
}

namespace {
/// Sets `cxxOptions` from `options`; false after telling `errorCallback`
/// about an unknown target, a stack bound below -1, a negative prefetch
/// bound or target cuda without a chip.
bool toCxxOptions(MuonLLVMPipelineOptions options,
                  muon::MuonToLLVMOptions &cxxOptions,
                  MlirStringCallback errorCallback, void *userData) {
  std::string message;
  llvm::raw_string_ostream os(message);
  llvm::StringRef target = unwrap(options.target);
  const muon::TargetLowering *found = muon::lookupTargetLowering(target);
  if (!found) {
    os << "muon-to-llvm: unknown target '" << target
       << "'; available targets: ";
    llvm::interleave(
        muon::getAllTargetLowerings(), os,
        [&](const muon::TargetLowering &t) { os << t.name; }, ", ");
  } else if (options.nsStackBytes < -1) {
    os << "muon-to-llvm: nsStackBytes must be -1 (by target), 0 (no "
          "stacks) or a byte count, got "
       << options.nsStackBytes;
  } else if (options.maxPrefetchBytes < 0) {
    os << "muon-to-llvm: maxPrefetchBytes must be 0 (no bound) or a byte "
          "count, got "
       << options.maxPrefetchBytes;
  } else if (found->target == muon::Target::Cuda &&
             unwrap(options.cudaChip).empty()) {
    os << "muon-to-llvm: target cuda needs a cudaChip (e.g. \"sm_90\"), "
          "got an empty one";
  } else if (found->target == muon::Target::Cuda &&
             !muon::isKnownCudaChip(unwrap(options.cudaChip))) {
    os << "muon-to-llvm: cudaChip '" << unwrap(options.cudaChip)
       << "' is not a GPU architecture LLVM's NVPTX backend knows (e.g. "
          "\"sm_90\", \"sm_90a\")";
  }
  if (!message.empty()) {
    if (errorCallback)
      errorCallback(wrap(llvm::StringRef(message)), userData);
    return false;
  }
  cxxOptions.target = found->target;
  cxxOptions.assignOwners = options.assignOwners;
  cxxOptions.nsStackBytes = options.nsStackBytes;
  cxxOptions.batchCollectives = options.batchCollectives;
  cxxOptions.maxPrefetchBytes = options.maxPrefetchBytes;
  cxxOptions.placeDeallocations = options.placeDeallocations;
  cxxOptions.cudaChip = unwrap(options.cudaChip).str();
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
  if (!toCxxOptions(options, cxxOptions, errorCallback, userData))
    return mlirLogicalResultFailure();
  if (mlirOperationIsNull(module)) {
    if (errorCallback)
      errorCallback(wrap(llvm::StringRef("muon-to-llvm: the module is null")),
                    userData);
    return mlirLogicalResultFailure();
  }
  auto moduleOp = llvm::dyn_cast<mlir::ModuleOp>(unwrap(module));
  if (!moduleOp) {
    std::string message =
        "muon-to-llvm: runs on a builtin.module, got '" +
        unwrap(module)->getName().getStringRef().str() + "'";
    if (errorCallback)
      errorCallback(wrap(llvm::StringRef(message)), userData);
    return mlirLogicalResultFailure();
  }
  return wrap(muon::runMuonToLLVMPipeline(moduleOp, cxxOptions));
}
