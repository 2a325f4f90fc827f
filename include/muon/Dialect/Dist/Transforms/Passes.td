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
    muon-opt --dist-print-layouts -o /dev/null examples/storage-sharding.mlir
    ```
  }];
  let dependentDialects = ["::muon::dist::DistDialect"];
}

def DistSpecializeRank : Pass<"dist-specialize-rank", "mlir::ModuleOp"> {
  let summary = "Specialise the module to what one rank executes";
  let description = [{
    Replaces every `dist.rank` and `dist.coord` with the constants of rank
    `rank`, then folds and canonicalises, so branches on the rank collapse
    and the IR shows exactly what that rank runs: its collectives (which
    are never removed) and, for instance, whether it runs Newton-Schulz.

    ```
    muon-opt --muon-assign-owners --muon-expand-step \
             --dist-specialize-rank=rank=3 step.mlir
    ```
  }];
  let options = [
    Option<"rank", "rank", "int64_t", "-1",
           "The rank to specialise to (required; 0 <= rank < mesh size)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def DistVerifySpmd : Pass<"dist-verify-spmd", "mlir::ModuleOp"> {
  let summary = "Check the SPMD rule: the same collectives on every rank";
  let description = [{
    Every rank must issue the same, globally ordered sequence of
    collectives on each communicator, or NCCL/MPI deadlock. Two checks per
    function, each an error at the offending op:

    1. Control flow: a collective under `scf.if` / `scf.for` whose
       condition or bounds can differ between the ranks of the collective's
       own communicator (they depend on `dist.rank`, or on `dist.coord` of
       one of its axes, or on runtime data) is rejected. A condition on the
       coordinates of *other* axes is fine: it is uniform over the
       communicator (the owner-only gathers `muon-expand-step` emits).
    2. Sequences: every rank of the mesh is simulated (rank queries folded
       to constants, branches and loop bounds evaluated), and on every
       communicator all members must issue identical collectives (op,
       axes, dims, root, sizes, types) in the same order.

    The IR is not changed. With `print-sequences`, the per-communicator
    sequences are printed.
  }];
  let options = [
    Option<"printSequences", "print-sequences", "bool", "false",
           "Print every communicator's collective sequence">
  ];
}

#endif // MUON_DIALECT_DIST_TRANSFORMS_PASSES_TD
