//===- Worker.cpp - One rank of a muon-run job ----------------------------===//
//
// Every rank compiles the module (JIT), generates the full initial tensors
// from the seed, keeps only its shards, and runs the compiled step K times
// on its own state. Rank 0 also runs the single-device reference on the full
// tensors; after the last step every rank sends its shards to rank 0, which
// reassembles them (checking that replicas agree), compares, and prints the
// verdict and the Newton-Schulz counters of every rank.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "HostTensors.h"
#include "Npy.h"
#include "Options.h"
#include "Reference.h"
#include "StepSpec.h"

#include "muon/Runtime/muon_runtime.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace muon;
using namespace muon::run;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

/// A ranked memref descriptor { ptr, ptr, offset, sizes[], strides[] } for
/// a float buffer, laid out as int64 words.
std::vector<int64_t> descriptorOf(float *data,
                                  const std::vector<int64_t> &shape) {
  std::vector<int64_t> d{reinterpret_cast<int64_t>(data),
                         reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

class Job {
public:
  Job(const Options &o, const StepSpec &spec) : o(o), spec(spec) {
    rank = muon_rt_world_rank();
    size = muon_rt_world_size();
    // What this rank holds of every argument and result: fixed for the job.
    for (const TensorSpec &ts : spec.args)
      argShards.push_back(shardOf(spec.params[ts.param].shape, ts.layout,
                                  spec.mesh, rank));
    for (const TensorSpec &ts : spec.results)
      resultShards.push_back(shardOf(spec.params[ts.param].shape, ts.layout,
                                     spec.mesh, rank));
  }

  /// Full tensors of the initial state (every rank generates them: the
  /// generator is cheap and this keeps the data independent of the layout).
  void initialise() {
    for (size_t i = 0; i < spec.params.size(); ++i) {
      const ParamSpec &p = spec.params[i];
      int64_t n = numElements(p.shape);
      fullP.push_back(generate(o.seed, streamId(0, i, 0, 0), n));
      fullM.push_back(generate(o.seed, streamId(1, i, 0, 0), n));
      Shard s = shardOf(p.shape, p.layout, spec.mesh, rank);
      localP.push_back(extract(fullP[i], p.shape, s));
      localM.push_back(extract(fullM[i], p.shape, s));
    }
    if (!o.dumpDir.empty() && rank == 0)
      for (size_t i = 0; i < spec.params.size(); ++i) {
        dump(i, "param_init", fullP[i]);
        dump(i, "momentum_init", fullM[i]);
      }
  }

  /// One step: gradients, the compiled step on this rank's shards, and on
  /// rank 0 the reference on full tensors.
  void step(ExecutionEngine &engine, int64_t t) {
    size_t n = spec.params.size();
    std::vector<std::vector<float>> args(spec.args.size());
    std::vector<std::vector<int64_t>> argShapes(spec.args.size());
    std::vector<std::vector<float>> fullG(n);
    for (size_t a = 0; a < spec.args.size(); ++a) {
      const TensorSpec &ts = spec.args[a];
      const ParamSpec &p = spec.params[ts.param];
      const Shard &s = argShards[a];
      argShapes[a] = s.local.shape;
      if (ts.role == Role::Param)
        args[a] = localP[ts.param];
      else if (ts.role == Role::Momentum)
        args[a] = localM[ts.param];
      else
        args[a] = extract(generate(o.seed,
                                   streamId(2, ts.param, t,
                                            partialTerm(ts.layout, spec.mesh,
                                                        rank)),
                                   numElements(p.shape)),
                          p.shape, s);
      if (ts.role == Role::Grad && rank == 0)
        fullG[ts.param] = fullGradient(ts, t);
    }
    injectShapeFault(t, argShapes);

    std::vector<std::vector<float>> results(spec.results.size());
    std::vector<std::vector<int64_t>> resultShapes(spec.results.size());
    for (size_t r = 0; r < spec.results.size(); ++r) {
      resultShapes[r] = resultShards[r].local.shape;
      results[r].resize(numElements(resultShapes[r]));
    }

    injectProcessFault(t);
    std::vector<std::vector<int64_t>> descs;
    for (size_t a = 0; a < args.size(); ++a)
      descs.push_back(descriptorOf(args[a].data(), argShapes[a]));
    for (size_t r = 0; r < results.size(); ++r)
      descs.push_back(descriptorOf(results[r].data(), resultShapes[r]));
    std::vector<void *> ptrs;
    for (auto &d : descs)
      ptrs.push_back(d.data());
    std::vector<void *> packed;
    for (void *&p : ptrs)
      packed.push_back(&p);
    auto start = Clock::now();
    llvm::Error err = engine.invokePacked("_mlir_ciface_" + spec.entry, packed);
    stepSeconds += secondsSince(start);
    if (err) {
      std::string msg = llvm::toString(std::move(err));
      muon_rt_fail("invoke", msg.c_str());
    }
    for (size_t r = 0; r < results.size(); ++r) {
      const TensorSpec &ts = spec.results[r];
      (ts.role == Role::Param ? localP : localM)[ts.param] = results[r];
    }
    if (o.fault.kind == Fault::Corrupt && o.fault.rank == rank &&
        o.fault.step == t)
      for (std::vector<float> &p : localP)
        if (!p.empty()) {
          p[0] += 1e-3f;
          break;
        }

    if (rank == 0) {
      auto refStart = Clock::now();
      for (size_t i = 0; i < n; ++i)
        referenceStep(fullP[i], fullM[i], fullG[i], spec.params[i].shape,
                      spec.hyper);
      referenceSeconds += secondsSince(refStart);
    }
    if (!o.dumpDir.empty()) {
      std::vector<std::vector<float>> p, m;
      bool ok = assembleAll(p, m);
      (void)ok;
      if (rank == 0)
        for (size_t i = 0; i < n; ++i) {
          std::string s = std::to_string(t);
          dump(i, "grad_step" + s, fullG[i]);
          dump(i, "param_step" + s, p[i]);
          dump(i, "momentum_step" + s, m[i]);
          dump(i, "ref_param_step" + s, fullP[i]);
          dump(i, "ref_momentum_step" + s, fullM[i]);
        }
    }
  }

  /// Gathers, compares and prints. Returns the exit code (same on all ranks).
  int finish(double compileSeconds) {
    std::vector<std::vector<float>> p, m;
    bool replicasAgree = assembleAll(p, m);
    muon_rt_counters c;
    muon_rt_get_counters(&c);
    double mine[3] = {static_cast<double>(c.ns_calls),
                      static_cast<double>(c.ns_matrices), c.ns_flops};
    std::vector<double> all(3 * size);
    muon_rt_host_all_gather_f64(mine, 3, all.data());
    double pass = 1;
    if (rank == 0)
      pass = report(p, m, all, replicasAgree, compileSeconds);
    // Every rank exits with rank 0's verdict.
    std::vector<double> verdicts(size);
    muon_rt_host_all_gather_f64(&pass, 1, verdicts.data());
    return verdicts[0] != 0 ? 0 : 1;
  }

  double stepSeconds = 0, referenceSeconds = 0;

private:
  std::vector<float> fullGradient(const TensorSpec &ts, int64_t t) {
    const ParamSpec &p = spec.params[ts.param];
    int64_t n = numElements(p.shape);
    std::vector<float> g(n, 0.0f);
    int64_t terms = partialTerms(ts.layout, spec.mesh);
    for (int64_t k = 0; k < terms; ++k) {
      std::vector<float> term = generate(o.seed, streamId(2, ts.param, t, k), n);
      for (int64_t i = 0; i < n; ++i)
        g[i] += term[i];
    }
    float scale = static_cast<float>(partialScale(ts.layout, spec.mesh));
    if (scale != 1.0f)
      for (float &v : g)
        v *= scale;
    return g;
  }

  /// Rebuilds every full parameter and momentum on rank 0 from the shards
  /// of the ranks that hold it. Returns false if two replicas differ.
  bool assembleAll(std::vector<std::vector<float>> &p,
                   std::vector<std::vector<float>> &m) {
    bool agree = true;
    for (size_t i = 0; i < spec.params.size(); ++i) {
      p.push_back(assemble(i, localP[i], agree));
      m.push_back(assemble(i, localM[i], agree));
    }
    return agree;
  }

  std::vector<float> assemble(size_t i, const std::vector<float> &local,
                              bool &agree) {
    const ParamSpec &ps = spec.params[i];
    int64_t count = static_cast<int64_t>(local.size());
    std::vector<int64_t> counts(size), displs(size);
    muon_rt_host_counts(count, counts.data());
    int64_t total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += counts[r];
    }
    std::vector<float> all(rank == 0 ? total : 0);
    muon_rt_host_gather_f32(local.data(), count, all.data(), counts.data());
    if (rank != 0)
      return {};
    std::vector<float> full(numElements(ps.shape), NAN);
    for (int r = 0; r < size; ++r) {
      if (!plan::inGroup(ps.plan, spec.mesh.coords(r)))
        continue;
      Shard s = shardOf(ps.shape, ps.layout, spec.mesh, r);
      std::vector<float> piece(all.begin() + displs[r],
                               all.begin() + displs[r] + counts[r]);
      // Elements an earlier holder wrote must be bitwise the same here.
      std::vector<float> earlier = extract(full, ps.shape, s);
      for (size_t k = 0; k < piece.size(); ++k)
        if (!std::isnan(earlier[k]) && earlier[k] != piece[k])
          agree = false;
      insert(full, ps.shape, s, piece);
    }
    return full;
  }

  int report(const std::vector<std::vector<float>> &p,
             const std::vector<std::vector<float>> &m,
             const std::vector<double> &counters, bool replicasAgree,
             double compileSeconds) {
    std::printf("%-24s %-12s %12s %12s %12s %12s  %s\n", "parameter", "shape",
                "max|dP|", "max rel dP", "max|dM|", "max rel dM", "check");
    bool pass = true;
    for (size_t i = 0; i < spec.params.size(); ++i) {
      double ea = 0, er = 0, ma = 0, mr = 0;
      bool ok = compare(p[i], fullP[i], ea, er) & compare(m[i], fullM[i], ma, mr);
      pass &= ok;
      std::printf("%-24s %-12s %12.3e %12.3e %12.3e %12.3e  %s\n",
                  spec.params[i].name.c_str(),
                  shapeStr(spec.params[i].shape).c_str(), ea, er, ma, mr,
                  ok ? "ok" : "MISMATCH");
    }
    // Zero redundancy: summed over ranks, each matrix exactly once a step.
    double expectMatrices = 0, expectFlops = 0;
    for (const ParamSpec &ps : spec.params) {
      int64_t r = ps.shape.size();
      int64_t rows = ps.shape[r - 2], cols = ps.shape[r - 1];
      int64_t batch = numElements(ps.shape) / std::max<int64_t>(1, rows * cols);
      expectMatrices += batch * o.steps;
      expectFlops +=
          batch * o.steps * referenceNsFlops(rows, cols, spec.hyper.nsSteps);
    }
    double calls = 0, matrices = 0, flops = 0;
    std::printf("Newton-Schulz per rank (calls, matrices, GFLOP):");
    for (int r = 0; r < size; ++r) {
      calls += counters[3 * r];
      matrices += counters[3 * r + 1];
      flops += counters[3 * r + 2];
      std::printf(" r%d=%.0f/%.0f/%.3f", r, counters[3 * r],
                  counters[3 * r + 1], counters[3 * r + 2] * 1e-9);
    }
    std::printf("\n");
    bool zeroRedundancy =
        matrices == expectMatrices && std::fabs(flops - expectFlops) <= 1e-6 * expectFlops;
    std::printf("zero redundancy: %.0f NS matrices and %.4g FLOPs over all "
                "ranks for %.0f matrices x %lld steps (expected %.0f and "
                "%.4g): %s\n",
                matrices, flops, expectMatrices / o.steps,
                static_cast<long long>(o.steps), expectMatrices, expectFlops,
                zeroRedundancy ? "ok" : "FAIL");
    if (!replicasAgree)
      std::printf("replicas: ranks holding the same element disagree: FAIL\n");
    pass &= zeroRedundancy && replicasAgree;
    std::printf("time: compile %.2f s, compiled step %.4f s/step (rank 0), "
                "reference %.4f s/step\n",
                compileSeconds, stepSeconds / o.steps,
                referenceSeconds / o.steps);
    std::printf("%s: %zu parameters, %lld steps, %d ranks, rtol %g atol %g\n",
                pass ? "PASS" : "FAIL", spec.params.size(),
                static_cast<long long>(o.steps), size, o.rtol, o.atol);
    std::fflush(stdout);
    return pass;
  }

  /// numpy.allclose(got, want, rtol, atol), plus the max errors.
  bool compare(const std::vector<float> &got, const std::vector<float> &want,
               double &maxAbs, double &maxRel) {
    bool ok = got.size() == want.size();
    for (size_t k = 0; ok && k < got.size(); ++k) {
      double d = std::fabs(static_cast<double>(got[k]) - want[k]);
      if (std::isnan(got[k]))
        d = INFINITY; // never written by any rank
      maxAbs = std::max(maxAbs, d);
      maxRel = std::max(maxRel, d / std::max(1e-30, std::fabs((double)want[k])));
      ok &= d <= o.atol + o.rtol * std::fabs(static_cast<double>(want[k]));
    }
    return ok;
  }

  void dump(size_t i, const std::string &what, const std::vector<float> &v) {
    std::string name = spec.params[i].name;
    for (char &c : name)
      if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
          c != '-')
        c = '_';
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "p%03zu.", i);
    std::string err = writeNpy(o.dumpDir + "/" + prefix + name + "." + what +
                                   ".npy",
                               v, spec.params[i].shape);
    if (!err.empty())
      muon_rt_fail("dump", err.c_str());
  }

  void injectShapeFault(int64_t t, std::vector<std::vector<int64_t>> &shapes) {
    if (o.fault.kind == Fault::ShardShape && o.fault.rank == rank &&
        o.fault.step == t && !shapes.empty()) {
      std::fprintf(stderr, "muon-run: rank %d: injecting a wrong shard shape "
                           "for entry argument #0\n", rank);
      shapes[0][0] += 1; // The buffer is never read past its end: the
                         // entry check stops the job first.
    }
  }

  void injectProcessFault(int64_t t) {
    if (o.fault.rank != rank || o.fault.step != t)
      return;
    if (o.fault.kind == Fault::Kill) {
      std::fprintf(stderr, "muon-run: rank %d: killing itself (SIGKILL) "
                           "before step %lld\n", rank, (long long)t);
      std::fflush(stderr);
      raise(SIGKILL);
    }
    if (o.fault.kind == Fault::Hang) {
      std::fprintf(stderr, "muon-run: rank %d: hanging before step %lld\n",
                   rank, (long long)t);
      std::fflush(stderr);
      for (;;)
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }

  const Options &o;
  const StepSpec &spec;
  int rank = 0, size = 1;
  std::vector<std::vector<float>> fullP, fullM, localP, localM;
  std::vector<Shard> argShards, resultShards;
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
  FailureOr<StepSpec> spec = parseAndLower(context, o, module);
  if (failed(spec))
    return fail();

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions eo;
  eo.transformer = makeOptimizingTransformer(o.optLevel, 0, nullptr);
  std::vector<StringRef> libs = {MUON_C_RUNNER_UTILS};
  eo.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*module, eo);
  if (!engine) {
    std::string msg = llvm::toString(engine.takeError());
    if (rank == 0)
      std::fprintf(stderr, "muon-run: JIT compilation failed: %s\n", msg.c_str());
    return fail();
  }
  // The JIT materialises lazily: look the entry up now so that code
  // generation counts as compile time, not as the first step.
  if (auto sym = (*engine)->lookupPacked("_mlir_ciface_" + spec->entry); !sym) {
    std::string msg = llvm::toString(sym.takeError());
    if (rank == 0)
      std::fprintf(stderr, "muon-run: error: entry @%s: %s\n",
                   spec->entry.c_str(), msg.c_str());
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
  if (!o.dumpDir.empty() && rank == 0)
    mkdir(o.dumpDir.c_str(), 0755);

  Job job(o, *spec);
  job.initialise();
  muon_rt_reset_counters();
  for (int64_t t = 0; t < o.steps; ++t)
    job.step(**engine, t);
  int code = job.finish(compileSeconds);
  muon_rt_finalize();
  return code;
}
