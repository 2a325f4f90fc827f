//===- Execution.cpp - C API: compiled steps ------------------------------===//

#include "muon-c/Execution.h"

#include "muon/Dialect/Muon/IR/MuonOps.h"
#include "muon/Execution/CompiledEntry.h"
#include "muon/Layout/Layout.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using muon::exec::BufferView;
using muon::exec::CompiledEntry;

namespace {
struct Executable {
  std::unique_ptr<CompiledEntry> entry;
  const int64_t *roles = nullptr;
  intptr_t roleSize = 0;
  int64_t numBuffers = 0;
  /// Per argument and result: whether it is an f64 scalar (its first role
  /// is lr or weight_decay), read off the table once.
  std::vector<bool> scalar;
  /// Per result: the argument it replaces (the one with its role: the
  /// parameter or momentum it is the new value of), or -1.
  std::vector<int64_t> replaces;
  /// Per argument and result: its number of dims (0 for a scalar), from
  /// __muon_dims_<entry>; empty for a module lowered before that table.
  std::vector<int64_t> dims;
};

Executable *unwrapExe(MuonExecutable e) {
  return static_cast<Executable *>(e.ptr);
}

void report(MlirStringCallback callback, void *userData,
            const std::string &message) {
  if (callback)
    callback(wrap(llvm::StringRef(message)), userData);
}

/// The length of a role table (muon_runtime.h) whose header is sane, or -1.
intptr_t roleTableSize(const int64_t *t) {
  if (t[0] != MUON_RT_ROLES_VERSION || t[1] < 0 || t[2] < 0)
    return -1;
  intptr_t at = 3;
  for (int64_t i = 0; i < t[1] + t[2]; ++i) {
    if (t[at] < 0)
      return -1;
    at += 1 + 3 * t[at];
  }
  return at;
}
} // namespace

MuonExecutableOptions muonExecutableOptionsDefault(void) {
  return {2, 0, nullptr};
}

MuonExecutable muonExecutableCreate(MlirModule lowered, MlirStringRef entry,
                                    MuonExecutableOptions options,
                                    MlirStringCallback errorCallback,
                                    void *userData) {
  if (mlirModuleIsNull(lowered)) {
    report(errorCallback, userData, "the module is null");
    return {nullptr};
  }
  std::string name = unwrap(entry).str();
  if (options.optLevel < 0 || options.optLevel > 3) {
    report(errorCallback, userData,
           "optimisation level " + std::to_string(options.optLevel) +
               " is not in 0..3");
    return {nullptr};
  }
  if (options.numSharedLibraries < 0 ||
      (options.numSharedLibraries > 0 && !options.sharedLibraries)) {
    report(
        errorCallback, userData,
        "numSharedLibraries = " + std::to_string(options.numSharedLibraries) +
            (options.numSharedLibraries < 0 ? " is negative"
                                            : " but sharedLibraries is NULL"));
    return {nullptr};
  }
  std::vector<std::string> libs;
  for (intptr_t i = 0; i < options.numSharedLibraries; ++i)
    libs.push_back(unwrap(options.sharedLibraries[i]).str());
  // The translation to LLVM IR, which the host's registry need not hold
  // (muonRegisterAllDialects registers what parsing and lowering need).
  ModuleOp module = unwrap(lowered);
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  std::string error;
  std::unique_ptr<CompiledEntry> compiled =
      CompiledEntry::create(module, name, options.optLevel, error, "", libs);
  if (!compiled) {
    report(errorCallback, userData, error);
    return {nullptr};
  }
  auto exe = std::make_unique<Executable>();
  exe->roles = static_cast<const int64_t *>(
      compiled->lookupSymbol("__muon_roles_" + name));
  if (!exe->roles) {
    report(errorCallback, userData,
           "entry @" + name + " has no role table __muon_roles_" + name +
               " (was the module lowered by muon-to-llvm, with @" + name +
               " public?)");
    return {nullptr};
  }
  exe->roleSize = roleTableSize(exe->roles);
  if (exe->roleSize < 0) {
    report(errorCallback, userData,
           "the role table of @" + name + " has an unknown format (version " +
               std::to_string(exe->roles[0]) + ", this library reads " +
               std::to_string(MUON_RT_ROLES_VERSION) + ")");
    return {nullptr};
  }
  exe->numBuffers = exe->roles[1] + exe->roles[2];
  // The one role of each buffer that has exactly one.
  std::vector<std::optional<std::array<int64_t, 3>>> role;
  for (intptr_t at = 3, i = 0; i < exe->numBuffers; ++i) {
    int64_t k = exe->roles[at];
    exe->scalar.push_back(k > 0 &&
                          (exe->roles[at + 1] == MUON_RT_ROLE_LR ||
                           exe->roles[at + 1] == MUON_RT_ROLE_WEIGHT_DECAY));
    role.push_back(k == 1 ? std::optional<std::array<int64_t, 3>>(
                                {exe->roles[at + 1], exe->roles[at + 2],
                                 exe->roles[at + 3]})
                          : std::nullopt);
    at += 1 + 3 * k;
  }
  if (auto *dims = static_cast<const int64_t *>(
          compiled->lookupSymbol("__muon_dims_" + name));
      dims && dims[0] == exe->numBuffers)
    exe->dims.assign(dims + 1, dims + 1 + exe->numBuffers);
  int64_t numArgs = exe->roles[1];
  for (int64_t r = numArgs; r < exe->numBuffers; ++r) {
    int64_t replaced = -1;
    for (int64_t a = 0; a < numArgs && role[r] && !exe->scalar[r]; ++a)
      if (role[a] == role[r])
        replaced = a;
    exe->replaces.push_back(replaced);
  }
  exe->entry = std::move(compiled);
  return {exe.release()};
}

