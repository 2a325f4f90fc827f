//===- BlocksOnCycles.h - Blocks a region may run more than once -*- C++ -*-===//
//
// The blocks of a region that lie on a cycle of its control-flow graph.
// Passes that move stack slots or views to an earlier block use it: moved
// into such a block, an op would run once per iteration.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_SUPPORT_BLOCKSONCYCLES_H
#define MUON_SUPPORT_BLOCKSONCYCLES_H

#include "mlir/IR/Region.h"
#include "mlir/IR/RegionGraphTraits.h"

#include "llvm/ADT/SCCIterator.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace muon {

inline llvm::SmallPtrSet<mlir::Block *, 16>
blocksOnCycles(mlir::Region &region) {
  llvm::SmallPtrSet<mlir::Block *, 16> cyclic;
  for (auto scc = llvm::scc_begin(&region); !scc.isAtEnd(); ++scc)
    if (scc.hasCycle())
      cyclic.insert(scc->begin(), scc->end());
  return cyclic;
}

} // namespace muon

#endif // MUON_SUPPORT_BLOCKSONCYCLES_H
