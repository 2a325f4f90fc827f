#!/usr/bin/env bash
# Packs muon-run for a GPU machine that has no LLVM/MLIR 22 (the usual
# rented or lent GPU box): muon-run linked against LLVM/MLIR's static
# archives (no libLLVM/libMLIR needed), the runtime libraries (CPU and
# CUDA), memrefCopy (the C runner utility compiled steps call) and the BLAS
# it was built with. MPI and
# the CUDA driver/cuBLAS come from the target machine.
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
# The archives of LLVM and MLIR in one group: the linker takes what the
# objects reference. The project's own libraries in link order.
g++ -O2 -s -o "$stage/bin/muon-run" tools/muon-run/CMakeFiles/muon-run.dir/*.o \
  lib/libMuonRegistration.a lib/libMuonConversion.a \
  lib/libMuonOptimTransforms.a lib/libMuonOptimDialect.a lib/libMuonPlan.a \
  lib/libMuonDistTransforms.a lib/libMuonSupport.a lib/libMuonDistDialect.a \
  lib/libMuonLayout.a \
  -Wl,--start-group "$llvm"/libMLIR*.a "$llvm"/libLLVM*.a -Wl,--end-group \
  lib/libmuon_runtime.so -lopenblas -lz -lzstd -ltinfo -lpthread -ldl \
  -Wl,--gc-sections -Wl,-rpath,'$ORIGIN/../lib'
cp lib/libmuon_runtime.so lib/libmuon_runtime_cuda.so "$stage/lib/"
# memrefCopy, the C runner utility compiled steps call, is in the runtime.
for dep in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L "$(ldconfig -p | awk -v d=$dep '$1 == d {print $NF; exit}')" "$stage/lib/$dep"
done
tar -C "$stage" -cf - bin lib | xz -T0 -6 >"$out"
echo "make-gpu-bundle: $out ($(du -h "$out" | cut -f1))"