void muonExecutableDestroy(MuonExecutable e) { delete unwrapExe(e); }

const int64_t *muonExecutableRoleTable(MuonExecutable e, intptr_t *size) {
  // A null executable (a failed muonExecutableCreate) has no table.
  Executable *exe = unwrapExe(e);
  if (size)
    *size = exe ? exe->roleSize : 0;
  return exe ? exe->roles : nullptr;
}

/// The first overlap between an out-buffer (index >= numArgs) and any
/// other buffer, as a message, or none. Arguments may overlap each other
/// (they are only read).
static std::optional<std::string>
overlappingResult(const std::vector<BufferView> &buffers, int64_t numArgs) {
  struct Span {
    const char *begin, *end;
    int64_t index;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].scalar)
      continue;
    int64_t n = 1;
    for (int64_t d : buffers[i].shape)
      n *= d;
    const char *begin = reinterpret_cast<const char *>(buffers[i].data);
    if (n > 0)
      spans.push_back(
          {begin, begin + n * sizeof(float), static_cast<int64_t>(i)});
  }
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.index < b.index;
  });
  // The furthest-reaching span so far, and the furthest-reaching result.
  const Span *any = nullptr, *result = nullptr;
  for (const Span &s : spans) {
    bool isResult = s.index >= numArgs;
    const Span *other = isResult ? any : result;
    if (other && other->end > s.begin) {
      int64_t a = std::min(s.index, other->index);
      int64_t b = std::max(s.index, other->index);
      // Name a result first; two results in index order.
      int64_t r = a >= numArgs ? a : b, o = a >= numArgs ? b : a;
      return "result buffer #" + std::to_string(r - numArgs) + " overlaps " +
             (o < numArgs ? "argument #" + std::to_string(o)
                          : "result buffer #" + std::to_string(o - numArgs)) +
             ": out-buffers must be memory of their own (the step writes "
             "them while it reads its arguments)";
    }
    if (!any || s.end > any->end)
      any = &s;
    if (isResult && (!result || s.end > result->end))
      result = &s;
  }
  return std::nullopt;
}

