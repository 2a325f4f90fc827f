# Which CBLAS the runtime's CPU Newton-Schulz (and the CPU benchmarks that
# measure it) link: MUON_BLAS = auto | scipy-openblas | system.
#
# Debian's OpenBLAS (0.3.21) picks its kernels by CPU model, and on x86
# CPUs it does not know (a virtual machine's "Intel Xeon Processor", newer
# parts) it falls back to its oldest ones: 16-30 GFLOP/s single-thread
# sgemm where a current OpenBLAS reaches 109-151 on the same core
# (bench/README.md, "which BLAS for the runtime"). scipy-openblas32 (PyPI,
# what NumPy and SciPy ship) is a current OpenBLAS built for every x86
# generation with its symbols prefixed (scipy_cblas_sgemm), so it can sit
# beside the system's in one process. `auto` (the default) takes it when
# the build's Python can import it (scripts/setup.sh installs it) and the
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
endif()
if(NOT muon_blas_choice STREQUAL "system")
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(scipy_blas_rc 1)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c
        "import scipy_openblas32 as s; print(s.get_lib_dir()); print(s.get_include_dir())"
      OUTPUT_VARIABLE scipy_blas_dirs OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE scipy_blas_rc)
  endif()
  if(scipy_blas_rc EQUAL 0)
    string(REPLACE "\n" ";" scipy_blas_dirs "${scipy_blas_dirs}")
    list(GET scipy_blas_dirs 0 scipy_blas_lib_dir)
    list(GET scipy_blas_dirs 1 scipy_blas_include_dir)
    find_library(MUON_SCIPY_OPENBLAS_LIBRARY NAMES scipy_openblas
      PATHS ${scipy_blas_lib_dir} NO_DEFAULT_PATH REQUIRED)
    # Normal variables: they hide the system's, cached by an earlier
    # configure of the same build directory.
    set(MUON_CBLAS_LIBRARY ${MUON_SCIPY_OPENBLAS_LIBRARY})
    set(MUON_CBLAS_INCLUDE ${scipy_blas_include_dir})
    set(MUON_CBLAS_DEFINITIONS MUON_BLAS_SCIPY_OPENBLAS=1)
  elseif(MUON_BLAS STREQUAL "scipy-openblas")
    message(FATAL_ERROR "MUON_BLAS=scipy-openblas but the build's Python "
      "(${Python3_EXECUTABLE}) cannot import scipy_openblas32 "
      "(python3 -m pip install scipy-openblas32)")
  endif()
endif()
if(NOT MUON_CBLAS_DEFINITIONS)
  find_library(MUON_CBLAS_LIBRARY NAMES openblas cblas REQUIRED)
  find_path(MUON_CBLAS_INCLUDE cblas.h
    PATHS /usr/include/x86_64-linux-gnu /usr/include/x86_64-linux-gnu/openblas-pthread
          /usr/include/openblas /usr/include REQUIRED)
endif()
message(STATUS "CBLAS of the runtime: ${MUON_CBLAS_LIBRARY}")
