//===- MuonExtension.cpp - The Python extension muon._muon -----------------===//
//
// A thin layer over the project's C API (muon-c/*.h) and MLIR's: contexts
// that collect diagnostics, modules (parse, print, verify, pass pipelines,
// the muon-to-llvm pipeline, the report), step queries (shapes, local
// shards, partial terms, plans), compiled entries called on NumPy arrays or
// torch CPU tensors without copies, and the runtime's process helpers.
// Errors are returned as data (diagnostics, messages); the Python package
// (muon/_ir.py) turns them into exceptions.
//
//===----------------------------------------------------------------------===//

#include "muon-c/Dialects.h"
#include "muon-c/Execution.h"
#include "muon-c/LargeStack.h"
#include "muon-c/Pipeline.h"
#include "muon-c/Step.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <dlfcn.h>

#include <memory>
#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

void appendTo(MlirStringRef s, void *userData) {
  static_cast<std::string *>(userData)->append(s.data, s.length);
}

/// "file:line:col" for a file location (the innermost one of a call site
/// or name), else MLIR's printed form.
std::string locationText(MlirLocation loc) {
  for (int depth = 0; depth < 16; ++depth) {
    if (mlirLocationIsAFileLineColRange(loc)) {
      MlirStringRef file = mlirIdentifierStr(
          mlirLocationFileLineColRangeGetFilename(loc));
      std::string name(file.data, file.length);
      // mlirModuleCreateParse names its buffer "-".
      return (name.empty() || name == "-" ? std::string("<string>") : name) +
             ":" +
             std::to_string(mlirLocationFileLineColRangeGetStartLine(loc)) +
             ":" +
             std::to_string(mlirLocationFileLineColRangeGetStartColumn(loc));
    }
    if (mlirLocationIsACallSite(loc))
      loc = mlirLocationCallSiteGetCallee(loc);
    else if (mlirLocationIsAName(loc))
      loc = mlirLocationNameGetChildLoc(loc);
    else
      break;
  }
  std::string text;
  mlirLocationPrint(loc, appendTo, &text);
  return text;
}

/// (severity, location, message, notes) as the Python layer reads it.
using Diag = std::tuple<std::string, std::string, std::string,
                        std::vector<std::tuple<std::string, std::string>>>;

const char *severityName(MlirDiagnosticSeverity s) {
  switch (s) {
  case MlirDiagnosticError:
    return "error";
  case MlirDiagnosticWarning:
    return "warning";
  case MlirDiagnosticNote:
    return "note";
  case MlirDiagnosticRemark:
    return "remark";
  }
  return "error";
}

std::string messageOf(MlirDiagnostic d) {
  std::string text;
  mlirDiagnosticPrint(d, appendTo, &text);
  return text;
}

/// An MLIR context with the project's dialects, whose diagnostics are kept
/// until taken (none reaches stderr).
class Context {
public:
  Context() {
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    muonRegisterAllDialects(registry);
    ctx = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
    mlirDialectRegistryDestroy(registry);
    muonRegisterAllPasses();
    mlirContextAttachDiagnosticHandler(ctx, &Context::handle, this, nullptr);
  }
  ~Context() { mlirContextDestroy(ctx); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  std::vector<Diag> takeDiagnostics() { return std::move(diags); }
  void addError(const std::string &message) {
    diags.emplace_back("error", "", message,
                       std::vector<std::tuple<std::string, std::string>>{});
  }

  MlirContext ctx;

private:
  static MlirLogicalResult handle(MlirDiagnostic d, void *userData) {
    auto *self = static_cast<Context *>(userData);
    std::vector<std::tuple<std::string, std::string>> notes;
    for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(d); i < e; ++i) {
      MlirDiagnostic n = mlirDiagnosticGetNote(d, i);
      std::string message = messageOf(n);
      // The generic form of the failing op, which MLIR attaches to verifier
      // errors: long, and the location already says which op.
      if (message.rfind("see current operation:", 0) == 0)
        continue;
      notes.emplace_back(locationText(mlirDiagnosticGetLocation(n)),
                         std::move(message));
    }
    self->diags.emplace_back(severityName(mlirDiagnosticGetSeverity(d)),
                             locationText(mlirDiagnosticGetLocation(d)),
                             messageOf(d), std::move(notes));
    return mlirLogicalResultSuccess();
  }

