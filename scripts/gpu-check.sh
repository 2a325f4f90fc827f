#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU: builds the GPU parts,
# runs every GPU test and the GPU benchmarks, and writes a short report.
#
#   bash scripts/gpu-check.sh [REPORT_DIR]     (default: gpu-report/)
#
# With LLVM/MLIR 22 installed it builds the whole project (CUDA parts
# included) and runs the lit tests that need a device; without them (a bare
# GPU machine) it builds the GPU compute library alone (runtime/cuda), and
# MUON_GPU_BUNDLE=FILE (scripts/make-gpu-bundle.sh, made on a machine with
# the build) runs the whole-step checks there too. The report:
# REPORT_DIR/summary.txt (checks, then the benchmark tables), with each
# step's full log beside it. MUON_GPU_BENCH_ARGS replaces bench/gpu/ns.py's
# options (default "--sweep --fp32"); MUON_GPU_CHECK_QUICK=1 skips that
# benchmark, the per-kernel profile (bench/gpu/ns_profile.py) and
# bench/gpu/ns_stack_ab.sh (a re-check after a change that
# cannot move them). MUON_GPU_FLOOR_TRIALS (default 2, 0 skips) sets the
# trials of bench/cpu/floor.py, the CPU step against its no-communication
# floor on this machine's quiet cores. Exit status: non-zero when a check
# failed.
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
# 77: the program found no usable device although nvidia-smi listed one.
[ $rc -eq 0 ] || status=1

# The NCCL transport's collectives on this machine's first GPU.
ncclcheck=$(dirname "$check")/muon-nccl-check
if [ -x "$ncclcheck" ]; then
  say "== the NCCL transport's collectives (muon-nccl-check)"
  "$ncclcheck" >"$report/nccl-check.log" 2>&1 || status=1
  cat "$report/nccl-check.log" | tee -a "$summary"
fi

# The whole step with target=cuda (muon-run): the full build's muon-run, or
# a bundle made by scripts/make-gpu-bundle.sh on a machine with LLVM 22.
muonrun=""
if [ -x "$root/build/bin/muon-run" ] && [ -z "${MUON_GPU_CHECK_STANDALONE:-}" ]; then
  muonrun=$root/build/bin/muon-run
elif [ -n "${MUON_GPU_BUNDLE:-}" ]; then
  bundle=$(mktemp -d)
  xz -dc "$MUON_GPU_BUNDLE" | tar -C "$bundle" -xf -
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  muonrun=$bundle/bin/muon-run
  # The bundle's Open MPI launches the ranks (its libmpi is the one muon-run
  # loads, so a machine's own mpirun of another MPI would not do).
  if [ -x "$bundle/bin/mpirun" ]; then
    export PATH=$bundle/bin:$PATH OPAL_PREFIX=$bundle
    # The bundle's PMIx looks for its optional plugins where it was built
    # (/usr/lib/x86_64-linux-gnu/pmix2): a machine's own PMIx of another
    # version there has plugins it cannot load. Those are skipped either
    # way (its built-in components suffice on one node); say nothing of it.
    export PMIX_MCA_pmix_mca_base_component_show_load_errors=0
    export PMIX_MCA_pcompress_base_silence_warning=1
  fi
  # The GPU libraries built here, against this machine's CUDA and NCCL.
  export MUON_RT_CUDA_LIBRARY=$lib
  [ -f "$(dirname "$lib")/libmuon_runtime_nccl.so" ] &&
    export MUON_RT_NCCL_LIBRARY=$(dirname "$lib")/libmuon_runtime_nccl.so
