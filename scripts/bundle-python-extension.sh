#!/usr/bin/env bash
# Builds the Python package `muon` for another Python than the build's, its
# extension linked against LLVM/MLIR's static archives (no libLLVM/libMLIR
# needed where it runs), into STAGE/python/muon: for a GPU machine whose
# python3 (with PyTorch) differs from this machine's and has no LLVM 22.
# make-gpu-bundle.sh calls it when MUON_BUNDLE_PYTHON names that Python.
#
#   bash scripts/bundle-python-extension.sh STAGE PYTHON    (after build.sh)
#
# PYTHON must have nanobind (pip install nanobind) and its headers. The
# extension finds libmuon_runtime.so in STAGE/lib ($ORIGIN/../../lib).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
stage=$(realpath "${1:?usage: bundle-python-extension.sh STAGE PYTHON}")
py=${2:?usage: bundle-python-extension.sh STAGE PYTHON}
build=${MUON_BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22/lib
read -r include nbdir suffix < <("$py" -c '
import sysconfig, nanobind, os
print(sysconfig.get_paths()["include"], os.path.dirname(nanobind.include_dir()),
      sysconfig.get_config_var("EXT_SUFFIX"))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-O2 -fPIC -fvisibility=hidden -std=gnu++17 -DNDEBUG -w
       -D_GLIBCXX_USE_CXX11_ABI=1 -D__STDC_CONSTANT_MACROS
       -D__STDC_FORMAT_MACROS -D__STDC_LIMIT_MACROS
       -I/usr/lib/llvm-22/include -I"$root/include" -I"$build/include"
       -I"$root/runtime/include" -I"$include" -I"$nbdir/include"
       -isystem "$nbdir/ext/robin_map/include")
objects=()
# nanobind's own sources, for this Python (what nanobind_add_module builds).
for name in nb_internals nb_func nb_type nb_enum nb_ndarray nb_static_property \
            nb_datetime common error trampoline implicit; do
  src=$nbdir/src/$name.cpp obj=$work/$name.o
  g++ "${flags[@]}" -DNB_BUILD -DNB_COMPACT_ASSERTIONS -fno-strict-aliasing \
    -c "$src" -o "$obj"
  objects+=("$obj")
done
g++ "${flags[@]}" -c "$root/python/src/MuonExtension.cpp" -o "$work/ext.o"
# The project's archives the build links the extension with (read from its
# link command), then LLVM and MLIR in one group.
cd "$build"
muon_archives=$(ninja -t commands python/muon/_muon$(python3 -c \
  'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') |
  tail -1 | tr ' ' '\n' | grep -E '^lib/libMuon[A-Za-z]*\.a$')
mkdir -p "$stage/python/muon"
g++ -shared -s -o "$stage/python/muon/_muon$suffix" "$work/ext.o" "${objects[@]}" \
  -Wl,--start-group $muon_archives -Wl,--end-group \
  -Wl,--start-group "$llvm"/libMLIR*.a "$llvm"/libLLVM*.a -Wl,--end-group \
  lib/libmuon_runtime.so -lz -lzstd -ltinfo -lpthread -ldl \
  -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,-rpath,'$ORIGIN/../../lib'
cp "$root"/python/muon/*.py "$root"/python/muon/*.pyi "$root"/python/muon/py.typed \
  "$stage/python/muon/"
echo "bundle-python-extension: $stage/python/muon/_muon$suffix ($(du -h "$stage/python/muon/_muon$suffix" | cut -f1))"
