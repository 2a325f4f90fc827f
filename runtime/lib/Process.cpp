//===- Process.cpp - Backend start-up, errors, counters, entry checks -----===//

#include "Backend.h"
#include "CudaStep.h"
#include "Errors.h"
#include "State.h"
#include "Tensor.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace muon::rt;

namespace {
std::unique_ptr<Backend> theBackend;
muon_rt_counters theCounters{};
double theTimeout = -1;

/// A step allocates and frees the same buffers every time it runs. glibc
/// serves blocks above its mmap threshold (128 KiB at first) with fresh
/// mappings and unmaps them on free, so every step page-faults its
/// gathered matrices and staging anew (12-19% of a 2-rank CPU step on the
/// main example). Raising the threshold to glibc's maximum (32 MiB) and
/// the trim threshold to 1 GiB keeps freed blocks in the heap for the next
/// step, as a caching allocator would; the process keeps its peak heap.
/// MUON_RT_MALLOC_REUSE=0 leaves malloc as it is.
void reuseFreedBuffers() {
#ifdef __GLIBC__
  const char *env = std::getenv("MUON_RT_MALLOC_REUSE");
  if (env && *env && std::strcmp(env, "0") != 0 && std::strcmp(env, "1") != 0) {
    std::fprintf(stderr,
                 "muon-rt: error: MUON_RT_MALLOC_REUSE=%s is not 0 or 1\n",
                 env);
    std::exit(2);
  }
  if (env && std::strcmp(env, "0") == 0)
    return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}
} // namespace

void muon::rt::startBackend(int *argc, char ***argv) {
  if (theBackend)
    return;
  reuseFreedBuffers();
  const char *which = std::getenv("MUON_RT_BACKEND");
  std::string name = which && *which ? which : "mpi";
  if (name != "mpi" && name != "nccl") {
    std::fprintf(stderr,
                 "muon-rt: error: MUON_RT_BACKEND=%s is not built into this "
                 "runtime (available: mpi, nccl)\n",
                 name.c_str());
    std::exit(2);
  }
  theBackend = name == "nccl" ? createNcclBackend(argc, argv)
                              : createMpiBackend(argc, argv);
  // Out of memory anywhere in the process (runtime, compiled code's
  // allocations through operator new, the host) ends the job with the
  // runtime's error line and a job-wide abort, not an uncaught bad_alloc.
  std::set_new_handler(
      [] { fatal("allocate", "", "out of memory (operator new failed)"); });
  // So does a C++ exception nobody caught (a container asked for more than
  // the address space throws std::length_error before operator new runs):
  // the runtime's error line and a job-wide abort instead of a bare
  // std::terminate on one rank. A terminate with no exception in flight (a
  // joinable std::thread destroyed) is the host's business: the handler it
  // had runs. Installed once.
  static std::terminate_handler hostHandler = std::set_terminate([] {
    std::exception_ptr e = std::current_exception();
    if (!e) {
      if (hostHandler)
        hostHandler();
      std::abort();
    }
    std::string why = "an uncaught C++ exception";
    try {
      std::rethrow_exception(e);
    } catch (const std::length_error &x) {
      fatal("allocate", "", std::string("out of memory (") + x.what() + ")");
    } catch (const std::bad_alloc &) {
      fatal("allocate", "", "out of memory (operator new failed)");
    } catch (const std::exception &x) {
      why = std::string("uncaught C++ exception: ") + x.what();
    } catch (...) {
    }
    fatal("terminate", "", why);
  });
  // A bad MUON_RT_TIMEOUT_S ends the job here, before any work.
  timeoutSeconds();
}

bool muon::rt::backendStarted() { return theBackend != nullptr; }

Backend &muon::rt::backend() {
  if (!theBackend)
    startBackend(nullptr, nullptr);
  return *theBackend;
}

muon_rt_counters &muon::rt::counters() { return theCounters; }

double muon::rt::timeoutSeconds() {
  if (theTimeout < 0) {
    theTimeout = 300;
    if (const char *env = std::getenv("MUON_RT_TIMEOUT_S")) {
      char *end = nullptr;
      double v = std::strtod(env, &end);
      // NaN compares false with everything: it would disable the timeout.
      if (end == env || *end || !(v > 0) || !std::isfinite(v))
        fatal("init", "",
              std::string("MUON_RT_TIMEOUT_S='") + env +
                  "' is not a positive, finite number of seconds");
      theTimeout = v;
    }
  }
  return theTimeout;
}

