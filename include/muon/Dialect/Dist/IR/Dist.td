//===- Dist.td - umbrella for docs ------------------------*- tablegen -*-===//
include "muon/Dialect/Dist/IR/DistOps.td"
