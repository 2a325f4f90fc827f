//===- Compile.cpp - Parse, describe and lower a step module --------------===//

#include "Compile.h"

#include "muon/Conversion/Passes.h"
#include "muon/Conversion/ShardToDist/ShardToDist.h"
#include "muon/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/Support/SourceMgr.h"

#include <optional>

using namespace mlir;

void muon::run::registerRunDialects(DialectRegistry &registry) {
  muon::registerToolDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

FailureOr<muon::run::StepSpec>
muon::run::parseAndLower(MLIRContext &context, const Options &o,
                         OwningOpRef<ModuleOp> &module, bool printDiagnostics,
                         bool printRemarks) {
  llvm::SourceMgr sources;
  // Locations as file:line:col with the source line, as muon-opt prints
  // them (the context's default prints loc("file":line:col)); no dump of
  // the op after each error, which would bury the message.
  std::optional<SourceMgrDiagnosticHandler> printer;
  if (printDiagnostics) {
    context.printOpOnDiagnostic(false);
    printer.emplace(sources, &context);
  }
  // Registered after the printer, so it sees each diagnostic first.
  std::optional<ScopedDiagnosticHandler> quiet;
  if (!printRemarks)
    quiet.emplace(&context, [](Diagnostic &d) {
      return success(d.getSeverity() != DiagnosticSeverity::Error);
    });
  module = parseSourceFile<ModuleOp>(o.input, sources, &context);
  if (!module)
    return failure();
  // A step written against MLIR shard annotations is read after the import
  // has given it layouts.
  if (failed(importShardAnnotations(*module)))
    return failure();
  FailureOr<StepSpec> spec = describeStep(*module, o);
  if (failed(spec))
    return failure();
  MuonToLLVMOptions options;
  options.target = o.target;
  options.batchCollectives = o.batchCollectives;
  options.nsStackBytes = o.nsStackBytes;
  options.maxPrefetchBytes = o.maxPrefetchBytes;
  options.placeDeallocations = o.placeDeallocations;
  if (failed(runMuonToLLVMPipeline(*module, options)) ||
      failed(readRoles(*module, *spec)))
    return failure();
  return spec;
}
