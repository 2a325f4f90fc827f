#!/usr/bin/env bash
# Runs the whole test suite (lit, unit tests, MPI equivalence matrix) on the
# AddressSanitizer + UndefinedBehaviorSanitizer build that scripts/fuzz.sh
# uses (clang, build-fuzz/): any sanitizer report fails its test. The
# find_package consumer test is unsupported there (an outside g++ project
# cannot link instrumented archives), and the Python tests are left to the
# main build. Ends with the summary line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(bash "$root/scripts/configure-fuzz-build.sh")
# allow_user_poisoning=0: LLVM's allocator templates, instrumented in our
# code, poison slabs that the uninstrumented libMLIR.so writes into.
export ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0
# The Python package is not built here (an instrumented extension would need
# the sanitizer runtime preloaded into Python): its tests run on the main
# build (scripts/test.sh without this variable).
MUON_BUILD_DIR=$build MUON_TEST_PYTHON=0 exec bash "$root/scripts/test.sh" "$@"
