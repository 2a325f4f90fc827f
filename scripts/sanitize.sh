#!/usr/bin/env bash
# Runs the whole test suite (lit, unit tests, MPI equivalence matrix) on the
# AddressSanitizer + UndefinedBehaviorSanitizer build that scripts/fuzz.sh
# uses (clang, build-fuzz/): any sanitizer report fails its test. The
# find_package consumer test is unsupported there (an outside g++ project
# cannot link instrumented archives). Ends with the summary line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_FUZZ_BUILD_DIR:-$root/build-fuzz}
bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DMUON_SANITIZE=address,undefined -DMUON_BUILD_FUZZER=ON
fi
# allow_user_poisoning=0: LLVM's allocator templates, instrumented in our
# code, poison slabs that the uninstrumented libMLIR.so writes into.
export ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0
MUON_BUILD_DIR=$build exec bash "$root/scripts/test.sh" "$@"
