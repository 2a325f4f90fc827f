#!/usr/bin/env bash
# Configures the clang AddressSanitizer + UndefinedBehaviorSanitizer build
# with the libFuzzer target (one build serves scripts/fuzz.sh and
# scripts/sanitize.sh). Prints the build directory.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_FUZZ_BUILD_DIR:-$root/build-fuzz}
bash "$root/scripts/setup.sh" sanitizer >&2
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DMUON_SANITIZE=address,undefined -DMUON_BUILD_FUZZER=ON >&2
fi
echo "$build"
