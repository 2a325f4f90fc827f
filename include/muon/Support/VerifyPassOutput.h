//===- VerifyPassOutput.h - Our passes check what they generate -*- C++ -*-===//
//
// The IR a pass generates carries the user's locations. If it ever failed
// to verify, the pass manager's verifier would report, say, a 'dist.gather'
// error at the line of the user's muon.step, blaming code the user never
// wrote. Each of our passes that generates IR verifies its result itself and
// reports a failure as what it is: a compiler bug in that pass.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_VERIFYPASSOUTPUT_H
#define MUON_SUPPORT_VERIFYPASSOUTPUT_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace muon {

/// Verifies `root` after pass `passName` ran on it. On failure emits, at the
/// location of each verifier error, "internal error: PASS generated IR that
/// does not verify ..." with the verifier's message as a note, and fails.
mlir::LogicalResult verifyPassOutput(mlir::Operation *root,
                                     llvm::StringRef passName);

} // namespace muon

#endif // MUON_SUPPORT_VERIFYPASSOUTPUT_H
