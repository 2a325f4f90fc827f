//===- Cblas.h - The CBLAS the build chose, under one set of names -*- C++ -*-===//
//
// cmake/MuonBlas.cmake picks the system's OpenBLAS or scipy-openblas32,
// whose functions carry a `scipy_` prefix (so that it can share a process
// with another OpenBLAS). Callers write muon_cblas(sgemm)(...) and
// muon_openblas_set_num_threads(n); the enums (CblasRowMajor, ...) are the
// same in both headers.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_RUNTIME_CBLAS_H
#define MUON_RUNTIME_CBLAS_H

#include <cblas.h>

#if defined(MUON_BLAS_SCIPY_OPENBLAS) && MUON_BLAS_SCIPY_OPENBLAS
#define muon_cblas(fn) scipy_cblas_##fn
#define muon_openblas_set_num_threads scipy_openblas_set_num_threads
#else
#define muon_cblas(fn) cblas_##fn
#define muon_openblas_set_num_threads openblas_set_num_threads
#endif

#endif // MUON_RUNTIME_CBLAS_H
