#!/usr/bin/env bash
# Builds the libFuzzer target with clang and AddressSanitizer +
# UndefinedBehaviorSanitizer (build-fuzz/), seeds a corpus from the test
# suite and the step generator, and fuzzes for SECONDS (default 60).
# Crashing inputs are written to build-fuzz/findings/; each one found
# becomes a regression test.
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
build=$(bash "$root/scripts/configure-fuzz-build.sh")
cmake --build "$build" --target muon-fuzz
corpus=$build/corpus
bash "$root/scripts/make-fuzz-corpus.sh" "$corpus"
mkdir -p "$build/findings"
# libFuzzer writes fuzz-N.log into the working directory with -jobs.
cd "$build"
"$build/bin/muon-fuzz" "$corpus" \
  -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
  -artifact_prefix="$build/findings/" -print_final_stats=1 "$@"
