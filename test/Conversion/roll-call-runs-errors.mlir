// muon-roll-call-runs rejects run lengths it cannot honour.
// RUN: muon-opt %s --muon-roll-call-runs="min-run=1" -verify-diagnostics
// RUN: muon-opt %s --muon-roll-call-runs="min-run=8 max-run=4" -verify-diagnostics
// RUN: muon-opt %s --muon-roll-call-runs="max-run=65537" -verify-diagnostics
// The values as numbers.
// RUN: not muon-opt %s --muon-roll-call-runs="min-run=1" 2>&1 | FileCheck %s --check-prefix=LOW
// RUN: not muon-opt %s --muon-roll-call-runs="min-run=8 max-run=4" 2>&1 | FileCheck %s --check-prefix=ORDER
// LOW: (got 1 and 128)
// ORDER: (got 8 and 4)

// expected-error @below {{muon-roll-call-runs: min-run must be at least 2 and at most max-run, and max-run at most 65536}}
module {
  llvm.func @f()
}
