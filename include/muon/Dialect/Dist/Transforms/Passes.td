//===- Passes.td - dist dialect passes ---------------------*- tablegen -*-===//

#ifndef MUON_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define MUON_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistPrintLayouts : Pass<"dist-print-layouts", "mlir::ModuleOp"> {
  let summary = "Print, per rank, the local block of every distributed tensor";
  let description = [{
    For every distinct `!dist.tensor` type used in the module (function
    arguments and results, op operands and results), prints one table row per
    rank: the rank's mesh coordinates, the local shape and the global offsets
    of the block it holds, as the layout API computes them. Flat storage
    prints the element range of the flattened tensor.

    The IR is not changed. Example:

    ```
    muon-opt --dist-print-layouts -o /dev/null examples/seed004-storage.mlir
    ```
  }];
  let dependentDialects = ["::muon::dist::DistDialect"];
}

#endif // MUON_DIALECT_DIST_TRANSFORMS_PASSES_TD
