//===- muon-run.cpp - Compile a muon.step, run it on N ranks, check it ----===//
//
//   muon-run step.mlir -np 4 --steps 3
//
// Without an MPI environment muon-run is the launcher: it checks the input
// once (parse, plan, lower), then re-executes itself under `mpirun` on as
// many ranks as the mesh has. Under mpirun (or with --worker) it is one rank
// of the job: see Worker.cpp.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "ObjectCache.h"
#include "Options.h"
#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Execution/CompiledEntry.h"

#include "muon/InitAll.h"
#include "muon/Support/LargeStack.h"
#include "muon/Support/NumberOption.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "llvm/Support/CommandLine.h"

#include <cstdio>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace muon::run;
using muon::exec::CompiledEntry;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("muon-run options");

cl::opt<std::string> input(cl::Positional, cl::desc("<step.mlir>"),
                           cl::Required, cl::cat(category));
cl::opt<int> np("np",
                cl::desc("Ranks to launch (default: the mesh's rank count); "
                         "must equal the mesh's rank count"),
                cl::init(0), cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("Function holding the muon.step (default: "
                                    "the only one)"),
                           cl::init(""), cl::cat(category));
cl::opt<int64_t> steps("steps", cl::desc("Optimizer steps to run (default 3)"),
                       cl::init(3), cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of the data generator (default 1)"),
                       cl::init(1), cl::cat(category));
cl::opt<muon::Number>
    rtol("rtol", cl::desc("Relative tolerance (numpy.allclose; default 1e-5)"),
         cl::init(1e-5), cl::cat(category));
cl::opt<muon::Number>
    atolOpt("atol",
            cl::desc("Absolute tolerance (numpy.allclose; default 1e-5)"),
            cl::init(1e-5), cl::cat(category));
cl::opt<std::string> dumpDir(
    "dump",
    cl::desc("Write initial, per-step and reference tensors as .npy files "
             "into this directory (docs/running.md)"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write the measured timeline of the run as Chrome trace JSON "
             "(one process per rank, compute and comm threads; the format "
             "of muon-opt --muon-timeline; docs/schedule.md)"),
    cl::init(""), cl::cat(category));
cl::opt<muon::Target> target(
    "target", cl::desc("Code generation target of the step"),
    cl::values(clEnumValN(muon::Target::Cpu, "cpu",
                          "host code over MPI + CBLAS (default)"),
               clEnumValN(muon::Target::Cuda, "cuda",
                          "tensors in GPU memory: Newton-Schulz and "
                          "generated kernels on the GPU (rank r uses GPU "
                          "local-rank mod device count; ranks may share "
                          "one)")),
    cl::init(muon::Target::Cpu), cl::cat(category));
cl::opt<std::string> transport(
    "transport",
    cl::desc("How the ranks exchange tensors: mpi (default; with --target "
             "cuda through host copies of the blocks exchanged, ranks may "
             "share a GPU) or nccl (with --target cuda: NCCL collectives on "
             "the step's device buffers, one GPU per rank; shapes and "
             "barriers stay on MPI). Sets MUON_RT_BACKEND"),
    cl::init("mpi"), cl::cat(category));
cl::opt<bool> batchCollectives(
    "batch-collectives",
    cl::desc("Merge a round's gathers and scatters over one communicator "
             "into one all-to-all each (default true; false keeps one rooted "
             "call per gather and scatter, to compare)"),
    cl::init(true), cl::cat(category));
cl::opt<int64_t> nsStackBytes(
    "ns-stack-bytes",
    cl::desc("Stack an owner's same-shape matrices of a round into one "
             "batched Newton-Schulz call up to this many bytes (4 per "
             "element); 0: one call per matrix; -1 (default): 64 MiB with "
             "--target cuda, 0 with --target cpu"),
    cl::init(-1), cl::cat(category));
cl::opt<int64_t> maxPrefetchBytes(
    "max-prefetch-bytes",
    cl::desc("Bound on the gathered matrices one rank holds at once: the "
             "step's prefetch_count is lowered until its rounds fit (0, the "
             "default: no bound; docs/schedule.md)"),
    cl::init(0), cl::cat(category));
