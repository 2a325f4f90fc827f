#!/usr/bin/env bash
# Installs every system dependency of the project, idempotently.
#   scripts/setup.sh             # what the main build and tests need
#   scripts/setup.sh sanitizer   # and clang for the sanitizer/fuzz build
# Safe to run repeatedly: it only calls apt-get when something is missing.
set -euo pipefail

PACKAGES=(
  # LLVM/MLIR 22 (CMake packages, mlir-tblgen, lit, FileCheck, mlir-runner)
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # build
  cmake ninja-build g++ python3
  # unit tests
  googletest libgtest-dev
  # runtime: MPI (CPU backend) and BLAS
  libopenmpi-dev openmpi-bin libopenblas-dev
  # LLVM's CMake config references these libraries
  zlib1g-dev libzstd-dev libxml2-dev libedit-dev libffi-dev libncurses-dev
)

# `setup.sh sanitizer`: also clang and its runtimes (ASan, UBSan, libFuzzer)
# for the sanitizer/fuzz build.
if [ "${1:-}" = sanitizer ]; then
  PACKAGES+=(clang libclang-rt-dev)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all system packages present"
fi

# The Python package's build and tests (PyPI): nanobind builds the
# extension; numpy, pytest, pandas and torch (the PyTorch frontend) run
# its tests; scipy-openblas32 is the runtime's BLAS (a current OpenBLAS
# that is fast on every x86 CPU; cmake/MuonBlas.cmake). `setup.sh
# sanitizer` skips them (the sanitizer build leaves the Python package out
# and links the system's OpenBLAS unless this is installed).
if [ "${1:-}" != sanitizer ]; then
  PY_PACKAGES=(nanobind numpy pytest pandas torch scipy-openblas32)
  if ! python3 -c "import nanobind, numpy, pytest, pandas, torch, scipy_openblas32" 2>/dev/null; then
    echo "setup: installing ${PY_PACKAGES[*]} from PyPI"
    python3 -m pip install -q --disable-pip-version-check \
      --root-user-action=ignore "${PY_PACKAGES[@]}"
  fi
fi
