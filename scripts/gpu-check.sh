#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU: builds the GPU parts,
# runs every GPU test and the GPU benchmarks, and writes a short report.
#
#   bash scripts/gpu-check.sh [REPORT_DIR]     (default: gpu-report/)
#
# With LLVM/MLIR 22 installed it builds the whole project (CUDA parts
# included) and runs the lit tests that need a device; without them (a bare
# GPU machine) it builds the GPU compute library alone (runtime/cuda). The
# report: REPORT_DIR/summary.txt (tests, then the benchmark table), with
# each step's full log beside it. Exit status: non-zero when a test failed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
report=${1:-$root/gpu-report}
mkdir -p "$report"
summary=$report/summary.txt
: >"$summary"
say() { echo "$@" | tee -a "$summary"; }
export PATH=/usr/local/cuda/bin:$PATH

say "== gpu-check $(date -u +%F' '%T) on $(hostname)"
if ! nvidia-smi -L >"$report/devices.txt" 2>&1; then
  say "no NVIDIA GPU here (nvidia-smi -L failed): nothing to check"
  exit 0
fi
say "$(cat "$report/devices.txt")"
status=0

if [ -x /usr/lib/llvm-22/bin/mlir-opt ] && [ -z "${MUON_GPU_CHECK_STANDALONE:-}" ]; then
  say "== full build (LLVM/MLIR 22 found)"
  if ! bash "$root/scripts/build.sh" >"$report/build.log" 2>&1; then
    say "build FAILED (see build.log)"; exit 1
  fi
  lib=$root/build/lib/libmuon_runtime_cuda.so
  check=$root/build/bin/muon-cuda-ns-check
  (cd "$root/build" && /usr/lib/llvm-22/bin/lit -v test \
      --filter-out 'Run/|Examples/|Fuzz/' ) >"$report/lit.log" 2>&1 || status=1
  say "lit (GPU-relevant suites): $(grep -E '^ *(Passed|Failed|Unsupported)' "$report/lit.log" | tr -s ' ' | tr '\n' ' ')"
else
  say "== standalone build of runtime/cuda (no LLVM/MLIR 22 here)"
  build=$root/build-cuda
  if ! { cmake -S "$root/runtime/cuda" -B "$build" -G Ninja \
           -DCMAKE_BUILD_TYPE=Release && cmake --build "$build"; } \
         >"$report/build.log" 2>&1; then
    say "build FAILED (see build.log)"; tail -20 "$report/build.log"; exit 1
  fi
  lib=$build/lib/libmuon_runtime_cuda.so
  check=$build/bin/muon-cuda-ns-check
fi

say "== Newton-Schulz against a float64 reference (muon-cuda-ns-check)"
"$check" >"$report/ns-check.log" 2>&1
rc=$?
cat "$report/ns-check.log" >>"$summary"
cat "$report/ns-check.log"
[ $rc -eq 0 ] || status=1

say "== benchmark: bench/gpu/ns.py"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/ns.py" --lib "$lib" \
      ${MUON_GPU_BENCH_ARGS:---sweep --fp32} >"$report/bench-ns.log" 2>&1 || status=1
  cat "$report/bench-ns.log" | tee -a "$summary"
else
  say "skipped: no PyTorch with CUDA in python3"
fi
say "== gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
