"""One rank of the distributed check (run under mpirun by test_mpi.py):
compiles the step in MODULE, feeds it this rank's shards of deterministic
tensors for STEPS steps and saves its local results to OUT/rank<r>.npz.

    mpirun -np N python mpi_step.py MODULE STEPS OUT
"""
import os
import sys

import numpy as np

import muon
from data import gradient_term, initial


def main():
    path, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    step = muon.compile(muon.parse_file(path))
    r = step.rank
    n = step.num_params
    shapes = [step.step.param_shape(i) for i in range(n)]
    P = [step.shard(initial(i, shapes[i], 0), i, "param") for i in range(n)]
    M = [step.shard(initial(i, shapes[i], 1), i, "momentum") for i in range(n)]
    muon.reset_counters()
    for t in range(steps):
        G = []
        for i in range(n):
            term, _, _ = step.step.partial_term(i, r)
            G.append(step.shard(gradient_term(i, shapes[i], t, term), i,
                                "grad"))
        P, M = step(P, G, M)
    c = muon.counters()
    np.savez(os.path.join(out, f"rank{r}.npz"),
             ns_matrices=c["ns_matrices"], wait_seconds=c["wait_seconds"],
             wait_cpu_seconds=c["wait_cpu_seconds"],
             **{f"p{i}": P[i] for i in range(n)},
             **{f"m{i}": M[i] for i in range(n)})


if __name__ == "__main__":
    main()
