//===- VerifyPassOutput.cpp - Our passes check what they generate ---------===//

#include "muon/Support/VerifyPassOutput.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

LogicalResult muon::verifyPassOutput(Operation *root, StringRef passName) {
  struct Captured {
    Location loc;
    std::string message;
  };
  SmallVector<Captured> errors;
  LogicalResult verified = success();
  {
    // Hold the verifier's own diagnostics back: they would blame the
    // generated op on the user's location.
    ScopedDiagnosticHandler capture(root->getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        errors.push_back({d.getLocation(), d.str()});
      return success();
    });
    verified = verify(root);
  }
  if (succeeded(verified))
    return success();
  if (errors.empty())
    errors.push_back({root->getLoc(), "(no message)"});
  for (const Captured &e : errors) {
    InFlightDiagnostic diag =
        emitError(e.loc) << "internal error: " << passName
                         << " generated IR that does not verify (a compiler "
                            "bug, not a problem with this input; please "
                            "report it with the input)";
    diag.attachNote(e.loc) << "the verifier said: " << e.message;
  }
  return failure();
}
