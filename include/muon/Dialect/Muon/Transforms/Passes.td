//===- Passes.td - muon dialect passes ---------------------*- tablegen -*-===//

#ifndef MUON_DIALECT_MUON_TRANSFORMS_PASSES_TD
#define MUON_DIALECT_MUON_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// The figures of the cost model (docs/schedule.md) that muon-report,
// muon-timeline and muon-expand-step estimate with; CostModelOptions.h.
defvar CostModelOptionList = [
  Option<"ranksPerNode", "ranks-per-node", "int64_t", "8",
         "Cost model: ranks per node (ranks are numbered node by node)">,
  Option<"intraNodeGBps", "intra-node-gbps", "::muon::Number", "360",
         "Cost model: bandwidth of a link in a node, GB/s (NVLink "
         "all-gather bus bandwidth on 8 x H100)">,
  Option<"intraNodeLatencyUs", "intra-node-latency-us", "::muon::Number", "3",
         "Cost model: latency of a collective in a node, us">,
  Option<"interNodeGBps", "inter-node-gbps", "::muon::Number", "50",
         "Cost model: bandwidth per rank between nodes, GB/s (400 Gb/s "
         "InfiniBand per GPU)">,
  Option<"interNodeLatencyUs", "inter-node-latency-us", "::muon::Number", "10",
         "Cost model: latency of a collective between nodes, us">,
  Option<"nsTflops", "ns-tflops", "::muon::Number", "0",
         "Cost model: Newton-Schulz rate, TFLOP/s (0: 989 for ns_dtype = "
         "bf16, 67 for f32)">
];

def MuonAssignOwners : Pass<"muon-assign-owners", "mlir::ModuleOp"> {
  let summary = "Give every parameter of every muon.step exactly one owner rank";
  let description = [{
    Writes `owners` (one rank per parameter) on each `muon.step`. The
    owner is the only rank (per expert group) that runs Newton-Schulz on
    the parameter. Strategies (the step's `strategy`, or the `strategy`
    option, which overrides it):

    * `round_robin`: parameter i goes to candidate i mod k.
    * `balanced`: greedy longest-processing-time: parameters in decreasing
      order of Newton-Schulz cost (ns_steps * (4 p^2 q + 2 p^3), p <= q the
      matrix dims; ties by index) each go to the least-loaded candidate
      (ties to the lowest rank). Deterministic.
    * `explicit`: the step's `assignment` (entry r lists the parameters
      rank r owns) or `owners`, validated by the verifier.

    Candidates respect the layout: a parameter with whole storage is owned
    at its storage coordinate, an EP/PP-annotated one inside its group, and
    an expert stack sharded over `ep` is owned once per `ep` group (named
    by its coordinate-0 representative). Replicated axes (DDP, CP, HSDP
    replicas) are just more candidates, so replicas spread the work and no
    two ranks orthogonalise the same parameter.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"\"",
           "Override every step's strategy: round_robin or balanced">
  ];
  let dependentDialects = ["::muon::optim::MuonDialect"];
}

