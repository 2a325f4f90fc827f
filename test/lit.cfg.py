import sys
# -*- Python -*-
# lit configuration for the muon regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MUON"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.muon_obj_root, "test")
# Unit/ has its own config (GoogleTest); Consumer/project is a CMake project.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "project"]

config.substitutions.append(('%python', sys.executable))
config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%muon_src_root", config.muon_src_root))
config.substitutions.append(("%muon_obj_root", config.muon_obj_root))
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%mlir_dir", config.mlir_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.muon_tools_dir, append_path=True)

tools = [
    ToolSubst("muon-opt", unresolved="fatal"),
    ToolSubst("muon-lsp-server", unresolved="fatal"),
    ToolSubst("muon-run", unresolved="fatal"),
    ToolSubst("muon-capi-test", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.muon_tools_dir])

# Sanitizer builds: an outside project cannot link instrumented archives
# without the sanitizer runtime, and leaks inside MPI are not ours.
if config.muon_sanitize:
    config.available_features.add("sanitizer")
    # allow_user_poisoning=0: LLVM's allocator templates, instrumented in our
    # code, poison slabs that the uninstrumented libMLIR.so writes to.
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:allow_user_poisoning=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1"
if config.muon_build_fuzzer:
    config.available_features.add("fuzzer")

# mpirun for tests that launch a job by hand (muon-run launches its own).
import shutil
mpirun = shutil.which("mpirun")
if mpirun:
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    config.substitutions.append(
        ("%mpirun", " ".join([mpirun] + root + ["--oversubscribe", "--bind-to", "none",
                                                "-x", "OPENBLAS_NUM_THREADS=1"])))
    config.available_features.add("mpi")
# muon-run's cache of compiled steps stays in the build tree, not in the
# home directory of whoever runs the tests.
config.environment["MUON_RUN_CACHE"] = os.path.join(config.test_exec_root,
                                                    "muon-run-cache")
# Ranks share two cores: keep BLAS single-threaded everywhere.
config.environment["OPENBLAS_NUM_THREADS"] = "1"

# GPU tests: `cuda` when the CUDA parts were built, `cuda-device` when this
# machine also has an NVIDIA GPU. Without one, tests that need it are
# reported UNSUPPORTED (skipped); scripts/gpu-check.sh runs them on a GPU.
if config.muon_have_cuda:
    config.available_features.add("cuda")
    # `nccl`: the NCCL transport (libmuon_runtime_nccl) was built too.
    if config.muon_have_nccl:
        config.available_features.add("nccl")
    import subprocess
    try:
        gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        gpus = ""
    if "GPU" in gpus:
        config.available_features.add("cuda-device")
        # Four GPUs or more: NCCL steps on several ranks (one GPU each).
        if sum(line.startswith("GPU ") for line in gpus.splitlines()) >= 4:
            config.available_features.add("cuda-devices-4")
    else:
        lit_config.note("no NVIDIA GPU here: tests that need one "
                        "(REQUIRES: cuda-device) are skipped")