cl::opt<bool> placeDeallocations(
    "place-deallocations",
    cl::desc("Free each buffer of the step after its last use (default "
             "true; false: MLIR's ownership-based deallocation, buffers "
             "freed when the step returns, to compare the 'step buffers "
             "peak' line)"),
    cl::init(true), cl::cat(category));
cl::opt<muon::Number>
    lrOpt("lr",
          cl::desc("The learning rate of a step that reads lr as an operand "
                   "(lr(%v) on muon.step: an f64 entry argument)"),
          cl::init(0), cl::cat(category));
cl::opt<muon::Number> weightDecayOpt(
    "weight-decay",
    cl::desc("The weight decay of a step that reads weight_decay as an "
             "operand"),
    cl::init(0), cl::cat(category));
cl::opt<int> optLevel("O", cl::desc("JIT optimisation level (0-3; default 2)"),
                      cl::init(2), cl::cat(category));
/// `v` in the shortest decimal that reads back as the same double
/// (std::to_string keeps six decimals: 1e-9 would reach the ranks as
/// 0.000000, and -1 reads -1.000000 in a message).
static std::string exactNumber(double v) {
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v)
      break;
  }
  return text;
}

cl::opt<muon::Number>
    timeout("timeout",
            cl::desc("Seconds a collective may wait for its peers, "
                     "and a rank's host work before a step may "
                     "take, before the job is aborted (sets "
                     "MUON_RT_TIMEOUT_S; default 300)"),
            cl::init(0), cl::cat(category));
cl::opt<std::string>
    mpirun("mpirun", cl::desc("The MPI launcher (default: mpirun on the PATH)"),
           cl::init("mpirun"), cl::cat(category));
cl::opt<std::string> inject(
    "inject-fault",
    cl::desc(
        "Test hook: kill@RANK:STEP, hang@RANK:STEP, "
        "shard-shape@RANK:STEP or corrupt@RANK:STEP makes that rank die, "
        "hang, pass a wrong shard, or perturb its first non-empty parameter "
        "shard "
        "by 1e-3 after the step (the check must then FAIL)"),
    cl::init(""), cl::cat(category));
cl::opt<bool> allowOversubscribe(
    "allow-oversubscribe",
    cl::desc("Launch even when the job has more than 8 ranks per core (a "
             "runaway launch is hard to stop; by default it is refused)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> worker("worker",
                     cl::desc("Run as one rank of an already launched job"),
                     cl::init(false), cl::cat(category));

bool underMpi() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v))
      return true;
  return false;
}