MlirLogicalResult muonExecutableInvoke(MuonExecutable e, intptr_t numArguments,
                                       const MuonArgument *arguments,
                                       MlirStringCallback errorCallback,
                                       void *userData) {
  Executable *exe = unwrapExe(e);
  if (!exe) {
    report(errorCallback, userData,
           "the executable is null (muonExecutableCreate failed)");
    return mlirLogicalResultFailure();
  }
  if (numArguments != exe->numBuffers) {
    report(errorCallback, userData,
           "the entry takes " + std::to_string(exe->roles[1]) +
               " arguments and " + std::to_string(exe->roles[2]) +
               " results, " + std::to_string(exe->numBuffers) +
               " buffers in all; got " + std::to_string(numArguments));
    return mlirLogicalResultFailure();
  }
  if (numArguments > 0 && !arguments) {
    report(errorCallback, userData,
           "arguments is NULL for " + std::to_string(numArguments) +
               " buffers");
    return mlirLogicalResultFailure();
  }
  int64_t numArgs = exe->roles[1];
  std::vector<BufferView> buffers(numArguments);
  for (intptr_t i = 0; i < numArguments; ++i) {
    bool scalarRole = exe->scalar[i];
    const MuonArgument &a = arguments[i];
    auto name = [&] {
      return i < numArgs ? "argument #" + std::to_string(i)
                         : "result buffer #" + std::to_string(i - numArgs);
    };
    if (a.isScalar != scalarRole) {
      report(errorCallback, userData,
             "argument #" + std::to_string(i) + " is " +
                 (scalarRole ? "an f64 hyper-parameter" : "a tensor") +
                 " but was given " + (a.isScalar ? "a scalar" : "a tensor"));
      return mlirLogicalResultFailure();
    }
    // The same rule as muon-run's --lr and the muon.step verifier: a NaN
    // or huge rate would turn every parameter into NaN or inf.
    if (a.isScalar &&
        !(a.scalar >= 0 && a.scalar <= muon::optim::kMaxLrOrWeightDecay)) {
      report(errorCallback, userData,
             "argument #" + std::to_string(i) +
                 " (an f64 hyper-parameter) must be a number in [0, 2^60], "
                 "got " +
                 std::to_string(a.scalar));
      return mlirLogicalResultFailure();
    }
    if (!a.isScalar && a.rank < 0) {
      report(errorCallback, userData,
             name() + " has " + std::to_string(a.rank) + " dims");
      return mlirLogicalResultFailure();
    }
    // The compiled code reads a descriptor with the dims it was compiled
    // for: one of another rank would be read wrongly.
    if (!a.isScalar && !exe->dims.empty() && a.rank != exe->dims[i]) {
      report(errorCallback, userData,
             name() + " has " + std::to_string(a.rank) +
                 " dims; the entry takes a tensor of " +
                 std::to_string(exe->dims[i]));
      return mlirLogicalResultFailure();
    }
    if (!a.isScalar && a.rank > 0 && !a.shape) {
      report(errorCallback, userData, name() + " has a NULL shape");
      return mlirLogicalResultFailure();
    }
    if (a.isScalar)
      buffers[i].scalar = a.scalar;
    else
      buffers[i] = {a.data, std::vector<int64_t>(a.shape, a.shape + a.rank),
                    std::nullopt};
    // Memory is read or written only where there are elements: an empty
    // tensor may come without any.
    if (!a.isScalar && !a.data &&
        llvm::all_of(buffers[i].shape, [](int64_t d) { return d != 0; })) {
      report(errorCallback, userData,
             name() + " has a NULL data pointer for " +
                 (buffers[i].shape.empty()
                      ? std::string("a scalar")
                      : muon::layout::shapeString(buffers[i].shape)) +
                 " elements");
      return mlirLogicalResultFailure();
    }
  }
  // The compiled code checks each argument's local shape on entry, not the
  // out-buffers it writes: each must have the shape of the argument it
  // replaces (a smaller one would be written past its end).
  for (int64_t r = numArgs; r < numArguments; ++r) {
    int64_t a = exe->replaces[r - numArgs];
    if (a < 0 || buffers[r].shape == buffers[a].shape)
      continue;
    auto shapeStr = [](const std::vector<int64_t> &shape) {
      return shape.empty() ? std::string("a scalar shape")
                           : muon::layout::shapeString(shape);
    };
    report(errorCallback, userData,
           "result buffer #" + std::to_string(r - numArgs) + " has shape " +
               shapeStr(buffers[r].shape) + ", but argument #" +
               std::to_string(a) + ", whose new value it receives, has " +
               shapeStr(buffers[a].shape) +
               ": an out-buffer has the local shape of its argument");
    return mlirLogicalResultFailure();
  }
  // The step writes results into the out-buffers while it still reads
  // its arguments: a result sharing memory with any other buffer would
  // read back what it wrote. Checked on every call, so by one sweep over
  // the buffers sorted by address rather than by comparing every pair.
  if (std::optional<std::string> overlap =
          overlappingResult(buffers, numArgs)) {
    report(errorCallback, userData, *overlap);
    return mlirLogicalResultFailure();
  }
  exe->entry->invoke(buffers);
  return mlirLogicalResultSuccess();
}
