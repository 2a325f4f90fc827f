#!/usr/bin/env bash
# Runs every test: sets up, builds, then runs the lit suite (regression tests,
# GoogleTest unit tests, the LSP and find_package consumer tests) and the
# Python package's pytest suite (python/tests). Ends with a one-line summary
# "N passed, N failed, N skipped" over both.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh Dialect/Dist    # a sub-directory of test/ only (no pytest)
#   scripts/test.sh python          # the pytest suite only
# MUON_TEST_PYTHON=0 leaves the pytest suite out (scripts/sanitize.sh: that
# build has no Python package).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MUON_BUILD_DIR:-$root/build}

bash "$root/scripts/build.sh"
cmake --build "$build" --target MuonUnitTests

log=$(mktemp)
pylog=$(mktemp)
status=0
if [ "${1:-}" != python ]; then
  target="$build/test${1:+/$1}"
  /usr/lib/llvm-22/bin/lit -sv "$target" 2>&1 | tee "$log" || status=$?
fi
if [ "${MUON_TEST_PYTHON:-1}" = 0 ]; then
  echo "test: the Python tests are not run on this build (MUON_TEST_PYTHON=0)"
elif [ -z "${1:-}" ] || [ "${1:-}" = python ]; then
  # The Python package must have been built (nanobind from scripts/setup.sh):
  # a missing extension is a failure, not a skip.
  if ls "$build"/python/muon/_muon*.so >/dev/null 2>&1; then
    (cd "$root/python/tests" && MUON_BUILD_DIR="$build" \
      PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
      python3 -m pytest -q -rs -p no:cacheprovider .) 2>&1 | tee "$pylog" \
      || status=$?
  else
    echo "test: the Python package was not built ($build/python/muon);" \
         "scripts/setup.sh installs nanobind" | tee "$pylog"
    echo "1 failed" >> "$pylog"
    status=1
  fi
fi
python3 - "$log" "$pylog" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def count(label):
    m = re.search(r"^\s*%s\s*:\s*(\d+)" % label, text, re.M)
    return int(m.group(1)) if m else 0
passed = count("Passed") + count("Expectedly Failed")
failed = count("Failed") + count("Unexpectedly Passed") + count("Timed Out")
skipped = count("Unsupported") + count("Skipped") + count("Excluded")
# pytest's last line: "N passed, M failed, K skipped, E errors in T s"
lines = [l for l in open(sys.argv[2]).read().splitlines() if l.strip()]
last = lines[-1] if lines else ""
def py(label):
    m = re.search(r"(\d+) %s" % label, last)
    return int(m.group(1)) if m else 0
passed += py("passed")
failed += py("failed") + py("errors?")
skipped += py("skipped")
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
PY
rm -f "$log" "$pylog"
exit $status