/// A whole non-negative decimal integer, or nothing.
std::optional<int64_t> parseCount(const std::string &s) {
  if (s.empty() || s.size() > 18 ||
      s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(s);
}

bool parseFault(const std::string &s, Fault &f) {
  if (s.empty())
    return true;
  size_t at = s.find('@'), colon = s.find(':');
  if (at == std::string::npos || colon == std::string::npos || colon < at)
    return false;
  std::string kind = s.substr(0, at);
  f.kind = kind == "kill"          ? Fault::Kill
           : kind == "hang"        ? Fault::Hang
           : kind == "shard-shape" ? Fault::ShardShape
           : kind == "corrupt"     ? Fault::Corrupt
                                   : Fault::None;
  std::optional<int64_t> rank = parseCount(s.substr(at + 1, colon - at - 1));
  std::optional<int64_t> step = parseCount(s.substr(colon + 1));
  if (!rank || !step)
    return false;
  f.rank = *rank;
  f.step = *step;
  return f.kind != Fault::None;
}

int usageError(const std::string &message) {
  std::fprintf(stderr, "muon-run: error: %s\n", message.c_str());
  return 1;
}

/// The options' values, checked before anything runs. Returns "" or why.
std::string validateOptions() {
  // Said in muon-run's words, before MLIR's parser would say it at an
  // unknown location without the reason.
  if (input != "-") {
    int fd = -1;
    if (llvm::sys::fs::is_directory(input))
      return "cannot read '" + input + "': it is a directory";
    if (std::error_code ec =
            llvm::sys::fs::access(input, llvm::sys::fs::AccessMode::Exist))
      return "cannot read '" + input + "': " + ec.message();
    if (std::error_code ec = llvm::sys::fs::openFileForRead(input, fd)) {
      return "cannot read '" + input + "': " + ec.message();
    }
    ::close(fd);
  }
  auto number = exactNumber;
  if (np.getNumOccurrences() && np < 1)
    return "--np must be >= 1, got " + std::to_string(np);
  if (steps < 1)
    return "--steps must be >= 1";
  // The generator's stream ids number steps in 20 bits: a later step's
  // gradients would repeat another parameter's (docs/running.md).
  if (steps > (int64_t(1) << 20))
    return "--steps must be at most 2^20 (1048576), got " +
           std::to_string(steps);
  if (!std::isfinite(rtol) || rtol < 0)
    return "--rtol must be a finite number >= 0, got " + number(rtol);
  if (!std::isfinite(atolOpt) || atolOpt < 0)
    return "--atol must be a finite number >= 0, got " + number(atolOpt);
  if (optLevel < 0 || optLevel > 3)
    return "-O must be 0, 1, 2 or 3, got " + std::to_string(optLevel);
  // The bounds of the step's own attributes (muon.step's verifier).
  auto rate = [](double v) {
    return v >= 0 && v <= muon::optim::kMaxLrOrWeightDecay;
  };
  if (lrOpt.getNumOccurrences() && !rate(lrOpt))
    return "--lr must be a number in [0, 2^60], got " + number(lrOpt);
  if (weightDecayOpt.getNumOccurrences() && !rate(weightDecayOpt))
    return "--weight-decay must be a number in [0, 2^60], got " +
           number(weightDecayOpt);
  if (timeout.getNumOccurrences() && (!std::isfinite(timeout) || timeout <= 0))
    return "--timeout must be a positive, finite number of seconds, got " +
           number(timeout);
  if (nsStackBytes < -1)
    return "--ns-stack-bytes must be -1 (by target), 0 (no stacks) or a "
           "byte count, got " +
           std::to_string(nsStackBytes);
  if (maxPrefetchBytes < 0)
    return "--max-prefetch-bytes must be 0 (no bound) or a byte count, got " +
           std::to_string(maxPrefetchBytes);
  if (transport != "mpi" && transport != "nccl")
    return "--transport must be mpi or nccl, got '" + transport + "'";
  // Given but empty (`--trace=$FILE` with FILE unset) is a mistake, not
  // "no trace".
  for (const cl::opt<std::string> *path : {&traceFile, &dumpDir, &inject})
    if (path->getNumOccurrences() && path->empty())
      return "--" + path->ArgStr.str() + " needs a value; it is empty";
  // The environment's backend, forwarded to the ranks when --transport is
  // not given: checked as the option is.
  if (const char *env = std::getenv("MUON_RT_BACKEND");
      env && *env && !transport.getNumOccurrences()) {
    std::string backend = env;
    if (backend != "mpi" && backend != "nccl")
      return "MUON_RT_BACKEND=" + backend +
             " in the environment is not a backend of the runtime (mpi or "
             "nccl; --transport sets it)";
    if (backend == "nccl" && target != muon::Target::Cuda)
      return "MUON_RT_BACKEND=nccl in the environment needs --target cuda "
             "(the CPU target exchanges host tensors over MPI)";
  }
  if (transport == "nccl" && target != muon::Target::Cuda)
    return "--transport nccl needs --target cuda (the CPU target exchanges "
           "host tensors over MPI)";
  // The runtime's other settings the ranks inherit, checked by the
  // runtime's rules before anything is compiled: otherwise every rank
  // stops at start-up, and a one-rank job with the runtime's exit status
  // (2) instead of 1.
  if (const char *env = std::getenv("MUON_RT_TIMEOUT_S");
      env && !timeout.getNumOccurrences()) {
    char *end = nullptr;
    double v = std::strtod(env, &end);
    if (end == env || *end || !(v > 0) || !std::isfinite(v))
      return std::string("MUON_RT_TIMEOUT_S='") + env +
             "' in the environment is not a positive, finite number of "
             "seconds (--timeout sets it)";
  }
  if (const char *env = std::getenv("MUON_RT_MALLOC_REUSE");
      env && *env && std::string(env) != "0" && std::string(env) != "1")
    return std::string("MUON_RT_MALLOC_REUSE=") + env +
           " in the environment is not 0 or 1";
  if (!traceFile.empty()) {
    llvm::StringRef dir = llvm::sys::path::parent_path(traceFile);
    if (!dir.empty() && !llvm::sys::fs::is_directory(dir))
      return "--trace: cannot write '" + traceFile + "': '" + dir.str() +
             (llvm::sys::fs::exists(dir) ? "' is not a directory"
                                         : "' does not exist");
    // Found before the run, not after its verdict (the file is written
    // last, from every rank's part).
    if (llvm::sys::fs::is_directory(traceFile))
      return "--trace: cannot write '" + traceFile + "': it is a directory";
  }
  // The dump directory is made, parents included, once every check has
  // passed (makeDumpDirectory); a path that cannot become one fails here,
  // before anything runs, not on rank 0 in the middle of the job.
  if (!dumpDir.empty()) {
    llvm::SmallString<256> existing(dumpDir);
    while (!existing.empty() && !llvm::sys::fs::exists(existing))
      llvm::sys::path::remove_filename(existing);
    if (existing == llvm::StringRef(dumpDir) &&
        !llvm::sys::fs::is_directory(existing))
      return "--dump: '" + dumpDir + "' exists and is not a directory";
    if (!existing.empty() && !llvm::sys::fs::is_directory(existing))
      return "--dump: cannot create the directory '" + dumpDir + "': '" +
             std::string(existing) + "' is not a directory";
  }
  return "";
}

/// What the launcher hands its ranks: the object to load and its key.
struct LauncherObject {
  std::string path, key;
  double compileSeconds = 0;
  bool cached = false;
};

/// Lowers once in the launcher so that a bad input is reported once,
/// before any rank starts, and compiles the step once, into `scratch` (a
/// file of ours), which every rank loads instead of compiling it again
/// (one compile instead of one per rank on the same cores). A step
/// compiled before, whose cached object reads as one, is taken from the
/// cache instead. Returns the mesh's rank count, or -1.
int64_t checkInput(const Options &o, const std::string &scratch,
                   LauncherObject &object) {
  auto start = std::chrono::steady_clock::now();
  mlir::DialectRegistry registry;
  registerRunDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::FailureOr<StepSpec> spec = parseAndLower(context, o, module);
  if (mlir::failed(spec))
    return -1;
  int64_t ranks = spec->mesh.numRanks();
  object.key = objectKey(*module, o.optLevel);
  std::string cacheNote;
  std::string cachePath = cachedObjectPath(object.key, cacheNote);
  if (!cacheNote.empty())
    std::fprintf(stderr, "muon-run: note: %s\n", cacheNote.c_str());
  if (!cachePath.empty() && isReadableObject(cachePath, object.key)) {
    object.path = cachePath;
    object.cached = true;
  } else {
    // A missing or unreadable entry is compiled (again) and replaced.
    std::string error;
    if (!CompiledEntry::create(*module, spec->entry, o.optLevel, error, scratch,
                               {}, object.key)) {
      std::fprintf(stderr, "muon-run: error: %s\n", error.c_str());
      return -1;
    }
    object.path = scratch;
    if (!cachePath.empty() && !storeInCache(scratch, cachePath))
      std::fprintf(stderr,
                   "muon-run: note: cannot store the compiled step in the "
                   "object cache as %s; the next run compiles it again\n",
                   cachePath.c_str());
  }
  object.compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  return ranks;
}

/// Whether `program` can be started: LLVM's PATH search, or an executable
/// file when given as a path (findProgramByName returns paths as they are).
bool runnable(const std::string &program) {
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program);
  return found && llvm::sys::fs::can_execute(*found);
}

