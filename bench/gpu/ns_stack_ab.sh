#!/usr/bin/env bash
# Stacked Newton-Schulz on the GPU: target=cuda steps compiled with one
# Newton-Schulz call per matrix (--ns-stack-bytes=0, the baseline) and with
# target=cuda's default stacks (an owner's same-shape matrices of a round
# in one batched call, up to 64 MiB), alternating on the same GPU in one
# run. Same muon-run, runtime, GPU library and data; only the compiled step
# differs.
#
#   bash bench/gpu/ns_stack_ab.sh [REPEATS]
#
# muon-run is $MUON_RUN (default build/bin/muon-run). Each case runs
# REPEATS (default 3) times per variant, interleaved; the figure is
# muon-run's "s/step after the first" on rank 0, the median over the
# repeats. Every run must PASS against the single-device reference (fp32:
# 1e-5; bf16: 1e-3 over 3 steps).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
repeats=${1:-3}
muonrun=${MUON_RUN:-$root/build/bin/muon-run}
steps=$(mktemp -d)
trap 'rm -rf "$steps"' EXIT
python3 "$root/test/Run/Inputs/gen_step.py" --mesh dp=1 --big >"$steps/one.mlir"
# The main example's 84 matrices (256 x 256, 688 x 256, 256 x 688) on one
# rank, and in bf16.
sed 's/dist.mesh @mesh \[dp = 2, tp = 2\]/dist.mesh @mesh [dp = 1, tp = 1]/' \
  "$root/examples/llama-tp-fsdp.mlir" >"$steps/main1.mlir"
sed 's/{lr = 0.02 : f64,/{lr = 0.02 : f64, ns_dtype = bf16,/' \
  "$steps/main1.mlir" >"$steps/main1-bf16.mlir"
cases=("main example, 1 rank, fp32|--steps 6 $steps/main1.mlir"
       "main example, 1 rank, bf16|--steps 3 --rtol 1e-3 --atol 1e-3 $steps/main1-bf16.mlir"
       "generated step, 1 rank, fp32|--steps 6 $steps/one.mlir"
       "main example, 4 ranks sharing the GPU|--steps 4 $root/examples/llama-tp-fsdp.mlir")

. "$root/bench/gpu/ab_common.sh"

printf '%-40s %12s %12s %10s\n' "step (s/step after the first)" "one per call" "stacked" "ratio"
ab_cases "" "--ns-stack-bytes=0" "" "" "$repeats" "${cases[@]}"
