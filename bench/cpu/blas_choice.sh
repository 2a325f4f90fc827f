#!/usr/bin/env bash
# Which BLAS is fastest for the runtime's Newton-Schulz on this machine:
# single-thread sgemm and ssyrk (bench/cpu/blas_rate.c) of Debian's
# OpenBLAS (the runtime's with MUON_BLAS=system), PyPI's scipy-openblas32
# (a current OpenBLAS; the runtime's by default) and PyPI's MKL,
# alternating runs so that load drifts hit all
# alike. Downloads the wheels into a temporary directory (about 230 MB).
#
#   bash bench/cpu/blas_choice.sh [ROUNDS]      (default 3)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rounds=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$root/bench/cpu/blas_rate.c
pip download -q --no-deps -d "$tmp/w" scipy-openblas32 mkl mkl-include \
  "intel-openmp<2027,>=2025" "tbb==2023.*" >/dev/null
for w in "$tmp"/w/*.whl; do (cd "$tmp" && unzip -q -o "$w"); done
sci=$(dirname "$(find "$tmp" -name 'libscipy_openblas.so' | head -1)")
mkl=$(dirname "$(find "$tmp" -name 'libmkl_rt.so.*' | head -1)")
mklinc=$(dirname "$(find "$tmp" -name 'mkl_cblas.h' | head -1)")
deb=/usr/include/x86_64-linux-gnu/openblas-pthread
cc -O2 -DBLAS_HEADER='<cblas.h>' -I"$deb" "$src" -o "$tmp/debian" -lopenblas
cc -O2 -DBLAS_HEADER='<cblas.h>' -Dcblas_sgemm=scipy_cblas_sgemm \
  -Dcblas_ssyrk=scipy_cblas_ssyrk -I"$sci/../include" "$src" -o "$tmp/scipy" \
  -L"$sci" -lscipy_openblas -Wl,-rpath,"$sci"
cc -O2 -DBLAS_HEADER='<mkl_cblas.h>' -I"$mklinc" "$src" -o "$tmp/mkl" \
  "$(find "$mkl" -name 'libmkl_rt.so.*' | head -1)" -Wl,-rpath,"$mkl"
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 MKL_THREADING_LAYER=SEQUENTIAL
for r in $(seq "$rounds"); do
  for lib in debian scipy mkl; do
    "$tmp/$lib" | sed "s/^/$lib /"
  done
done | python3 -c '
import sys, collections
best = collections.defaultdict(float)
for line in sys.stdin:
    lib, what, _, rate, _ = line.split()
    best[(lib, what)] = max(best[(lib, what)], float(rate))
names = {"debian": "Debian OpenBLAS", "scipy": "scipy-openblas32 (default)",
         "mkl": "MKL (PyPI)"}
print("%-26s %14s %14s  (best of all runs)" % ("", "sgemm GFLOP/s", "ssyrk GFLOP/s"))
for lib in ("debian", "scipy", "mkl"):
    print("%-26s %14.1f %14.1f" % (names[lib], best[(lib, "sgemm")], best[(lib, "ssyrk")]))
'
