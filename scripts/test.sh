#!/usr/bin/env bash
# Runs every test: sets up, builds, then runs the lit suite (regression tests,
# GoogleTest unit tests, the LSP and find_package consumer tests). Ends with a
# one-line summary "N passed, N failed, N skipped".
#
#   scripts/test.sh                 # everything
#   scripts/test.sh Dialect/Dist    # a sub-directory of test/ only
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_BUILD_DIR:-$root/build}

bash "$root/scripts/build.sh"
cmake --build "$build" --target MuonUnitTests

target="$build/test${1:+/$1}"
log=$(mktemp)
status=0
/usr/lib/llvm-22/bin/lit -sv "$target" 2>&1 | tee "$log" || status=$?
python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def count(label):
    m = re.search(r"^\s*%s\s*:\s*(\d+)" % label, text, re.M)
    return int(m.group(1)) if m else 0
passed = count("Passed") + count("Expectedly Failed")
failed = count("Failed") + count("Unexpectedly Passed") + count("Timed Out")
skipped = count("Unsupported") + count("Skipped") + count("Excluded")
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
PY
rm -f "$log"
exit $status
