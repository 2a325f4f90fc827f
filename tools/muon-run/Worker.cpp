//===- Worker.cpp - One rank of a muon-run job ----------------------------===//
//
// Every rank compiles the module (JIT), generates the initial state, and
// runs the compiled step K times on its own shards (JobState); rank 0 also
// runs the single-device reference on the full tensors. After the last step
// every rank's shards are reassembled on rank 0 through the runtime, which
// compares and prints the verdict (Verdict). Faults for the tests are
// injected at fixed points (Faults).
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "muon/Execution/CompiledEntry.h"
#include "Faults.h"
#include "Trace.h"
#include "JobState.h"
#include "ObjectCache.h"
#include "Options.h"
#include "Verdict.h"

#include "muon/Runtime/muon_runtime.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

using namespace mlir;
using namespace muon;
using namespace muon::run;
using muon::exec::CompiledEntry;

namespace {

using Clock = std::chrono::steady_clock;
/// Processor time of every thread of this process (MPI's progress threads
/// included): std::clock on glibc.
double processCpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// The arguments and result buffers of a target=cuda step in device memory
/// (muon_rt_cuda_to_device), results copied back on request; inactive for
/// the CPU target.
class DeviceCopies {
public:
  DeviceCopies(bool on, const Tensors &args, const Shapes &argShapes,
               const Tensors &results, const Shapes &resultShapes,
               const std::vector<std::optional<double>> &scalars)
      : on(on) {
    if (!on)
      return;
    for (size_t a = 0; a < args.size(); ++a) {
      std::optional<double> scalar =
          a < scalars.size() ? scalars[a] : std::nullopt;
      views.push_back({scalar ? nullptr : copy(args[a]), argShapes[a], scalar});
    }
    firstResult = views.size();
    for (size_t r = 0; r < results.size(); ++r)
      views.push_back({copy(results[r]), resultShapes[r], std::nullopt});
  }
  ~DeviceCopies() {
    for (float *p : owned)
      muon_rt_cuda_free(p);
  }
  DeviceCopies(const DeviceCopies &) = delete;
  DeviceCopies &operator=(const DeviceCopies &) = delete;

  bool active() const { return on; }
  const std::vector<muon::exec::BufferView> &buffers() const { return views; }
  void copyResultsBack(Tensors &results) const {
    if (!on)
      return;
    for (size_t r = 0; r < results.size(); ++r)
      muon_rt_cuda_to_host(results[r].data(), views[firstResult + r].data,
                           static_cast<int64_t>(results[r].size()));
  }

private:
  float *copy(const std::vector<float> &host) {
    owned.push_back(muon_rt_cuda_to_device(
        host.data(), static_cast<int64_t>(host.size())));
    return owned.back();
  }
  bool on;
  size_t firstResult = 0;
  std::vector<float *> owned;
  std::vector<muon::exec::BufferView> views;
};

class Job {
public:
  Job(const Options &o, const StepSpec &spec)
      : o(o), spec(spec), rank(muon_rt_world_rank()),
        size(static_cast<int>(muon_rt_world_size())), state(o, spec, rank) {}

  void initialise() {
    state.initialise();
    if (!o.dumpDir.empty() && rank == 0)
      for (size_t i = 0; i < spec.params.size(); ++i) {
        dumpTensor(o, spec, i, "param_init", state.fullP[i]);
        dumpTensor(o, spec, i, "momentum_init", state.fullM[i]);
      }
  }

