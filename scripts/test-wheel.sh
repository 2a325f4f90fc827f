#!/usr/bin/env bash
# Builds the Python package as a wheel (pyproject.toml, scikit-build-core:
# only the extension and the runtime, about 3 minutes on 2 cores), installs
# it into a fresh virtual environment (with the system's site packages for
# numpy, torch, pytest) and runs the Python tests against the installed
# package instead of the build tree. Ends with pytest's summary line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip wheel "$root" -w "$work/dist" --no-deps -q
python3 -m venv "$work/venv" --system-site-packages
"$work/venv/bin/pip" install -q --no-deps "$work"/dist/*.whl
# The tests find muon-opt and the generator in the build tree, the package
# in the environment (PYTHONPATH is not set to build/python).
cd "$root/python/tests"
"$work/venv/bin/python" -c "import muon, sys; print('testing', muon.__file__)"
env -u PYTHONPATH MUON_TEST_INSTALLED=1 PATH="$work/venv/bin:$PATH" \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider .
