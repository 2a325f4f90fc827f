"""Shared fixtures: where the build tree's tools are, how to start ranks."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
BUILD = os.environ.get("MUON_BUILD_DIR", os.path.join(ROOT, "build"))
TESTS = os.path.dirname(os.path.abspath(__file__))
GEN_STEP = os.path.join(ROOT, "test", "Run", "Inputs", "gen_step.py")


def muon_opt() -> str:
    return os.path.join(BUILD, "bin", "muon-opt")


def python_path() -> str:
    """PYTHONPATH for the processes a test starts: the build tree's package
    (unless MUON_TEST_INSTALLED=1: the installed one, scripts/test-wheel.sh)
    and the tests' helpers."""
    dirs = [] if os.environ.get("MUON_TEST_INSTALLED") == "1" else [
        os.path.join(BUILD, "python")]
    return os.pathsep.join(dirs + [TESTS, os.environ.get("PYTHONPATH", "")])


def mpirun(np_: int, *args: str, timeout: int = 300):
    """Runs `python args...` on np_ ranks; returns the CompletedProcess."""
    launcher = shutil.which("mpirun")
    assert launcher, "mpirun is not on PATH (scripts/setup.sh installs it)"
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path()
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [launcher, "--oversubscribe", "-np", str(np_)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [sys.executable, *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def have_cuda() -> bool:
    """Whether PyTorch is installed and sees a CUDA device."""
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def gen_step(*args: str) -> str:
    return subprocess.run([sys.executable, GEN_STEP, *args], check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def build_dir():
    return BUILD
