#!/usr/bin/env bash
# Builds the project with its assert()s enabled (MUON_ENABLE_ASSERTIONS=ON,
# in build-assert/) and runs the whole test suite there. Release builds
# compile the assertions away, so a failed cast<> or invariant can pass there
# by luck; this configuration catches it. Ends with the suite's summary line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_ASSERT_BUILD_DIR:-$root/build-assert}
bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMUON_ENABLE_ASSERTIONS=ON
fi
MUON_BUILD_DIR=$build exec bash "$root/scripts/test.sh" "$@"
