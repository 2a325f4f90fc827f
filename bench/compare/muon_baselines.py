#!/usr/bin/env python3
"""The main example's step beside PyTorch Muons, same shapes, same machine.

  python3 bench/compare/muon_baselines.py [--steps 5] [--device cpu|cuda]
                                           [--muon-run build/bin/muon-run]

Rows (seconds per optimizer step after one warm-up step: the median over
--steps for PyTorch, the mean over --steps for muon-run; ratios against ours
on 4 ranks measured in the same run):
  ours             muon-run on examples/llama-tp-fsdp.mlir, 4 ranks on the
                   [dp = 2, tp = 2] mesh (fp32 Newton-Schulz; --device cuda
                   runs it with --target cuda, the 4 ranks sharing the GPU)
  ours (1 rank)    the same matrices on a 1x1 mesh: one process, as
                   torch.optim.Muon runs (--device cuda: also with
                   MUON_RT_CUDA_GRAPHS=0, each Newton-Schulz as plain
                   launches instead of a replayed graph)
  torch.optim.Muon 1 process, as shipped (bf16 Newton-Schulz, hard-coded)
  dtensor-muon     PyPI `dtensor-muon` on 4 gloo processes, the same 2x2
                   mesh and placements, its default orthogonalisation
                   ("polar_express", 5 steps, bf16) with use_triton=False
                   (its optimizer always asks for its Triton kernels,
                   which need a GPU); every rank orthogonalises every full
                   matrix. CPU only; skipped when not installed.

The shapes are the example's: 12 layers of q, k, v, o (256x256), gate, up
(688x256) and down (256x688), 84 matrices. Every process gets one thread
per core it may use: torch alone uses every core; 4 ranks share them.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
EXAMPLE = os.path.join(ROOT, "examples", "llama-tp-fsdp.mlir")
LAYERS, DIM, FFN = 12, 256, 688
# (name, out, in, placements on [dp, tp]): column-parallel weights are
# split on dim 0 by both axes, row-parallel ones on dim 0 (dp) and 1 (tp).
LAYER = [("attn.q", DIM, DIM, "col"), ("attn.k", DIM, DIM, "col"),
         ("attn.v", DIM, DIM, "col"), ("attn.o", DIM, DIM, "row"),
         ("mlp.gate", FFN, DIM, "col"), ("mlp.up", FFN, DIM, "col"),
         ("mlp.down", DIM, FFN, "row")]
SHAPES = [(f"layers.{l}.{n}", o, i, kind) for l in range(LAYERS)
          for n, o, i, kind in LAYER]


def ours(muon_run, steps, device, ranks=4, env=None):
    """Seconds per step after the first (which also pays one-time set-up:
    GPU contexts, cuBLAS, communicators), and whether the check passed.
    ranks=1: the example on a 1x1 mesh (the same matrices, one process)."""
    step = EXAMPLE
    tmp = None
    if ranks == 1:
        import tempfile
        with open(EXAMPLE) as f:
            text = f.read().replace("dist.mesh @mesh [dp = 2, tp = 2]",
                                    "dist.mesh @mesh [dp = 1, tp = 1]")
        tmp = tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False)
        tmp.write(text)
        tmp.close()
        step = tmp.name
    cmd = [muon_run, step, "--steps", str(steps + 1)]
    if device == "cuda":
        cmd += ["--target", "cuda"]
    out = subprocess.run(cmd, capture_output=True, text=True,
                         env=dict(os.environ, **(env or {})))
    if tmp:
        os.unlink(tmp.name)
    text = out.stdout + out.stderr
    m = re.search(r"([0-9.]+) s/step after the first", text)
    if out.returncode != 0 or not m:
        sys.exit("muon-run failed:\n" + text[-2000:])
    return float(m.group(1)), "PASS" in text


def timed_steps(opt, params, steps, sync):
    for p in params:
        p.grad = p.detach().clone().normal_()
    opt.step()  # warm-up (state allocation)
    times = []
    for _ in range(steps):
        for p in params:
            p.grad.normal_()
        sync()
        t = time.perf_counter()
        opt.step()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def torch_muon(steps, device):
    import torch
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(o, i, device=device))
              for _, o, i, _ in SHAPES]
    opt = torch.optim.Muon(params, lr=0.02, weight_decay=0.01)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    return timed_steps(opt, params, steps, sync)


def dtensor_worker(rank, steps, port, out):
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    import functools
    import dtensor_muon
    import dtensor_muon.optim.optim as dm_optim
    from dtensor_muon.orthogonalize import zeropower
    # Its optimizer always asks for its Triton kernels (GPU only): on the
    # CPU, the same orthogonalisation without them.
    dm_optim.zeropower = functools.partial(zeropower, use_triton=False)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=4)
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    params = []
    for _, o, i, kind in SHAPES:
        place = [Shard(0), Shard(0) if kind == "col" else Shard(1)]
        params.append(torch.nn.Parameter(
            distribute_tensor(torch.randn(o, i), mesh, place)))
    # Its default strategy (its Newton-Schulz variant needs Triton on a GPU).
    opt = dtensor_muon.Muon(params, lr=0.02, wd=0.01)
    for p in params:
        p.grad = distribute_tensor(torch.randn(p.shape), mesh, p.placements)
    opt.step()
    times = []
    for _ in range(steps):
        dist.barrier()
        t = time.perf_counter()
        opt.step()
        dist.barrier()
        times.append(time.perf_counter() - t)
    if rank == 0:
        out.put(statistics.median(times))
    dist.destroy_process_group()


def dtensor_muon(steps):
    try:
        import dtensor_muon  # noqa: F401
        import torch.multiprocessing as mp
    except ImportError:
        return None
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = 29500 + os.getpid() % 1000
    procs = [ctx.Process(target=dtensor_worker, args=(r, steps, port, out))
             for r in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        sys.exit("dtensor-muon workers failed")
    return out.get()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--muon-run",
                    default=os.path.join(ROOT, "build", "bin", "muon-run"))
    args = ap.parse_args()
    cores = os.cpu_count()
    ours_s, passed = ours(args.muon_run, args.steps, args.device)
    one_s, one_passed = ours(args.muon_run, args.steps, args.device, ranks=1)
    passed &= one_passed
    gpu = ", 1 GPU" if args.device == "cuda" else ""
    rows = [(f"ours (4 ranks{gpu})", ours_s), (f"ours (1 rank{gpu})", one_s)]
    if args.device == "cuda":
        # The GPU Newton-Schulz of small matrices without graph replay.
        plain_s, plain_passed = ours(args.muon_run, args.steps, args.device,
                                     ranks=1,
                                     env={"MUON_RT_CUDA_GRAPHS": "0"})
        passed &= plain_passed
        rows.append(("ours (1 rank, 1 GPU, no graphs)", plain_s))
    rows.append(("torch.optim.Muon (1 process)",
                 torch_muon(args.steps, args.device)))
    if args.device == "cpu":
        t = dtensor_muon(args.steps)
        rows.append(("dtensor-muon (4 gloo processes)",
                     t if t is not None else float("nan")))
    print(f"main example, {len(SHAPES)} matrices, {args.device}, {cores} "
          f"cores; ours {'PASS' if passed else 'FAIL'} against the "
          f"reference")
    print(f"{'':34} {'s/step':>8} {'vs ours':>8}")
    for name, s in rows:
        print(f"{name:34} {s:8.4f} {s / ours_s:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