void muon::rt::setTimeoutSeconds(double s) {
  if (!(s > 0) || !std::isfinite(s)) {
    char text[40]; // %g: -1 as -1, not -1.000000
    std::snprintf(text, sizeof text, "%g", s);
    fatal("set_timeout", "",
          std::string("timeout ") + text +
              " s is not a positive, finite number of seconds");
  }
  theTimeout = s;
}

void muon::rt::fatal(const std::string &op, const std::string &comm,
                     const std::string &cause) {
  long rank = theBackend ? static_cast<long>(theBackend->worldRank()) : -1;
  std::fprintf(stderr, "muon-rt: error: rank %ld: %s%s%s: %s\n", rank,
               op.c_str(), comm.empty() ? "" : " on ", comm.c_str(),
               cause.c_str());
  std::fflush(stderr);
  if (theBackend)
    theBackend->abort(1);
  std::_Exit(1);
}

extern "C" {

void muon_rt_init(int *argc, char ***argv) { startBackend(argc, argv); }

void muon_rt_reuse_freed_buffers(void) { reuseFreedBuffers(); }

void muon_rt_finalize(void) {
  if (theBackend)
    theBackend->finalize();
}

int64_t muon_rt_world_rank(void) { return backend().worldRank(); }
int64_t muon_rt_world_size(void) { return backend().worldSize(); }
void muon_rt_set_timeout(double seconds) { setTimeoutSeconds(seconds); }
void muon_rt_fail(const char *op, const char *cause) { fatal(op, "", cause); }
void muon_rt_barrier(void) { arriveAll("barrier", "world"); }

void muon_rt_get_counters(muon_rt_counters *out) {
  if (out)
    *out = theCounters;
}
void muon_rt_reset_counters(void) {
  int64_t live = theCounters.heap_bytes_live;
  theCounters = muon_rt_counters{};
  theCounters.heap_bytes_live = theCounters.heap_bytes_peak = live;
}

void _mlir_ciface_muon_rt_check_arg(int64_t index, muon_rt_memref *arg,
                                    muon_rt_i64_array *expected) {
  std::string what = "entry argument #" + std::to_string(index);
  TensorView v = viewOf(arg, "check_arg", "");
  int64_t rank = backend().worldRank(), size = backend().worldSize();
  int64_t dims = static_cast<int64_t>(v.shape.size());
  // Read in place: the table is as long as its runs, and this runs on
  // every call of the step.
  int64_t entries = expected ? expected->size : 0;
  auto at = [&](int64_t i) {
    return expected->aligned[expected->offset + i * expected->stride];
  };
  constexpr int64_t header = 3;
  int64_t row = 1 + dims;
  int64_t runs = entries >= header ? (entries - header) / row : 0;
  if (entries < header + row || at(0) != MUON_RT_SHAPE_RUNS || at(2) != dims ||
      (entries - header) % row != 0)
    fatal("check_arg", "",
          what + ": the shape table (" + std::to_string(entries) +
              " entries) is not one of runs for a " + std::to_string(dims) +
              "-dim argument (muon_runtime.h, muon_rt_check_arg): the step "
              "was compiled for another version of the runtime");
  if (at(1) != size)
    fatal("check_arg", "",
          what + ": the program was compiled for " + std::to_string(at(1)) +
              " ranks but the job has " + std::to_string(size));
  auto first = [&](int64_t k) { return at(header + k * row); };
  for (int64_t k = 0; k < runs; ++k)
    if ((k == 0 && first(k) != 0) || (k > 0 && first(k) <= first(k - 1)) ||
        first(k) >= size)
      fatal("check_arg", "",
            what + ": run " + std::to_string(k) +
                " of the shape table starts at rank " +
                std::to_string(first(k)) +
                "; runs start at 0 and increase below the " +
                std::to_string(size) + " ranks");
  // The last run starting at or before this rank.
  int64_t lo = 0, hi = runs;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (first(mid) <= rank ? lo : hi) = mid;
  }
  std::vector<int64_t> want(dims);
  for (int64_t d = 0; d < dims; ++d)
    want[d] = at(header + lo * row + 1 + d);
  if (want != v.shape)
    fatal("check_arg", "",
          what + " has local shape " + v.shapeStr() + ", expected " +
              shapeStr(want) + " on this rank (wrong shard handed to the step)");
  if (deviceResident() && v.numElements() > 0)
    checkOnThisGpu(what, v.data);
}

} // extern "C"