  std::vector<Diag> diags;
};

/// `work()` on a thread with a large stack (muon-c/LargeStack.h): MLIR
/// parses, verifies, prints and transforms one level of nesting per call,
/// and deeply nested text would overflow the interpreter's stack. `work`
/// only calls MLIR (never Python), so the caller keeps the GIL while it
/// waits.
template <typename Work> auto onLargeStack(Work &&work) -> decltype(work()) {
  using Result = decltype(work());
  struct Call {
    Work *todo;
    std::optional<Result> result;
    std::exception_ptr failure;
  } call{&work, std::nullopt, nullptr};
  muonRunOnLargeStack(
      mlirStringRefCreateFromCString("muon (Python)"),
      [](void *p) {
        auto *c = static_cast<Call *>(p);
        // An exception must not leave the worker thread (that would end
        // the process): it is thrown again here, where nanobind turns it
        // into Python's (std::bad_alloc: MemoryError).
        try {
          c->result.emplace((*c->todo)());
        } catch (...) {
          c->failure = std::current_exception();
        }
        return 0;
      },
      &call);
  if (call.failure)
    std::rethrow_exception(call.failure);
  return std::move(*call.result);
}

/// A builtin.module owned by Python; keeps its context alive.
class Module {
public:
  Module(std::shared_ptr<Context> context, MlirModule m)
      : context(std::move(context)), module(m) {}
  ~Module() {
    onLargeStack([&] {
      mlirModuleDestroy(module);
      return 0;
    });
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  MlirOperation op() const { return mlirModuleGetOperation(module); }

  std::shared_ptr<Context> context;
  MlirModule module;
};

std::shared_ptr<Module> parse(std::shared_ptr<Context> context,
                              const std::string &text) {
  // std::string's buffer is NUL-terminated, as MLIR's lexer needs.
  MlirModule m = onLargeStack([&] {
    return mlirModuleCreateParse(
        context->ctx, mlirStringRefCreate(text.c_str(), text.size()));
  });
  if (mlirModuleIsNull(m))
    return nullptr;
  return std::make_shared<Module>(context, m);
}

std::shared_ptr<Module> parseFile(std::shared_ptr<Context> context,
                                  const std::string &path) {
  MlirModule m = onLargeStack([&] {
    return mlirModuleCreateParseFromFile(
        context->ctx, mlirStringRefCreate(path.c_str(), path.size()));
  });
  if (mlirModuleIsNull(m))
    return nullptr;
  return std::make_shared<Module>(context, m);
}

std::string print(const Module &m, bool debugInfo) {
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  if (debugInfo)
    mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  std::string text;
  onLargeStack([&] {
    mlirOperationPrintWithFlags(m.op(), flags, appendTo, &text);
    return 0;
  });
  mlirOpPrintingFlagsDestroy(flags);
  return text;
}

std::shared_ptr<Module> cloneModule(const Module &m) {
  MlirOperation copy = onLargeStack([&] { return mlirOperationClone(m.op()); });
  return std::make_shared<Module>(m.context, mlirModuleFromOperation(copy));
}

bool verify(const Module &m) {
  return onLargeStack([&] { return mlirOperationVerify(m.op()); });
}

/// Runs a textual pass pipeline ("builtin.module(...)" or a bare list of
/// module passes) on the module, with the verifier after every pass.
bool runPipeline(Module &m, const std::string &pipeline) {
  MlirPassManager pm = mlirPassManagerCreate(m.context->ctx);
  std::string text = pipeline;
  if (text.rfind("builtin.module(", 0) != 0)
    text = "builtin.module(" + text + ")";
  std::string error;
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreate(text.c_str(), text.size()), appendTo, &error);
  bool ok = mlirLogicalResultIsSuccess(parsed);
  if (!ok)
    m.context->addError("invalid pass pipeline '" + pipeline + "': " + error);
  else
    ok = onLargeStack([&] {
      return mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, m.op()));
    });
  mlirPassManagerDestroy(pm);
  return ok;
}