  /// One step: gradients, the compiled step on this rank's shards, and on
  /// rank 0 the reference on full tensors.
  void step(CompiledEntry &entry, int64_t t) {
    // The host work before the step has no collective that would time
    // out if it hung (a rank alone has no peer at all): give it a deadline.
    std::string phase = "preparing step " + std::to_string(t);
    muon_rt_watchdog_arm(phase.c_str());
    Tensors args, results, fullG;
    Shapes argShapes, resultShapes;
    state.arguments(t, args, argShapes, fullG);
    injectShapeFault(o.fault, rank, t, argShapes);
    state.resultBuffers(results, resultShapes);
    injectProcessFault(o.fault, rank, t);
    muon_rt_watchdog_disarm();

    // target=cuda: the step takes device buffers; copies in and out are
    // the harness's, outside the step's time.
    std::vector<std::optional<double>> scalars = state.scalarArguments();
    DeviceCopies device(o.target == muon::Target::Cuda, args, argShapes,
                        results, resultShapes, scalars);
    muon_rt_counters before;
    muon_rt_get_counters(&before);
    auto start = Clock::now();
    double cpuStart = processCpuSeconds();
    double traceStart = muon_rt_trace_now();
    std::string error;
    if (device.active())
      entry.invoke(device.buffers());
    else
      error = entry.invoke(args, argShapes, results, resultShapes, scalars);
    double seconds = secondsSince(start);
    if (t > 0) {
      afterFirst.cpu += processCpuSeconds() - cpuStart;
      muon_rt_counters after;
      muon_rt_get_counters(&after);
      afterFirst.waitCpu += after.wait_cpu_seconds - before.wait_cpu_seconds;
      afterFirst.wait += after.wait_seconds - before.wait_seconds;
    }
    device.copyResultsBack(results);
    timing.stepSeconds += seconds;
    if (t == 0)
      timing.firstStepSeconds = seconds;
    else if (t == 1 || seconds < timing.fastestLaterStepSeconds)
      timing.fastestLaterStepSeconds = seconds;
    std::string stepName = "step " + std::to_string(t);
    muon_rt_trace_mark(0, stepName.c_str(), traceStart, muon_rt_trace_now());
    if (!error.empty())
      muon_rt_fail("invoke", error.c_str());
    state.takeResults(results);
    injectCorruption(o.fault, rank, t, state.localP);

    if (rank == 0) {
      auto refStart = Clock::now();
      double traceStart = muon_rt_trace_now();
      state.referenceStep(fullG);
      timing.referenceSeconds += secondsSince(refStart);
      std::string refName = "reference step " + std::to_string(t);
      muon_rt_trace_mark(0, refName.c_str(), traceStart, muon_rt_trace_now());
    }
    if (!o.dumpDir.empty()) {
      Tensors p, m;
      (void)assembleAll(p, m);
      if (rank == 0)
        for (size_t i = 0; i < spec.params.size(); ++i) {
          std::string s = std::to_string(t);
          dumpTensor(o, spec, i, "grad_step" + s, fullG[i]);
          dumpTensor(o, spec, i, "param_step" + s, p[i]);
          dumpTensor(o, spec, i, "momentum_step" + s, m[i]);
          dumpTensor(o, spec, i, "ref_param_step" + s, state.fullP[i]);
          dumpTensor(o, spec, i, "ref_momentum_step" + s, state.fullM[i]);
        }
    }
  }

  /// Gathers, compares and prints. Returns the exit code (same on all ranks).
  int finish(double compileSeconds, double launcherSeconds, bool cached) {
    timing.compileSeconds = compileSeconds;
    timing.launcherCompileSeconds = launcherSeconds;
    timing.objectCached = cached;
    Tensors p, m;
    bool replicasAgree = assembleAll(p, m);
    muon_rt_counters c;
    muon_rt_get_counters(&c);
    double mine[kCountersPerRank] = {static_cast<double>(c.ns_calls),
                                     static_cast<double>(c.ns_matrices),
                                     c.ns_flops,
                                     static_cast<double>(c.collectives),
                                     static_cast<double>(c.heap_bytes_peak),
                                     afterFirst.cpu,
                                     afterFirst.waitCpu,
                                     afterFirst.wait};
    std::vector<double> all(kCountersPerRank * size);
    muon_rt_host_all_gather_f64(mine, kCountersPerRank, all.data());
    double pass = 1;
    if (rank == 0)
      pass = printVerdict(o, spec, p, m, state.fullP, state.fullM, all,
                          replicasAgree, timing, size);
    // Every rank exits with rank 0's verdict; the launcher learns that
    // there was one.
    if (rank == 0)
      if (const char *file = std::getenv("MUON_RUN_VERDICT"))
        if (FILE *f = std::fopen(file, "w")) {
          std::fputs(pass ? "PASS\n" : "FAIL\n", f);
          std::fclose(f);
        }
    std::vector<double> verdicts(size);
    muon_rt_host_all_gather_f64(&pass, 1, verdicts.data());
    return verdicts[0] != 0 ? 0 : 1;
  }

private:
  /// Every full parameter and momentum on rank 0. False if replicas differ.
  bool assembleAll(Tensors &p, Tensors &m) {
    bool agree = true;
    for (size_t i = 0; i < spec.params.size(); ++i) {
      p.push_back(assembleOnRankZero(spec, i, state.localP[i], agree));
      m.push_back(assembleOnRankZero(spec, i, state.localM[i], agree));
    }
    return agree;
  }

