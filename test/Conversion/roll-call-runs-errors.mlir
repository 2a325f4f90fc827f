// muon-roll-call-runs rejects run lengths it cannot honour.
// RUN: muon-opt %s --muon-roll-call-runs="min-run=1" -verify-diagnostics
// RUN: muon-opt %s --muon-roll-call-runs="min-run=8 max-run=4" -verify-diagnostics
// RUN: muon-opt %s --muon-roll-call-runs="max-run=65537" -verify-diagnostics

// expected-error @below {{muon-roll-call-runs: min-run must be at least 2 and at most max-run, and max-run at most 65536}}
module {
  llvm.func @f()
}
