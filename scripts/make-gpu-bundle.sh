#!/usr/bin/env bash
# Packs muon-run for a GPU machine that has no LLVM/MLIR 22 (the usual
# rented or lent GPU box): muon-run linked against LLVM/MLIR's static
# archives (no libLLVM/libMLIR needed), the runtime libraries (CPU and
# CUDA), memrefCopy (the C runner utility compiled steps call) and the BLAS
# it was built with, and Open MPI (mpirun, its libraries and the plugins
# that need nothing beyond them), relocated with OPAL_PREFIX: GPU images
# rarely have MPI. The CUDA driver and cuBLAS come from the target machine.
# Also muon-bench-ns-work and floor-owners.json, for bench/cpu/floor.py on
# the GPU machine's CPU cores.
# With MUON_BUNDLE_PYTHON=PYTHON also the Python package, built for that
# Python (scripts/bundle-python-extension.sh: e.g. a Python 3.12 with
# nanobind, for GPU machines whose python3 with PyTorch is 3.12).
#
#   bash scripts/make-gpu-bundle.sh OUT.tar.xz     (after scripts/build.sh)
#
# On the GPU machine: scripts/gpu-check.sh with MUON_GPU_BUNDLE=OUT.tar.xz
# unpacks it and runs the end-to-end step checks with it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:?usage: make-gpu-bundle.sh OUT.tar.xz}")
build=${MUON_BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22/lib
[ -f "$build/lib/libmuon_runtime_cuda.so" ] ||
  { echo "make-gpu-bundle: build with the CUDA parts first (scripts/build.sh)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cd "$build"
# The project's archives as the build links muon-run (read from its link
# command, so a new library needs no change here), then the archives of
# LLVM and MLIR in one group: the linker takes what the objects reference.
muon_archives=$(ninja -t commands bin/muon-run | tail -1 | tr ' ' '\n' |
  grep -E '^lib/libMuon[A-Za-z]*\.a$')
g++ -O2 -s -o "$stage/bin/muon-run" tools/muon-run/CMakeFiles/muon-run.dir/*.o \
  -Wl,--start-group $muon_archives -Wl,--end-group \
  -Wl,--start-group "$llvm"/libMLIR*.a "$llvm"/libLLVM*.a -Wl,--end-group \
  lib/libmuon_runtime.so -lopenblas -lz -lzstd -ltinfo -lpthread -ldl \
  -Wl,--gc-sections -Wl,-rpath,'$ORIGIN/../lib'
cp lib/libmuon_runtime.so lib/libmuon_runtime_cuda.so "$stage/lib/"
# The runtime's collectives on device buffers, checked on data by
# scripts/gpu-check.sh (it needs only libmuon_runtime.so).
cp bin/muon-runtime-collectives-check "$stage/bin/"
# The CPU step against its no-communication floor on the GPU machine's
# quiet cores (bench/cpu/floor.py --bin --owners): the floor's program and
# the owners' shapes, which need muon-opt (not bundled) to compute.
cmake --build . --target muon-bench-ns-work >/dev/null
cp bin/muon-bench-ns-work "$stage/bin/"
python3 "$root/bench/cpu/floor.py" "$build" --write-owners "$stage/floor-owners.json"
# memrefCopy, the C runner utility compiled steps call, is in the runtime.
for dep in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L "$(ldconfig -p | awk -v d=$dep '$1 == d && !found {print $NF; found = 1}')" "$stage/lib/$dep"
done
# The runtime's own BLAS when the build chose scipy-openblas32
# (cmake/MuonBlas.cmake): it lives in the build machine's site-packages.
scipy_blas=$(ldd lib/libmuon_runtime.so | awk '$1 == "libscipy_openblas.so" {print $3}')
if [ -n "$scipy_blas" ]; then cp -L "$scipy_blas" "$stage/lib/"; fi
# Open MPI, relocatable: OPAL_PREFIX=<bundle> makes it look for its plugins
# and help texts under the bundle in the layout its build recorded (Debian:
# lib/x86_64-linux-gnu/openmpi/lib/openmpi3, share/openmpi). Plugins whose
# libraries are not part of the bundle (InfiniBand, UCX, OFI, OpenSHMEM) are
# left out, so Open MPI does not warn about each one on a one-node machine.
if command -v ompi_info >/dev/null; then
  libdir=$(ompi_info --path libdir --parsable | cut -d: -f3)
  pkglibdir=$(ompi_info --path pkglibdir --parsable | cut -d: -f3)
  pkgdatadir=$(ompi_info --path pkgdatadir --parsable | cut -d: -f3)
  prefix=$(ompi_info --path prefix --parsable | cut -d: -f3)
  relative() { echo "${1#"$prefix"/}"; }
  cp -L "$(readlink -f "$(command -v mpirun)")" "$stage/bin/mpirun"
  cp -L "$(command -v orted)" "$stage/bin/orted" 2>/dev/null || true
  mkdir -p "$stage/$(relative "$pkglibdir")" "$stage/$(relative "$pkgdatadir")"
  cp -r "$pkgdatadir/." "$stage/$(relative "$pkgdatadir")/"
  # The libraries of Open MPI's core and of its plain plugins.
  mpi_lib() { # NAME: the library the loader resolves for mpirun's plugins
    # (awk reads to the end: an early exit would end ldconfig with SIGPIPE,
    # which pipefail turns into a failure of the whole script)
    ldconfig -p | awk -v d="$1" '$1 == d && !found {print $NF; found = 1}'
  }
  keep="libmpi.so.40 libopen-rte.so.40 libopen-pal.so.40 libhwloc.so.15
        libevent_core-2.1.so.7 libevent_pthreads-2.1.so.7 libudev.so.1
        libpmix.so.2 libmunge.so.2"
  for dep in $keep; do
    path=$(mpi_lib "$dep")
    if [ -n "$path" ]; then cp -L "$path" "$stage/lib/$dep"; fi
  done
  for common in "$libdir"/libmca_common_{sm,ompio,monitoring}.so; do
    [ -e "$common" ] || continue
    real=$(readlink -f "$common")
    soname=$(objdump -p "$real" | awk '$1 == "SONAME" {print $2}')
    cp -L "$real" "$stage/lib/$soname"
  done
  system='^(linux-vdso|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux|libz\.so|libgcc_s\.so)'
  for plugin in "$pkglibdir"/*.so; do
    missing=0
    for dep in $(ldd "$plugin" | awk '{sub(".*/", "", $1); print $1}' | grep -vE "$system"); do
      [ -e "$stage/lib/$dep" ] || { missing=1; break; }
    done
    [ $missing -eq 0 ] && cp "$plugin" "$stage/$(relative "$pkglibdir")/"
  done
  echo "make-gpu-bundle: Open MPI $(ompi_info --version | awk 'NR==1 {print $NF}') with $(ls "$stage/$(relative "$pkglibdir")" | wc -l) plugins"
fi
# The Python package for the GPU machine's Python (MUON_BUNDLE_PYTHON: an
# interpreter of that version with nanobind), so gpu-check.sh can run the
# Python GPU tests there.
if [ -n "${MUON_BUNDLE_PYTHON:-}" ]; then
  bash "$root/scripts/bundle-python-extension.sh" "$stage" "$MUON_BUNDLE_PYTHON"
fi
tar -C "$stage" -cf - . | xz -T0 -6 >"$out"
echo "make-gpu-bundle: $out ($(du -h "$out" | cut -f1))"