/// Runs the MPI launcher and waits for it, so that a launcher that fails
/// without a word (a wrong --mpirun) still gets a message.
int launch(int ranks, int argc, char **argv) {
  setenv("OPENBLAS_NUM_THREADS", "1", 0); // ranks share the cores
  if (timeout > 0)
    setenv("MUON_RT_TIMEOUT_S", exactNumber(timeout.getValue()).c_str(), 1);
  std::vector<std::string> cmd = {mpirun};
  if (geteuid() == 0)
    cmd.push_back("--allow-run-as-root");
  for (const char *a : {"--oversubscribe", "--bind-to", "none", "-np"})
    cmd.push_back(a);
  cmd.push_back(std::to_string(ranks));
  // Rank 0 writes its verdict here: a launcher that fails without a word
  // (a wrong --mpirun) is then told apart from a job that reached one.
  std::string verdictFile =
      "/tmp/muon-run-verdict-" + std::to_string(getpid());
  setenv("MUON_RUN_VERDICT", verdictFile.c_str(), 1);
  for (const char *v : {"OPENBLAS_NUM_THREADS", "MUON_RT_TIMEOUT_S",
                        "MUON_RT_BACKEND", "MUON_RUN_VERDICT",
                        "MUON_RUN_OBJECT", "MUON_RUN_OBJECT_KEY",
                        "MUON_RUN_COMPILE_S", "MUON_RUN_OBJECT_CACHED",
                        "MUON_C_RUNNER_UTILS", "MUON_RT_CUDA_LIBRARY",
                        "MUON_RT_NCCL_LIBRARY"})
    if (std::getenv(v)) {
      cmd.push_back("-x");
      cmd.push_back(v);
    }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  cmd.push_back(n > 0 ? std::string(self, n) : argv[0]);
  cmd.push_back("--worker");
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-np" || a == "--np") {
      ++i;
      continue;
    }
    if (a.rfind("-np=", 0) == 0 || a.rfind("--np=", 0) == 0)
      continue;
    cmd.push_back(a);
  }
  std::vector<char *> args;
  for (std::string &s : cmd)
    args.push_back(s.data());
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return usageError(std::string("cannot start '") + mpirun + "': " +
                      std::strerror(errno));
  if (pid == 0) {
    execvp(args[0], args.data());
    std::fprintf(stderr, "muon-run: error: cannot run '%s': %s\n",
                 mpirun.c_str(), std::strerror(errno));
    std::_Exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  // What rank 0 wrote: "PASS", "FAIL", or nothing (no verdict reached).
  std::string verdictText;
  if (FILE *f = std::fopen(verdictFile.c_str(), "r")) {
    char line[16] = {0};
    if (std::fgets(line, sizeof line, f))
      verdictText = line;
    std::fclose(f);
  }
  std::remove(verdictFile.c_str());
  bool verdict = !verdictText.empty();
  // Exit 0 only on a PASS the job reached: a launcher that exits 0 without
  // running the ranks (a wrong --mpirun such as /bin/true) is an error.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
      verdictText == "PASS\n")
    return 0;
  if (!verdict) {
    if (WIFSIGNALED(status))
      std::fprintf(stderr, "muon-run: error: the job ended without a "
                           "verdict: the MPI launcher '%s' was killed by "
                           "signal %d\n", mpirun.c_str(), WTERMSIG(status));
    else
      std::fprintf(stderr, "muon-run: error: the job ended without a "
                           "verdict: the MPI launcher '%s' exited with status "
                           "%d (messages above, if any, say why)\n",
                   mpirun.c_str(), WEXITSTATUS(status));
  }
  return 1;
}
int muonRunMain(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "muon-run: compile a muon.step module, run it on N MPI ranks from a "
      "seeded deterministic initialisation, and compare every parameter and "
      "momentum after K steps with an independent single-device Muon "
      "(numpy.allclose with --rtol/--atol). Prints per-parameter errors, the "
      "Newton-Schulz counters of every rank (zero redundancy: each matrix "
      "orthogonalised once per step over all ranks) and PASS/FAIL; exits 0 "
      "on PASS, 1 on FAIL or error.\n");
  Options o;
  o.input = input;
  o.entry = entry;
  o.steps = steps;
  o.seed = seed;
  o.rtol = rtol;
  o.atol = atolOpt;
  o.dumpDir = dumpDir;
  o.traceFile = traceFile;
  o.optLevel = optLevel;
  o.target = target;
  o.batchCollectives = batchCollectives;
  o.nsStackBytes = nsStackBytes;
  o.maxPrefetchBytes = maxPrefetchBytes;
  o.placeDeallocations = placeDeallocations;
  if (lrOpt.getNumOccurrences())
    o.lr = lrOpt;
  if (weightDecayOpt.getNumOccurrences())
    o.weightDecay = weightDecayOpt;
  if (!parseFault(inject, o.fault))
    return usageError("bad --inject-fault '" + inject +
                      "' (expected kill@R:S, hang@R:S, shard-shape@R:S or "
                      "corrupt@R:S with R and S non-negative integers)");
  if (std::string why = validateOptions(); !why.empty())
    return usageError(why);
  if (o.fault.kind != Fault::None && o.fault.step >= steps)
    return usageError("--inject-fault step " + std::to_string(o.fault.step) +
                      " is beyond the last step (" +
                      std::to_string(steps - 1) + ")");
  if (timeout > 0)
    setenv("MUON_RT_TIMEOUT_S", exactNumber(timeout.getValue()).c_str(), 1);
  // The runtime's backend, in the launcher (forwarded to every rank) and in
  // a rank started by hand (--worker).
  if (transport.getNumOccurrences())
    setenv("MUON_RT_BACKEND", transport.c_str(), 1);
  if (worker || underMpi())
    return runWorker(o, &argc, &argv);

  // The step compiled once, here, for every rank: a fresh file of ours
  // (unique name, TMPDIR honoured), removed when the job ends.
  llvm::SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("muon-run-step", "o", scratch))
    return usageError("cannot create a temporary file for the compiled "
                      "step: " + ec.message());
  struct RemoveScratch {
    std::string path;
    ~RemoveScratch() { std::remove(path.c_str()); }
  } removeScratch{std::string(scratch)};
  // Only this launcher says which object its ranks load.
  for (const char *v : {"MUON_RUN_OBJECT", "MUON_RUN_OBJECT_KEY",
                        "MUON_RUN_COMPILE_S", "MUON_RUN_OBJECT_CACHED"})
    unsetenv(v);
  LauncherObject object;
  int64_t meshRanks = checkInput(o, std::string(scratch), object);
  if (meshRanks < 0)
    return 1;
  setenv("MUON_RUN_OBJECT", object.path.c_str(), 1);
  setenv("MUON_RUN_OBJECT_KEY", object.key.c_str(), 1);
  setenv("MUON_RUN_COMPILE_S", std::to_string(object.compileSeconds).c_str(),
         1);
  if (object.cached)
    setenv("MUON_RUN_OBJECT_CACHED", "1", 1);
  int ranks = np > 0 ? np.getValue() : static_cast<int>(meshRanks);
  if (ranks != meshRanks) {
    std::fprintf(stderr,
                 "muon-run: error: the mesh of the step has %lld ranks but "
                 "-np %d was given; the job needs exactly one process per "
                 "mesh rank\n",
                 static_cast<long long>(meshRanks), ranks);
    return 1;
  }
  if (o.fault.kind != Fault::None && o.fault.rank >= ranks)
    return usageError("--inject-fault rank " + std::to_string(o.fault.rank) +
                      " is outside the job (" + std::to_string(ranks) +
                      " ranks)");
  // Even one rank initialises MPI, and OpenMPI needs its launcher for that.
  if (!runnable(mpirun))
    return usageError("cannot find the MPI launcher '" + mpirun +
                      "' (install OpenMPI, put mpirun on PATH, or pass "
                      "--mpirun=PATH)");
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (ranks > 8 * static_cast<int64_t>(cores) && !allowOversubscribe)
    return usageError(
        "the mesh needs " + std::to_string(ranks) + " ranks but this machine "
        "has " + std::to_string(cores) + " cores; more than 8 ranks per core "
        "is refused (pass --allow-oversubscribe to launch anyway)");
  if (!o.dumpDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(o.dumpDir))
      return usageError("--dump: cannot create the directory '" + o.dumpDir +
                        "': " + ec.message());
  if (ranks == 1)
    return runWorker(o, &argc, &argv);
  std::fprintf(stderr, "muon-run: launching %d ranks with %s on %u cores\n",
               ranks, mpirun.c_str(), cores);
  return launch(ranks, argc, argv);
}
} // namespace

int main(int argc, char **argv) {
  // Deeply nested input must not overflow the stack (LargeStack.h).
  return muon::runOnLargeStack("muon-run",
                               [&] { return muonRunMain(argc, argv); });
}