/// The muon-to-llvm pipeline (built from pass constructors, the IR verified
/// once at the end).
bool lower(Module &m, const std::string &target, bool assignOwners,
           int64_t nsStackBytes, bool batchCollectives,
           int64_t maxPrefetchBytes, bool placeDeallocations,
           const std::string &cudaChip) {
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  options.target = mlirStringRefCreate(target.c_str(), target.size());
  options.assignOwners = assignOwners;
  options.nsStackBytes = nsStackBytes;
  options.batchCollectives = batchCollectives;
  options.maxPrefetchBytes = maxPrefetchBytes;
  options.placeDeallocations = placeDeallocations;
  options.cudaChip = mlirStringRefCreate(cudaChip.c_str(), cudaChip.size());
  std::string error;
  bool ok = onLargeStack([&] {
    return mlirLogicalResultIsSuccess(
        muonRunMuonToLLVMPipeline(m.op(), options, appendTo, &error));
  });
  if (!ok && !error.empty())
    m.context->addError(error);
  return ok;
}

/// muonLLVMPipelineOptionsDefault() by the Python keyword names of
/// Module.lower, so the package's own defaults can be checked against the
/// pipeline's (a test does) instead of drifting apart unnoticed.
nb::dict lowerDefaults() {
  MuonLLVMPipelineOptions d = muonLLVMPipelineOptionsDefault();
  nb::dict out;
  out["target"] = std::string(d.target.data, d.target.length);
  out["assign_owners"] = d.assignOwners;
  out["ns_stack_bytes"] = d.nsStackBytes;
  out["batch_collectives"] = d.batchCollectives;
  out["max_prefetch_bytes"] = d.maxPrefetchBytes;
  out["place_deallocations"] = d.placeDeallocations;
  out["cuda_chip"] = std::string(d.cudaChip.data, d.cudaChip.length);
  return out;
}

nb::object report(Module &m, bool json, bool schedules,
                  int64_t nsStackBytes) {
  MuonStepReportOptions options = muonStepReportOptionsDefault();
  options.json = json;
  options.schedules = schedules;
  options.nsStackBytes = nsStackBytes;
  std::string text;
  if (onLargeStack([&] {
        return mlirLogicalResultIsFailure(
            muonStepReportWithOptions(m.op(), options, appendTo, &text));
      }))
    return nb::none();
  return nb::str(text.c_str(), text.size());
}

/// A muon.step inside a module (index in walk order).
class Step {
public:
  Step(std::shared_ptr<Module> module, intptr_t index)
      : module(std::move(module)), index(index) {}

  /// Found by walking the module, which recurses per level of nesting:
  /// on the large stack, like every other walk of a module.
  MlirOperation op() const {
    return onLargeStack(
        [&] { return muonModuleGetStep(module->op(), index); });
  }

  std::shared_ptr<Module> module;
  intptr_t index;
};

intptr_t numSteps(const Module &m) {
  return onLargeStack([&] { return muonModuleNumSteps(m.op()); });
}

nb::object paramName(const Step &s, intptr_t param) {
  std::string name;
  if (mlirLogicalResultIsFailure(
          muonStepParamName(s.op(), param, appendTo, &name)))
    return nb::none();
  return nb::str(name.c_str(), name.size());
}

nb::object paramShape(const Step &s, intptr_t param) {
  intptr_t rank = muonStepParamRank(s.op(), param);
  if (rank < 0)
    return nb::none();
  std::vector<int64_t> shape(rank);
  if (mlirLogicalResultIsFailure(muonStepParamShape(s.op(), param,
                                                    shape.data())))
    return nb::none();
  return nb::cast(shape);
}

/// (dim, [sizes]) of a blocked Newton-Schulz, None for a whole matrix, or
/// False on failure (a diagnostic says why).
nb::object paramBlocks(const Step &s, intptr_t param) {
  intptr_t n = muonStepParamBlocks(s.op(), param, nullptr, nullptr);
  if (n < 0)
    return nb::cast(false);
  if (n == 0)
    return nb::none();
  int64_t dim = -1;
  std::vector<int64_t> sizes(n);
  muonStepParamBlocks(s.op(), param, &dim, sizes.data());
  return nb::make_tuple(dim, sizes);
}