fi
step_check() { # NAME ARGS...: one muon-run; its verdict and timing
  local name=$1; shift
  local log="$report/step-${name// /-}.log"
  "$muonrun" "$@" >"$log" 2>&1
  local rc=$? verdict
  verdict=$(grep -E '^(PASS|FAIL)' "$log" | tail -1)
  # No verdict: the first error line says why (the runtime's, else muon-run's).
  [ -n "$verdict" ] || verdict="no verdict (rc $rc): $(grep -m1 -E 'muon-rt: error|muon-run: error|error:' "$log")"
  say "$(printf '%-24s %s' "$name" "$verdict")"
  grep -q '^time:' "$log" && say "$(printf '%-24s %s' "" "$(grep -E '^time:' "$log")")"
  [ $rc -eq 0 ] || status=1
}
if [ -n "$muonrun" ]; then
  # Every collective of the runtime on device buffers of this GPU, 3 ranks
  # sharing it over MPI (test/Runtime/collectives-cuda.test).
  say "== the runtime's collectives on device buffers (muon-runtime-collectives-check device)"
  log="$report/collectives-device.log"
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 \
      "$(dirname "$muonrun")/muon-runtime-collectives-check" device >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && ! grep -q MISMATCH "$log"; then
    say "$(printf '%-24s %s' "collectives, 3 ranks" "PASS: $(grep -c '^ok ' "$log") cases")"
  else
    say "$(printf '%-24s %s' "collectives, 3 ranks" "FAIL (rc $rc): $(grep -m1 -E 'MISMATCH|muon-rt: error' "$log")")"; status=1
  fi
  # An entry argument in host memory handed to a target=cuda step stops the
  # job, naming the argument and the GPU (CUDA's own pointer attributes
  # here; test/Runtime/collectives.test checks it with a stand-in library).
  log="$report/host-arg.log"
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 \
      "$(dirname "$muonrun")/muon-runtime-collectives-check" host-arg >"$log" 2>&1
  if grep -q 'check_arg on cuda: entry argument #7 is in host memory' "$log" &&
     ! grep -q 'entry argument #0' "$log"; then
    say "$(printf '%-24s %s' "host-memory argument" "refused as expected: $(grep -m1 'muon-rt: error' "$log")")"
  else
    say "$(printf '%-24s %s' "host-memory argument" "FAIL: no clear error (see $(basename "$log"))")"; status=1
  fi
  say "== the step with target=cuda against the single-device reference (muon-run)"
  steps=$(mktemp -d)
  gen=$root/test/Run/Inputs/gen_step.py
  bf16() { sed 's/{lr = 0.02 : f64,/{lr = 0.02 : f64, ns_dtype = bf16,/' "$1"; }
  python3 "$gen" --mesh dp=1 --big >"$steps/one.mlir"
  python3 "$gen" --mesh dp=2,tp=2 --big >"$steps/four.mlir"
  bf16 "$steps/one.mlir" >"$steps/one-bf16.mlir"
  bf16 "$steps/four.mlir" >"$steps/four-bf16.mlir"
  bf16 "$root/examples/llama-tp-fsdp.mlir" >"$steps/main-bf16.mlir"
  step_check "1 rank fp32" --target cuda --steps 5 "$steps/one.mlir"
  step_check "4 ranks on 1 GPU fp32" --target cuda --steps 5 "$steps/four.mlir"
  # bf16 against the fp32 reference: about 1% per orthogonalised update,
  # which at lr 0.02 reaches the 1e-3 tolerance on the smallest matrices
  # after 4-5 steps (the CPU's bf16 emulation as well): 3 steps, as in
  # test/Run/cuda-target.test.
  step_check "1 rank bf16" --target cuda --steps 3 --rtol 1e-3 --atol 1e-3 "$steps/one-bf16.mlir"
  step_check "4 ranks on 1 GPU bf16" --target cuda --steps 3 --rtol 1e-3 --atol 1e-3 "$steps/four-bf16.mlir"
  if [ -f "$(dirname "$lib")/libmuon_runtime_nccl.so" ]; then
    step_check "1 rank nccl fp32" --target cuda --transport nccl --steps 5 "$steps/one.mlir"
    step_check "1 rank nccl bf16" --target cuda --transport nccl --steps 3 --rtol 1e-3 --atol 1e-3 "$steps/one-bf16.mlir"
    # A transport library that cannot be loaded is named (as
    # test/Run/nccl-transport.test checks).
    log="$report/step-nccl-missing-library.log"
    MUON_RT_NCCL_LIBRARY=$steps/missing.so "$muonrun" --target cuda --transport nccl --steps 1 "$steps/one.mlir" >"$log" 2>&1
    if grep -q 'init on nccl: cannot load the NCCL transport' "$log"; then
      say "$(printf '%-24s %s' "nccl library missing" "refused as expected: $(grep -m1 'muon-rt: error' "$log")")"
    else
      say "$(printf '%-24s %s' "nccl library missing" "FAIL: no clear error (see $(basename "$log"))")"; status=1
    fi
    gpus=$(grep -c '^GPU ' "$report/devices.txt")
    if [ "$gpus" -ge 4 ]; then
      step_check "4 ranks nccl fp32" --target cuda --transport nccl --steps 5 "$steps/four.mlir"
    else
      # One GPU per rank: 4 ranks on fewer GPUs must stop with the cause.
      log="$report/step-4-ranks-nccl-shared.log"
      "$muonrun" --target cuda --transport nccl --steps 1 "$steps/four.mlir" >"$log" 2>&1
      if grep -q 'init on nccl: this rank and rank [0-3] share GPU' "$log"; then
        say "$(printf '%-24s %s' "4 ranks nccl, $gpus GPU" "refused as expected: $(grep -m1 'muon-rt: error' "$log")")"
      else
        say "$(printf '%-24s %s' "4 ranks nccl, $gpus GPU" "FAIL: no clear error (see $(basename "$log"))")"; status=1
      fi
    fi
  else
    say "nccl transport: not built here (no NCCL found by CMake)"
  fi
  step_check "main example cpu" --steps 3 "$root/examples/llama-tp-fsdp.mlir"
  step_check "main example cuda fp32" --target cuda --steps 3 --trace "$report/trace-main-cuda.json" "$root/examples/llama-tp-fsdp.mlir"
  step_check "main example cuda bf16" --target cuda --steps 3 --rtol 1e-3 --atol 1e-3 "$steps/main-bf16.mlir"
