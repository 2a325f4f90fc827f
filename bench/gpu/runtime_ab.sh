#!/usr/bin/env bash
# Step time of target=cuda steps with two builds of the step runtime
# (libmuon_runtime.so), alternating on the same GPU machine in one run: the
# runtime's own changes (how collectives stage, what they copy) measured as
# a ratio, with the same compiler, GPU library and data.
#
#   bash bench/gpu/runtime_ab.sh BASE_LIB_DIR [REPEATS]
#
# BASE_LIB_DIR holds the baseline libmuon_runtime.so (e.g. `ninja -C build
# muon_runtime` in a worktree of the older commit). muon-run is $MUON_RUN
# (default build/bin/muon-run), with the runtime it finds itself as the
# candidate. Each case runs REPEATS (default 3) times per runtime, the two
# interleaved; the figure is muon-run's "s/step after the first" on rank 0,
# the median over the repeats. Every run must PASS against the reference.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
base=$(realpath "${1:?usage: runtime_ab.sh BASE_LIB_DIR [REPEATS]}")
repeats=${2:-3}
muonrun=${MUON_RUN:-$root/build/bin/muon-run}
[ -f "$base/libmuon_runtime.so" ] || { echo "no libmuon_runtime.so in $base" >&2; exit 1; }
steps=$(mktemp -d)
trap 'rm -rf "$steps"' EXIT
gen=$root/test/Run/Inputs/gen_step.py
python3 "$gen" --mesh dp=1 --big >"$steps/one.mlir"
python3 "$gen" --mesh dp=2,tp=2 --big >"$steps/four.mlir"
cases=("1 rank|--steps 5 $steps/one.mlir"
       "4 ranks sharing the GPU|--steps 5 $steps/four.mlir"
       "main example, 4 ranks sharing the GPU|--steps 3 $root/examples/llama-tp-fsdp.mlir")

. "$root/bench/gpu/ab_common.sh"

printf '%-40s %12s %12s %10s\n' "step (s/step after the first)" "baseline" "candidate" "base/cand"
ab_cases "$base" "" "" "" "$repeats" "${cases[@]}"
