#!/usr/bin/env bash
# Runs the whole test suite (lit, unit tests, MPI equivalence matrix) on the
# AddressSanitizer + UndefinedBehaviorSanitizer build that scripts/fuzz.sh
# uses (clang, build-fuzz/): any sanitizer report fails its test. The
# find_package consumer test is unsupported there (an outside g++ project
# cannot link instrumented archives). Ends with the summary line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(bash "$root/scripts/configure-fuzz-build.sh")
# allow_user_poisoning=0: LLVM's allocator templates, instrumented in our
# code, poison slabs that the uninstrumented libMLIR.so writes into.
export ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0
MUON_BUILD_DIR=$build exec bash "$root/scripts/test.sh" "$@"