else
  say "== the step with target=cuda: skipped (no muon-run: build with LLVM 22, or pass MUON_GPU_BUNDLE)"
fi

# The Python package's GPU tests (CUDA tensors through muon.compile and
# muon.optim.Muon): the build's package, or the bundle's when it carries
# one for this python3 (make-gpu-bundle.sh with MUON_BUNDLE_PYTHON).
pypkg=""
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
if [ -n "$muonrun" ] && [ -f "$(dirname "$muonrun")/../python/muon/_muon$suffix" ]; then
  pypkg=$(cd "$(dirname "$muonrun")/../python" && pwd)
fi
say "== the Python package on the GPU (pytest -k cuda)"
if [ -z "$pypkg" ]; then
  say "skipped: no build of the Python package for $(python3 --version 2>&1) here"
elif ! python3 -c 'import torch, pytest; assert torch.cuda.is_available()' 2>/dev/null; then
  say "skipped: python3 has no PyTorch with CUDA, or no pytest"
else
  log="$report/python-cuda.log"
  PYTHONPATH=$pypkg:$root/python/tests MUON_TEST_INSTALLED=1 python3 -m pytest -q \
      -p no:cacheprovider "$root/python/tests/test_run.py" \
      "$root/python/tests/test_torch.py" -k cuda >"$log" 2>&1 || status=1
  say "python tests: $(tail -1 "$log")"
fi

say "== benchmark: bench/gpu/ns.py"
if [ -n "${MUON_GPU_CHECK_QUICK:-}" ]; then
  say "skipped: MUON_GPU_CHECK_QUICK is set"
elif python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/ns.py" --lib "$lib" \
      ${MUON_GPU_BENCH_ARGS:---sweep --fp32} >"$report/bench-ns.log" 2>&1 || status=1
  cat "$report/bench-ns.log" | tee -a "$summary"
  say "== where one call's GPU time goes (bench/gpu/ns_profile.py)"
  PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/ns_profile.py" --lib "$lib" \
      >"$report/bench-ns-profile.log" 2>&1 || status=1
  grep -v -i warn "$report/bench-ns-profile.log" | tee -a "$summary"
else
  say "skipped: no PyTorch with CUDA in python3"
fi
if [ -n "$muonrun" ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  say "== the main example beside torch.optim.Muon on the GPU (bench/compare/muon_baselines.py)"
  PYTHONUNBUFFERED=1 python3 "$root/bench/compare/muon_baselines.py" --device cuda \
      --muon-run "$muonrun" --steps 5 >"$report/bench-step.log" 2>&1 || status=1
  tail -4 "$report/bench-step.log" | tee -a "$summary"
fi
if [ -n "$muonrun" ]; then
  say "== stacked Newton-Schulz against one call per matrix (bench/gpu/ns_stack_ab.sh)"
  if [ -n "${MUON_GPU_CHECK_QUICK:-}" ]; then
    say "skipped: MUON_GPU_CHECK_QUICK is set"
  else
    MUON_RUN=$muonrun bash "$root/bench/gpu/ns_stack_ab.sh" 2 >"$report/bench-ns-stack.log" 2>&1 || status=1
    cat "$report/bench-ns-stack.log" | tee -a "$summary"
  fi
fi
# The CPU step on this machine's cores, which (unlike a shared 2-core
# developer machine) other work does not take: its overhead over the
# no-communication floor. MUON_GPU_FLOOR_TRIALS trials (default 2; 0 skips).
trials=${MUON_GPU_FLOOR_TRIALS:-2}
if ! [[ "$trials" =~ ^[0-9]+$ ]]; then
  say "MUON_GPU_FLOOR_TRIALS=$trials is not a number of trials"; status=1
  trials=0
fi
trials=$((10#$trials))
if [ -n "$muonrun" ] && [ "$trials" -gt 0 ]; then
  say "== the CPU step against its no-communication floor (bench/cpu/floor.py, $trials trials)"
  bin=$(dirname "$muonrun")
  floor_args=(--trials "$trials")
  # A bundle carries the floor's program and the owners' shapes; a full
  # build computes both itself.
  ready=1
  if [ -f "$bin/../floor-owners.json" ] && [ -x "$bin/muon-bench-ns-work" ]; then
    floor_args+=(--bin "$bin" --owners "$bin/../floor-owners.json")
  elif [ ! -x "$root/build/bin/muon-opt" ]; then
    ready=0
  fi
  if [ $ready -eq 1 ]; then
    PYTHONUNBUFFERED=1 python3 "$root/bench/cpu/floor.py" "${floor_args[@]}" \
        >"$report/bench-floor.log" 2>&1 || status=1
    tee -a "$summary" <"$report/bench-floor.log"
  else
    say "skipped: the bundle has no muon-bench-ns-work and floor-owners.json (made before it carried them)"
  fi
fi
say "== gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
