#!/usr/bin/env bash
# Writes a seed corpus for muon-fuzz into DIR: every split of every .mlir
# test and example (one file per "// -----" section), and valid steps of
# every layout from the step generator on several meshes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$1
mkdir -p "$dir"
python3 - "$root" "$dir" <<'PY'
import glob, hashlib, os, subprocess, sys
root, out = sys.argv[1], sys.argv[2]
def put(text):
    if text.strip():
        name = hashlib.sha1(text.encode()).hexdigest()
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
for path in glob.glob(f"{root}/test/**/*.mlir", recursive=True) + \
        glob.glob(f"{root}/examples/*.mlir"):
    for part in open(path).read().split("// -----"):
        put(part)
for mesh in ["dp=1", "dp=2", "dp=2,tp=2", "dp=3", "dp=2,fsdp=2,tp=2"]:
    text = subprocess.run([sys.executable,
                           f"{root}/test/Run/Inputs/gen_step.py", "--mesh",
                           mesh], capture_output=True, text=True).stdout
    put(text)
PY
