//===- Execution.cpp - C API: compiled steps ------------------------------===//

#include "muon-c/Execution.h"

#include "muon/Execution/CompiledEntry.h"
#include "muon/Runtime/muon_runtime.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include <memory>
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
  std::string name = unwrap(entry).str();
  if (options.optLevel < 0 || options.optLevel > 3) {
    report(errorCallback, userData,
           "optimisation level " + std::to_string(options.optLevel) +
               " is not in 0..3");
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
  std::unique_ptr<CompiledEntry> compiled = CompiledEntry::create(
      module, name, options.optLevel, error, "", libs);
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
  for (intptr_t at = 3, i = 0; i < exe->numBuffers; ++i) {
    int64_t k = exe->roles[at];
    exe->scalar.push_back(k > 0 &&
                          (exe->roles[at + 1] == MUON_RT_ROLE_LR ||
                           exe->roles[at + 1] == MUON_RT_ROLE_WEIGHT_DECAY));
    at += 1 + 3 * k;
  }
  exe->entry = std::move(compiled);
  return {exe.release()};
}

void muonExecutableDestroy(MuonExecutable e) { delete unwrapExe(e); }

const int64_t *muonExecutableRoleTable(MuonExecutable e, intptr_t *size) {
  *size = unwrapExe(e)->roleSize;
  return unwrapExe(e)->roles;
}

MlirLogicalResult muonExecutableInvoke(MuonExecutable e,
                                       intptr_t numArguments,
                                       const MuonArgument *arguments,
                                       MlirStringCallback errorCallback,
                                       void *userData) {
  Executable *exe = unwrapExe(e);
  if (numArguments != exe->numBuffers) {
    report(errorCallback, userData,
           "the entry takes " + std::to_string(exe->roles[1]) +
               " arguments and " + std::to_string(exe->roles[2]) +
               " results, " + std::to_string(exe->numBuffers) +
               " buffers in all; got " + std::to_string(numArguments));
    return mlirLogicalResultFailure();
  }
  std::vector<BufferView> buffers(numArguments);
  for (intptr_t i = 0; i < numArguments; ++i) {
    bool scalarRole = exe->scalar[i];
    const MuonArgument &a = arguments[i];
    if (a.isScalar != scalarRole) {
      report(errorCallback, userData,
             "argument #" + std::to_string(i) + " is " +
                 (scalarRole ? "an f64 hyper-parameter" : "a tensor") +
                 " but was given " + (a.isScalar ? "a scalar" : "a tensor"));
      return mlirLogicalResultFailure();
    }
    if (a.isScalar)
      buffers[i].scalar = a.scalar;
    else
      buffers[i] = {a.data, std::vector<int64_t>(a.shape, a.shape + a.rank),
                    std::nullopt};
  }
  // The step writes results into the out-buffers while it still reads
  // its arguments: a result sharing memory with any other buffer would
  // read back what it wrote.
  int64_t numArgs = exe->roles[1];
  auto extent = [&](intptr_t i) {
    int64_t n = 1;
    for (int64_t d : buffers[i].shape)
      n *= d;
    const char *begin = reinterpret_cast<const char *>(buffers[i].data);
    return std::make_pair(begin, begin + n * sizeof(float));
  };
  for (intptr_t r = numArgs; r < numArguments; ++r) {
    auto [rb, re] = extent(r);
    for (intptr_t i = 0; i < numArguments && rb != re; ++i) {
      if (i == r || buffers[i].scalar)
        continue;
      auto [ib, ie] = extent(i);
      if (ib < re && rb < ie) {
        report(errorCallback, userData,
               "result buffer #" + std::to_string(r - numArgs) +
                   " overlaps " +
                   (i < numArgs ? "argument" : "result buffer") + " #" +
                   std::to_string(i < numArgs ? i : i - numArgs) +
                   ": out-buffers must be memory of their own (the step "
                   "writes them while it reads its arguments)");
        return mlirLogicalResultFailure();
      }
    }
  }
  exe->entry->invoke(buffers);
  return mlirLogicalResultSuccess();
}
