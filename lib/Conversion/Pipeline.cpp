//===- Pipeline.cpp - The muon-to-llvm pipeline ---------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
enum class Target { Cpu };
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  // An enum, so that a wrong value is a clean option-parsing error.
  Option<Target> target{
      *this, "target", llvm::cl::desc("Code generation target"),
      llvm::cl::values(clEnumValN(Target::Cpu, "cpu",
                                  "host code over the MPI + CBLAS runtime")),
      llvm::cl::init(Target::Cpu)};
  Option<bool> assignOwners{
      *this, "assign-owners",
      llvm::cl::desc("Run muon-assign-owners first (steps keep explicit "
                     "owners either way)"),
      llvm::cl::init(true)};
};
} // namespace

LogicalResult muon::buildMuonToLLVMPipeline(OpPassManager &pm,
                                            const MuonToLLVMOptions &options,
                                            std::string &error) {
  if (options.target != "cpu") {
    error = "unknown target '" + options.target +
            "' for muon-to-llvm (available: cpu; the GPU lowering is a "
            "separate pipeline)";
    return failure();
  }
  std::string p;
  if (options.assignOwners)
    p += "muon-assign-owners,";
  // Distribution and compute ops to runtime calls on local tensors.
  p += "muon-expand-step,convert-muon-to-runtime,convert-dist-to-runtime,"
       "canonicalize,cse,";
  // Tensors to buffers; results become caller-provided out-params so a
  // host keeps ownership of every buffer it sees.
  p += "one-shot-bufferize{bufferize-function-boundaries=1 "
       "function-boundary-type-conversion=identity-layout-map},"
       "buffer-results-to-out-params{modify-public-functions=1},"
       "buffer-deallocation-pipeline,";
  // Loops, then the LLVM dialect.
  p += "convert-linalg-to-loops,expand-strided-metadata,lower-affine,"
       "convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,"
       "convert-index-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
       "reconcile-unrealized-casts";
  std::string parseError;
  llvm::raw_string_ostream os(parseError);
  if (failed(parsePassPipeline(p, pm, os))) {
    error = "internal pipeline does not parse: " + parseError;
    return failure();
  }
  return success();
}

void muon::registerMuonToLLVMPipeline() {
  PassPipelineRegistration<PipelineOptions>(
      "muon-to-llvm",
      "Compile muon.step to the LLVM dialect for the runtime: assign owners, "
      "expand, lower NS/collectives to runtime calls, bufferize (results as "
      "out-params), lower to LLVM with C-interface entry points",
      [](OpPassManager &pm, const PipelineOptions &o) {
        MuonToLLVMOptions options;
        options.target = "cpu";
        options.assignOwners = o.assignOwners;
        std::string error;
        // Only fails for an unknown target, which the option parser rejects.
        (void)buildMuonToLLVMPipeline(pm, options, error);
      });
}