  const Options &o;
  const StepSpec &spec;
  int64_t rank;
  int size;
  JobState state;
  Timing timing;
  /// Seconds over the steps after the first (set-up paid): the step's
  /// processor time, the part of it polling in waits, the waits' wall time.
  struct {
    double cpu = 0, waitCpu = 0, wait = 0;
  } afterFirst;
};

} // namespace

int muon::run::runWorker(const Options &o, int *argc, char ***argv) {
  muon_rt_init(argc, argv);
  int rank = static_cast<int>(muon_rt_world_rank());

  DialectRegistry registry;
  registerRunDialects(registry);
  MLIRContext context(registry);
  // Every rank compiles the same module: only rank 0 prints diagnostics.
  std::unique_ptr<ScopedDiagnosticHandler> quiet;
  if (rank != 0)
    quiet = std::make_unique<ScopedDiagnosticHandler>(
        &context, [](Diagnostic &) { return success(); });

  auto fail = [&]() {
    muon_rt_finalize();
    return 1;
  };
  auto compileStart = Clock::now();
  OwningOpRef<ModuleOp> module;
  // Launched by muon-run: the launcher compiled the step once for every
  // rank (and printed its remarks); load its object instead of compiling
  // again, when its key says it is this module's (an object named by a
  // stale environment is not).
  const char *object = std::getenv("MUON_RUN_OBJECT");
  FailureOr<StepSpec> spec =
      parseAndLower(context, o, module, /*printDiagnostics=*/rank == 0,
                    /*printRemarks=*/!(object && *object));
  if (failed(spec))
    return fail();
  std::string error;
  const char *key = std::getenv("MUON_RUN_OBJECT_KEY");
  if (object && *object &&
      !(key && objectKey(*module, o.optLevel) == key)) {
    if (rank == 0)
      std::fprintf(stderr,
                   "muon-run: note: MUON_RUN_OBJECT (%s) is not this step's "
                   "compiled code; every rank compiles it\n",
                   object);
    object = nullptr;
  }
  std::unique_ptr<CompiledEntry> entry =
      object && *object
          ? CompiledEntry::load(object, spec->entry, error, key)
          : CompiledEntry::create(*module, spec->entry, o.optLevel, error);
  if (!entry) {
    // Loading can fail on some ranks only (a file another node cannot see):
    // every rank says so, instead of the others waiting for a timeout.
    if (rank == 0 || (object && *object))
      std::fprintf(stderr, "muon-run: error: rank %d: %s\n", rank,
                   error.c_str());
    return fail();
  }
  double compileSeconds = secondsSince(compileStart);

  if (rank == 0) {
    std::string meshStr;
    for (int64_t a = 0; a < spec->mesh.numAxes(); ++a)
      meshStr += (a ? ", " : "") + spec->mesh.axisNames[a] + "=" +
                 std::to_string(spec->mesh.sizes[a]);
    std::printf("muon-run: @%s on mesh [%s], %d ranks, %zu parameters, %lld "
                "steps, seed %llu\n",
                spec->entry.c_str(), meshStr.c_str(),
                static_cast<int>(muon_rt_world_size()), spec->params.size(),
                static_cast<long long>(o.steps),
                static_cast<unsigned long long>(o.seed));
    std::fflush(stdout);
  }

  // Made by the launcher; under a hand-started mpirun, here (a directory
  // that cannot be made is reported by the first write).
  if (!o.dumpDir.empty() && rank == 0)
    (void)llvm::sys::fs::create_directories(o.dumpDir);

  Job job(o, *spec);
  job.initialise();
  muon_rt_reset_counters();
  if (!o.traceFile.empty())
    startTrace(o.traceFile, rank);
  for (int64_t t = 0; t < o.steps; ++t)
    job.step(*entry, t);
  bool traceFailed = false;
  if (!o.traceFile.empty()) {
    std::string error =
        writeTrace(o.traceFile, rank, muon_rt_world_size());
    traceFailed = !error.empty();
    if (traceFailed)
      std::fprintf(stderr, "muon-run: error: --trace: %s\n", error.c_str());
    else if (rank == 0)
      std::printf("muon-run: wrote the measured timeline to %s\n",
                  o.traceFile.c_str());
  }
  double launcherSeconds = 0;
  if (const char *s = std::getenv("MUON_RUN_COMPILE_S"); s && object && *object)
    launcherSeconds = std::atof(s);
  bool cached = std::getenv("MUON_RUN_OBJECT_CACHED") != nullptr;
  int code = job.finish(compileSeconds, launcherSeconds, cached);
  if (traceFailed && code == 0)
    code = 1;
  muon_rt_finalize();
  return code;
}
