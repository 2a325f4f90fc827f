"""The distributed step from Python under mpirun: every layout of a 2x2
mesh on 4 ranks (one process each) equals the single-device float64
reference within 1e-5, replicas agree bitwise, and every matrix is
orthogonalised exactly once per step."""
import math
import os

import numpy as np
import pytest

import muon
from muon.reference import muon_step
from conftest import TESTS, gen_step, mpirun
from data import gradient_term, initial

STEPS = 2


@pytest.mark.parametrize("mesh,ranks", [("dp=2,tp=2", 4), ("dp=3", 3)])
def test_every_layout_matches_the_reference(tmp_path, mesh, ranks):
    path = tmp_path / "step.mlir"
    path.write_text(gen_step("--mesh", mesh))
    run = mpirun(ranks, os.path.join(TESTS, "mpi_step.py"), str(path),
                 str(STEPS), str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    step = muon.parse_file(path).step()
    local = [np.load(tmp_path / f"rank{r}.npz") for r in range(ranks)]
    # The step's hyper-parameters (gen_step's defaults).
    hyper = dict(lr=0.02, weight_decay=0.01)
    matrices = 0
    for i, name in enumerate(step.param_names):
        shape = step.param_shape(i)
        blocks = step.param_blocks(i)
        matrices += math.prod(shape[:-2]) * (len(blocks[1]) if blocks else 1)
        refP = initial(i, shape, 0).astype(np.float64)
        refM = initial(i, shape, 1).astype(np.float64)
        _, terms, scale = step.partial_term(i, 0)
        for t in range(STEPS):
            g = sum(gradient_term(i, shape, t, k).astype(np.float64)
                    for k in range(terms)) * scale
            refP, refM = muon_step(refP, g, refM, **hyper,
                                   split=step.param_blocks(i))
        for kind, ref, key in (("param", refP, "p"), ("momentum", refM, "m")):
            full = np.full(shape, np.nan, np.float32)
            holders = [r for r in range(ranks) if step.holds(i, r)]
            for r in holders:
                step.local_shard(i, kind, r).insert(full, local[r][f"{key}{i}"])
            for r in holders:  # replicas agree bitwise
                s = step.local_shard(i, kind, r)
                np.testing.assert_array_equal(s.extract(full),
                                              local[r][f"{key}{i}"],
                                              err_msg=f"{name} rank {r}")
            np.testing.assert_allclose(full, ref, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} {kind}")
    done = sum(int(local[r]["ns_matrices"]) for r in range(ranks))
    assert done == STEPS * matrices
    # Every rank waited for collectives; a wait's polling is part of its
    # wall time.
    for r in range(ranks):
        wait, cpu = (float(local[r][k]) for k in ("wait_seconds",
                                                  "wait_cpu_seconds"))
        assert 0 < wait and 0 <= cpu <= wait + 1e-3, (r, wait, cpu)


def test_a_wrong_shard_names_rank_and_tensor(tmp_path):
    path = tmp_path / "step.mlir"
    path.write_text(gen_step("--mesh", "dp=2", "--only", "fsdp.tall"))
    script = tmp_path / "bad.py"
    script.write_text(
        # Each rank writes its own file: two ranks printing to the one
        # stdout mpirun forwards can interleave within a line.
        "import numpy as np, muon, sys, pathlib\n"
        "s = muon.compile(muon.parse_file(sys.argv[1]))\n"
        "z = np.zeros((31, 24), np.float32)\n"
        "try:\n"
        "    s([z], [z], [z])\n"
        "except muon.MuonError as e:\n"
        "    pathlib.Path(sys.argv[2], f'refused.{s.rank}').write_text(str(e))\n")
    run = mpirun(2, str(script), str(path), str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "refused.0").read_text() == (
        "param of 'fsdp.tall' on rank 0: local shape (31, 24), "
        "the layout gives this rank (32, 24)")
    assert "on rank 1" in (tmp_path / "refused.1").read_text()
