include "muon/Dialect/Muon/IR/MuonOps.td"
