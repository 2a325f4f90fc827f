#!/usr/bin/env bash
# The main job: builds the compiler, runtime and muon-run (installing what is
# missing), then compiles the example Llama-like model (12 layers of
# q/k/v/o/gate/up/down at width 256, Megatron TP column/row-parallel nested in
# FSDP on a 2x2 mesh), prints the owner assignment report, runs 3 optimizer
# steps on 4 CPU ranks (MPI + OpenBLAS) and prints the check against an
# independent single-device Muon. Exits non-zero unless the check passes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_BUILD_DIR:-$root/build}
example=$root/examples/llama-tp-fsdp.mlir

log=$(mktemp)
echo "building (log: $log)..."
bash "$root/scripts/build.sh" > "$log" 2>&1 || { cat "$log"; exit 1; }

echo
echo "=== owner assignment (muon-assign-owners, balanced) and communication plan"
"$build/bin/muon-opt" "$example" --muon-assign-owners --muon-report -o /dev/null |
  awk 'NR <= 9 || /^rank/ || f { print } /^rank/ { f = 1 }'
echo "    ... (84 parameters; full table: muon-opt $example --muon-assign-owners --muon-report -o /dev/null)"

echo
echo "=== 3 steps on 4 CPU ranks (mpirun), checked against single-device Muon"
export OPENBLAS_NUM_THREADS=1
"$build/bin/muon-run" "$example" --steps 3
