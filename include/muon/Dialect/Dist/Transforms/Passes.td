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

    A call to a function with a body that issues collectives (itself or
    through its own calls) counts as those collectives: check 1 applies to
    the call with the axes of all of them, and the simulation runs the
    callee's body at the call with what is known of its arguments (a
    recursion that reaches collectives cannot be simulated and is refused).
    A private function whose every use in the module is a call runs only
    there: its arguments vary as what its calls pass (joined over the
    calls), and its collectives are simulated at the calls only. Every
    other function is an entry point, checked on its own with its
    arguments taken as runtime data. A function reaching control flow that
    check 1 refused is not simulated.

    The IR is not changed. With `print-sequences`, the per-communicator
    sequences are printed.
  }];
  let options = [
    Option<"printSequences", "print-sequences", "bool", "false",
           "Print every communicator's collective sequence">
  ];
}

defvar ReducedRuleOption = Option<"rule", "rule", "::muon::dist::ReducedRule",
    "::muon::dist::ReducedRule::Uniform",
    "How an op combines its operands' `reduced` axes",
    [{::llvm::cl::values(
      clEnumValN(::muon::dist::ReducedRule::Uniform, "uniform",
                 "reduced where any operand is (DTensor)"),
      clEnumValN(::muon::dist::ReducedRule::Intersection, "intersection",
                 "reduced where every operand is (local tensors)"))}]>;

def DistPropagateReduced : Pass<"dist-propagate-reduced", "mlir::ModuleOp"> {
  let summary = "Write `reduced` into the layouts the local view rebuilds";
  let description = [{
    Follows, through the ops between `dist.to_local` and `dist.from_local`,
    which mesh axes a local tensor varies over and over which it is
    `reduced` (replicated, with a gradient to be summed): a `reduced`
    input placement, or a `dist.all_gather ... reduced`, starts it; an op
    combines its operands by `rule` (`uniform`: any operand reduced on an
    axis makes the result reduced there; `intersection`: every operand
    must be); collectives that reduce or scatter over an axis end it, and
    an axis a value varies over is never reduced.

    Where a `dist.from_local` declares `replicate` on an axis the value is
    reduced over, its result type becomes `reduced` there. A function
    returning that value directly gets the new result type when nothing in
    the module calls it; otherwise, and for every other use that needs the
    old type, a `dist.redistribute` back to the declared layout is
    inserted (an explicit point where the gradient is reduced). The rules
    and examples: docs/reduced.md.

    ```
    muon-opt --dist-propagate-reduced=rule=intersection model.mlir
    ```
  }];
  let options = [ReducedRuleOption];
}

def DistVerifyReduced : Pass<"dist-verify-reduced", "mlir::ModuleOp"> {
  let summary = "Check the reduction obligation of `reduced` values";
  let description = [{
    With the analysis of `dist-propagate-reduced` (same `rule`), checks
    every `dist.from_local` and reports, at the op, each mesh axis where its
    declared layout contradicts the value:

    * declared `replicate` where the value is reduced: its gradient would
      leave unreduced (the obligation is dropped);
    * declared `replicate` or `reduced` where the value differs between the
      ranks of the axis (a shard, a partial value or a storage piece not
      gathered or reduced over it);
    * declared `reduced` where no reduced value reaches it (whatever the
      rule; an explicit `reduced` on a value the intersection rule leaves
      ambiguous is accepted): its gradient would be summed over ranks that
      already hold all of it.

    The IR is not changed. Values the analysis does not follow (block
    arguments, results of ops with no operand derived from a distributed
    value or a rank query) are not checked; results of `scf` region ops
    follow what their regions yield, results of calls what the callee
    returns (docs/reduced.md).
  }];
  let options = [ReducedRuleOption];
}

def DistLowerRedistribute : Pass<"dist-lower-redistribute", "mlir::ModuleOp"> {
  let summary = "Lower dist.redistribute between any two layouts";
  let description = [{
    Rewrites every `dist.redistribute` into the local view: `dist.to_local`,
    the collectives the two layouts require, per-rank slices, and
    `dist.from_local`. Any pair of layouts of one tensor on one mesh is
    supported: placements (shard, replicate, partial of every kind,
    reduced), nesting orders, every storage kind (dim, block, flat, whole,
    weighted).

    The sequence: partial axes the target does not keep with the same
    reduction are reduced (one `reduce_scatter` when the only change is
    that axis becoming the innermost shard of a dim, else `all_reduce` on
    the local piece); an axis moving from the innermost shard of one dim
    to the innermost shard of another, with even blocks, is one
    `all_to_all`; otherwise the source's splits the target does not share are
    undone by `all_gather`, storage first, then per dim the compute splits
    beyond the outer ones both layouts have in common, innermost first;
    the target's block is sliced out at per-rank offsets; new
    `partial<sum>` axes keep the value on coordinate 0 and zeros elsewhere.
    Swapping `replicate` and `reduced` moves nothing. docs/dist-dialect.md,
    "Redistribution", has the rules and examples.

    ```
    muon-opt --dist-lower-redistribute reshard.mlir
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // MUON_DIALECT_DIST_TRANSFORMS_PASSES_TD