/// (local shape, local offsets, flattened, compute shape, compute offsets)
/// or None (a diagnostic says why).
nb::object localShard(const Step &s, intptr_t param, int kind, int64_t rank) {
  intptr_t dims = muonStepParamRank(s.op(), param);
  if (dims < 0)
    return nb::none();
  std::vector<int64_t> shape(dims), offsets(dims), cshape(dims), coffsets(dims);
  bool flattened = false;
  if (mlirLogicalResultIsFailure(muonStepLocalShard(
          s.op(), param, static_cast<MuonTensorKind>(kind), rank, shape.data(),
          offsets.data(), &flattened, cshape.data(), coffsets.data())))
    return nb::none();
  if (flattened) {
    shape.resize(1);
    offsets.resize(1);
  }
  return nb::make_tuple(shape, offsets, flattened, cshape, coffsets);
}

nb::object partialTerm(const Step &s, intptr_t param, int64_t rank) {
  int64_t term = 0, terms = 0;
  double scale = 0;
  if (mlirLogicalResultIsFailure(
          muonStepPartialTerm(s.op(), param, rank, &term, &terms, &scale)))
    return nb::none();
  return nb::make_tuple(term, terms, scale);
}

void appendLine(MlirStringRef s, void *userData) {
  static_cast<std::vector<std::string> *>(userData)->emplace_back(s.data,
                                                                  s.length);
}

/// The symbol name of the function that holds the step, or None.
nb::object functionName(const Step &s) {
  MlirOperation parent = mlirOperationGetParentOperation(s.op());
  if (mlirOperationIsNull(parent))
    return nb::none();
  MlirAttribute name = mlirOperationGetAttributeByName(
      parent, mlirStringRefCreateFromCString("sym_name"));
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name))
    return nb::none();
  MlirStringRef text = mlirStringAttrGetValue(name);
  return nb::str(text.data, text.length);
}

nb::object plan(const Step &s, intptr_t param) {
  std::vector<std::string> lines;
  if (mlirLogicalResultIsFailure(
          muonStepPlan(s.op(), param, appendLine, &lines)))
    return nb::none();
  return nb::cast(lines);
}

/// The path of the shared object that defines `symbol` (the runtime).
std::string libraryOf(const void *symbol) {
  Dl_info info;
  if (dladdr(symbol, &info) && info.dli_fname)
    return info.dli_fname;
  return "";
}

/// Host arrays for target=cpu steps, CUDA device arrays (torch tensors
/// through DLPack) for target=cuda ones: the Python side checks which.
using F32Array = nb::ndarray<float, nb::c_contig>;

class Executable {
public:
  explicit Executable(MuonExecutable e) : exe(e) {}
  ~Executable() { muonExecutableDestroy(exe); }
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;

  std::vector<int64_t> roles() const {
    intptr_t size = 0;
    const int64_t *t = muonExecutableRoleTable(exe, &size);
    return std::vector<int64_t>(t, t + size);
  }

  /// Calls the entry on its arguments then the results' out-buffers:
  /// arrays (f32, C-contiguous; in host memory for a target=cpu step, in
  /// the GPU's for a target=cuda one) or Python floats (f64
  /// hyper-parameters),
  /// without copying the arrays and without the GIL, so that other Python
  /// threads run during the step.
  std::string invoke(std::vector<nb::object> items) {
    std::vector<F32Array> arrays(items.size());
    std::vector<std::vector<int64_t>> shapes(items.size());
    std::vector<MuonArgument> args(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      if (nb::isinstance<nb::float_>(items[i]) ||
          nb::isinstance<nb::int_>(items[i])) {
        args[i] = muonArgumentScalar(nb::cast<double>(items[i]));
        continue;
      }
      arrays[i] = nb::cast<F32Array>(items[i]);
      for (size_t d = 0; d < arrays[i].ndim(); ++d)
        shapes[i].push_back(static_cast<int64_t>(arrays[i].shape(d)));
      args[i] = muonArgumentTensor(arrays[i].data(),
                                   static_cast<intptr_t>(arrays[i].ndim()),
                                   shapes[i].data());
    }
    std::string error;
    {
      nb::gil_scoped_release release;
      muonExecutableInvoke(exe, static_cast<intptr_t>(args.size()),
                           args.data(), appendTo, &error);
    }
    return error;
  }

  MuonExecutable exe;
};

