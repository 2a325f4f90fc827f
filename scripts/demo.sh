#!/usr/bin/env bash
# The main job: builds muon-opt, verifies the example layouts (seed 004's
# storage use cases and the FSDP/TP/HSDP/EP/CP/3-D topologies) and prints,
# for every distributed tensor, which block each rank holds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_BUILD_DIR:-$root/build}

log=$(mktemp)
echo "building (log: $log)..."
bash "$root/scripts/build.sh" > "$log" 2>&1 || { cat "$log"; exit 1; }
for example in "$root"/examples/*.mlir; do
  echo "=== $(basename "$example")"
  "$build/bin/muon-opt" --dist-print-layouts -o /dev/null "$example"
done
