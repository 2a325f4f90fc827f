# Which CBLAS the runtime's CPU Newton-Schulz (and the CPU benchmarks that
# measure it) link: MUON_BLAS = auto | scipy-openblas | system.
#
# Debian's OpenBLAS (0.3.21) picks its kernels by CPU model, and on x86
# CPUs it does not know (a virtual machine's "Intel Xeon Processor", newer
# parts) it falls back to its oldest ones: 16-30 GFLOP/s single-thread
# sgemm where a current OpenBLAS reaches 109-151 on the same core
# (bench/README.md, "which BLAS for the runtime"). scipy-openblas32 (PyPI,
# what NumPy and SciPy ship) is a current OpenBLAS built for every x86
# generation with its BLAS symbols prefixed (scipy_cblas_sgemm), so it can sit
# beside the system's in one process. `auto` (the default) takes it when
# the build's Python (the Python package's interpreter, else the first
# Python 3 found) can import it (scripts/setup.sh installs it) and the
# system's OpenBLAS otherwise (the configure step prints which).
#
# Sets MUON_CBLAS_LIBRARY, MUON_CBLAS_INCLUDE and MUON_CBLAS_DEFINITIONS
# (MUON_BLAS_SCIPY_OPENBLAS=1 for the prefixed names).
set(MUON_BLAS "auto" CACHE STRING
  "CBLAS of the runtime: auto (scipy-openblas32 when importable, else the system's), scipy-openblas or system")
set_property(CACHE MUON_BLAS PROPERTY STRINGS auto scipy-openblas system)
if(NOT MUON_BLAS MATCHES "^(auto|scipy-openblas|system)$")
  message(FATAL_ERROR "MUON_BLAS=${MUON_BLAS}: expected auto, scipy-openblas or system")
endif()

set(MUON_CBLAS_DEFINITIONS "")
# A wheel (scikit-build-core) must not depend on a library in the build
# machine's site-packages: `auto` is the system's OpenBLAS there.
set(muon_blas_choice ${MUON_BLAS})
if(SKBUILD AND MUON_BLAS STREQUAL "auto")
  set(muon_blas_choice system)
elseif(SKBUILD AND MUON_BLAS STREQUAL "scipy-openblas")
  message(FATAL_ERROR "MUON_BLAS=scipy-openblas in a wheel build: the wheel "
    "would depend on the build machine's site-packages (use auto or system)")
endif()
if(NOT muon_blas_choice STREQUAL "system")
  # The interpreter the Python package is built for when there is one
  # (top-level CMakeLists.txt), else the first Python 3 found.
  set(blas_python ${Python_EXECUTABLE})
  if(NOT blas_python)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    set(blas_python ${Python3_EXECUTABLE})
  endif()
  set(scipy_blas_rc 1)
  if(blas_python)
    execute_process(
      COMMAND ${blas_python} -c
        "import scipy_openblas32 as s; print(s.get_lib_dir()); print(s.get_include_dir())"
      OUTPUT_VARIABLE scipy_blas_dirs OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE scipy_blas_rc)
  endif()
  if(scipy_blas_rc EQUAL 0)
    string(REPLACE "\n" ";" scipy_blas_dirs "${scipy_blas_dirs}")
    list(GET scipy_blas_dirs 0 scipy_blas_lib_dir)
    list(GET scipy_blas_dirs 1 scipy_blas_include_dir)
    # Asked of Python on every configure, never cached, so that a
    # reconfigure after the package moved (another interpreter, a
    # reinstall) takes its header and library together. Normal variables:
    # they hide the system's, cached by an earlier configure of the same
    # build directory.
    set(MUON_CBLAS_LIBRARY ${scipy_blas_lib_dir}/libscipy_openblas.so)
    set(MUON_CBLAS_INCLUDE ${scipy_blas_include_dir})
    if(NOT EXISTS ${MUON_CBLAS_LIBRARY} OR NOT EXISTS ${MUON_CBLAS_INCLUDE}/cblas.h)
      message(FATAL_ERROR "scipy_openblas32 (imported by ${blas_python}) has "
        "no ${MUON_CBLAS_LIBRARY} or ${MUON_CBLAS_INCLUDE}/cblas.h")
    endif()
    set(MUON_CBLAS_DEFINITIONS MUON_BLAS_SCIPY_OPENBLAS=1)
  elseif(MUON_BLAS STREQUAL "scipy-openblas")
    if(NOT blas_python)
      set(blas_python python3)
    endif()
    message(FATAL_ERROR "MUON_BLAS=scipy-openblas but ${blas_python} cannot "
      "import scipy_openblas32 (${blas_python} -m pip install scipy-openblas32)")
  endif()
endif()
if(NOT MUON_CBLAS_DEFINITIONS)
  find_library(MUON_CBLAS_LIBRARY NAMES openblas cblas REQUIRED)
  find_path(MUON_CBLAS_INCLUDE cblas.h
    PATHS /usr/include/x86_64-linux-gnu /usr/include/x86_64-linux-gnu/openblas-pthread
          /usr/include/openblas /usr/include REQUIRED)
endif()
message(STATUS "CBLAS of the runtime: ${MUON_CBLAS_LIBRARY}")