def MuonExpandStep : Pass<"muon-expand-step", "mlir::ModuleOp"> {
  let summary = "Rewrite muon.step into SPMD code on local tensors";
  let description = [{
    Needs owners (run `muon-assign-owners` first). For each parameter:

    1. `dist.to_local` of parameter, gradient and momentum; a partial
       gradient is reduced over its partial axes (`dist.all_reduce`).
    2. `muon.momentum_update` on the local shards.
    3. Gather to the owner with rooted `dist.gather`s, one per split of the
       layout, innermost split first (storage before compute; for one
       tensor dim the nesting order of its axes). Each gather runs only on
       the ranks that hold data at that point: the ones whose coordinates on
       the already-gathered axes (and on replicated axes) match the owner's,
       a condition uniform over the gather's communicator.
    4. `muon.newton_schulz` under `scf.if` on the owner only.
    5. `dist.scatter`s back in the reverse order (outer split first), then
       one `dist.broadcast` over the replicated axes from the owner's
       coordinates.
    6. `muon.apply_update` on the local shard; `dist.from_local`.

    Whole-storage and EP/PP-local parameters run under a condition on their
    group's coordinate; nothing crosses the group. Expert stacks sharded
    over a batch dim are orthogonalised per group, with no collective over
    that axis.

    Order (docs/schedule.md): with `async_gpu_parallelism` (the default) the
    parameters go in rounds, each owner's largest first, packed by time (a
    round lasts as long as the largest next parameter of any owner; an
    owner with smaller ones does as many as fit): a round's gathers, then
    every owner's Newton-Schulz, then the round's scatters. Gathers
    (scatters) of a round at the same position of their chains that run
    over the same communicator on the same ranks become one
    `dist.gather_batch` (`dist.scatter_batch`): one all-to-all instead of
    one rooted call per parameter. `batch-collectives=false` keeps one
    rooted call per parameter (to compare; the results are the same).

    With `prefetch_count = k > 0` the gathers and scatters are asynchronous
    (`!dist.token`): round i + k's gathers are issued before round i's
    Newton-Schulz (a chain of several gathers advances at least one level per
    round), and round i's scatters are waited on after round i + 1's
    Newton-Schulz; before each Newton-Schulz the next round's gathers and
    the last round's scatters go one level further, so that level
    overlaps it (the order `plan::roundProgram` gives, which the schedule
    estimate simulates). A rank then holds the gathered matrices of up to k + 1
    rounds; `max-prefetch-bytes` bounds that peak by lowering k. With
    prefetch and batched calls, a round whose lighter owners (at most half
    the largest owner's Newton-Schulz) hold up none of the others and have
    results large enough on the cost model (its options below) runs in two
    release groups: their Newton-Schulz and redistributes first, then the
    others' (docs/schedule.md, "Early release"; `plan::releaseGroups`),
    where the schedule estimate of the step is shorter for it.

    With `ns-stack-bytes = B > 0` (and rounds) the parameters whose owner
    orthogonalises one matrix (whole, or the one block of a `split`
    parameter's shard) share rounds by shape and element type: taken by
    descending cost, a parameter joins the owner's last stack of its shape
    and element type while the stack then holds at most B bytes (4 per
    element), and the stacks are packed into rounds like parameters (a
    stack's cost is its matrices' together). Inputs of one
    stack that run on the same ranks go to one `muon.newton_schulz` on a
    k x m x n batch (`tensor.insert_slice` in, `tensor.extract_slice` and
    a `linalg.copy` each out): one call instead of k, which a GPU runs as
    batched products. The results are those of k separate calls (up to
    the kernels' rounding where the batched kernel differs).

    A step whose Newton-Schulz coefficients take a singular value of the
    normalised matrix (in [0, 1], or for ns_dtype = bf16 up to one bf16
    rounding above 1) past 2 within the first 100 iterations gets a warning
    and is expanded all the same (docs/muon-dialect.md, "Coefficients that
    diverge").
  }];
  let options = [
    Option<"batchCollectives", "batch-collectives", "bool", "true",
           "Merge a round's gathers and scatters over one communicator "
           "into batched calls (dist.gather_batch / dist.scatter_batch)">,
    Option<"maxPrefetchBytes", "max-prefetch-bytes", "int64_t", "0",
           "Bound on the gathered matrices (f32 bytes) one rank holds at "
           "once: a step whose prefetch_count would exceed it prefetches "
           "fewer rounds, with a remark (0: no bound)">,
    Option<"nsStackBytes", "ns-stack-bytes", "int64_t", "0",
           "Stack an owner's same-shape matrices of a round into one "
           "batched Newton-Schulz call while the stack holds at most this "
           "many bytes (4 per element); 0: one call per matrix">
  ] # CostModelOptionList;
  let dependentDialects = [
    "::muon::optim::MuonDialect", "::muon::dist::DistDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def MuonReport : Pass<"muon-report", "mlir::ModuleOp"> {
  let summary = "Print per-parameter and per-rank tables of every muon.step";
  let description = [{
    Per parameter: shape, layout, owner, Newton-Schulz FLOPs, the gather
    and scatter chains and the bytes they move. Per rank: NS load (FLOPs),
    bytes sent and received (the plan's transfers; a broadcast as its root
    sending to every member), and the estimate of the step's schedule on an
    H100 cost model (finish time, time not hidden behind compute,
    collective calls, gathered bytes held at once); then the balance (max
    load / mean load) and the schedule. With `schedules`, the estimates of
    every schedule against the lower bound and the owner path bound
    (docs/schedule.md).
    Run after `muon-assign-owners`. The IR is not changed.
  }];
  let options = [
    Option<"output", "output", "std::string", "\"-\"",
           "Where to write the report ('-' = stdout)">,
    Option<"schedules", "schedules", "bool", "false",
           "Also estimate every schedule of the step's owners (naive, one "
           "at a time, rounds, rounds + prefetch 1 and 2) against the lower "
           "bound">,
    Option<"format", "format", "std::string", "\"text\"",
           "'text' (tables) or 'json' (one object per step, the same "
           "figures; docs/muon-dialect.md)">,
    Option<"nsStackBytes", "ns-stack-bytes", "int64_t", "0",
           "Make the rounds as muon-expand-step{ns-stack-bytes} does (an "
           "owner's same-shape matrices stacked up to this many bytes; "
           "target=cuda compiles with 64 MiB); 0: one matrix per call">
  ] # CostModelOptionList;
  let dependentDialects = ["::muon::optim::MuonDialect"];
}

def MuonTimeline : Pass<"muon-timeline", "mlir::ModuleOp"> {
  let summary = "Write the estimated timeline of every muon.step as a "
                "Chrome trace";
  let description = [{
    Simulates the step's schedule on the H100 cost model
    (docs/schedule.md) and writes every collective and Newton-Schulz of
    every rank as Chrome trace JSON: one process per rank with a `compute`
    and a `comm` thread; open it in Perfetto (ui.perfetto.dev) or
    chrome://tracing. `muon-run --trace` writes a measured run in the same
    form. Steps of one module follow one another in time. Run after
    `muon-assign-owners`. The IR is not changed.

    ```
    muon-opt step.mlir --muon-assign-owners \
        --muon-timeline="output=step.json schedule=rounds prefetch=1"
    ```
  }];
  let options = [
    Option<"output", "output", "std::string", "\"\"",
           "The JSON file to write (required; '-' = stdout)">,
    Option<"schedule", "schedule", "std::string", "\"step\"",
           "step (what the step compiles to), naive, sequential or rounds">,
    Option<"prefetch", "prefetch", "int64_t", "0",
           "Rounds whose gathers are in flight ahead, 0 to 64 (default: the "
           "step's prefetch_count with schedule=step, else 0)">,
    Option<"nsStackBytes", "ns-stack-bytes", "int64_t", "0",
           "Make the rounds as muon-expand-step{ns-stack-bytes} does (an "
           "owner's same-shape matrices stacked up to this many bytes; "
           "target=cuda compiles with 64 MiB); 0: one matrix per call">
  ] # CostModelOptionList;
  let dependentDialects = ["::muon::optim::MuonDialect"];
}

#endif // MUON_DIALECT_MUON_TRANSFORMS_PASSES_TD