/// (executable, "") or (None, error).
std::tuple<std::shared_ptr<Executable>, std::string>
compile(const Module &lowered, const std::string &entry, int optLevel) {
  // Compiled code calls the runtime. This extension's dependencies are not
  // in the process's global scope, so name the runtime's file.
  std::string runtime =
      libraryOf(reinterpret_cast<const void *>(&muon_rt_world_rank));
  MlirStringRef lib = mlirStringRefCreate(runtime.c_str(), runtime.size());
  MuonExecutableOptions options = muonExecutableOptionsDefault();
  options.optLevel = optLevel;
  options.numSharedLibraries = runtime.empty() ? 0 : 1;
  options.sharedLibraries = &lib;
  std::string error;
  MuonExecutable e = muonExecutableCreate(
      lowered.module, mlirStringRefCreate(entry.c_str(), entry.size()),
      options, appendTo, &error);
  if (muonExecutableIsNull(e))
    return {nullptr, error};
  return {std::make_shared<Executable>(e), ""};
}

/// Makes the runtime's MPI library global: Open MPI loads its components
/// as plug-ins that expect libmpi's symbols in the global scope, which a
/// Python extension's dependencies are not (mpi4py does the same).
void promoteMpi() {
  for (const char *name : {"libmpi.so.40", "libmpi.so.12", "libmpi.so"})
    if (dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
      return;
}

} // namespace

NB_MODULE(_muon, m) {
  m.doc() = "Low-level bindings of muon's C API (use the `muon` package).";
  promoteMpi();
  // Objects that user code keeps in globals (the default context, a
  // compiled step) can outlive the interpreter's teardown of this module;
  // nanobind would report them as leaks on every exit.
  nb::set_leak_warnings(false);

  nb::class_<Context>(m, "Context")
      .def(nb::init<>())
      .def("take_diagnostics", &Context::takeDiagnostics);

  nb::class_<Module>(m, "Module")
      .def("__str__", [](const Module &mod) { return print(mod, false); })
      .def("print", &print, nb::arg("debug_info") = false)
      .def("clone", &cloneModule)
      .def("verify", &verify)
      .def("run_pipeline", &runPipeline)
      // Named, so that a wrong type names the option (TypeError).
      .def("lower", &lower, nb::arg("target"), nb::arg("assign_owners"),
           nb::arg("ns_stack_bytes"), nb::arg("batch_collectives"),
           nb::arg("max_prefetch_bytes"), nb::arg("place_deallocations"),
           nb::arg("cuda_chip"))
      .def("report", &report, nb::arg("json") = false,
           nb::arg("schedules") = false, nb::arg("ns_stack_bytes") = 0)
      .def("num_steps", &numSteps)
      .def_prop_ro("context", [](const Module &mod) { return mod.context; });
  m.def("parse", &parse);
  m.def("parse_file", &parseFile);
  m.def("lower_defaults", &lowerDefaults);

  nb::class_<Step>(m, "Step")
      .def(nb::init<std::shared_ptr<Module>, intptr_t>())
      .def("exists",
           [](const Step &s) { return !mlirOperationIsNull(s.op()); })
      .def("num_params",
           [](const Step &s) { return muonStepNumParams(s.op()); })
      .def("num_ranks", [](const Step &s) { return muonStepNumRanks(s.op()); })
      .def("param_name", &paramName)
      .def("param_shape", &paramShape)
      .def("local_shard", &localShard)
      .def("partial_term", &partialTerm)
      .def("param_blocks", &paramBlocks)
      .def("holds",
           [](const Step &s, intptr_t param, int64_t rank) {
             return muonStepRankHoldsParam(s.op(), param, rank);
           })
      .def("plan", &plan)
      .def("function_name", &functionName);

  nb::class_<Executable>(m, "Executable")
      .def("roles", &Executable::roles)
      .def("invoke", &Executable::invoke);
  m.def("compile", &compile);

  m.def("runtime_init", []() { muon_rt_init(nullptr, nullptr); });
  m.def("world_rank", []() { return muon_rt_world_rank(); });
  m.def("world_size", []() { return muon_rt_world_size(); });
  m.def("barrier", []() {
    nb::gil_scoped_release release;
    muon_rt_barrier();
  });
  m.def("finalize", []() { muon_rt_finalize(); });
  m.def("counters", []() {
    muon_rt_counters c;
    muon_rt_get_counters(&c);
    return nb::make_tuple(c.ns_calls, c.ns_matrices, c.ns_flops, c.collectives,
                          c.bytes_sent, c.heap_bytes_peak, c.wait_seconds,
                          c.wait_cpu_seconds);
  });
  m.def("reset_counters", []() { muon_rt_reset_counters(); });
}
