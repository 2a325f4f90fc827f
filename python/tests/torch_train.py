"""Trains torch_model.Model and saves its final parameters (npz, by name).

  mpirun -np 4 python torch_train.py dist DPxTP STEPS OUT.npz  (or hsdpRxD)
        [--save-at K DIR]     checkpoint after step K (torch.distributed.checkpoint)
        [--resume K DIR]      load the step-K checkpoint, run steps K..STEPS-1
  python torch_train.py reference STEPS OUT.npz   single device, float64 Muon
  python torch_train.py torch STEPS OUT.npz [--fp32] [--teacher]
        single device, torch.optim.Muon (2-D parameters; bf16 inside unless
        --fp32; --teacher: one step at a time from the reference's states)
"""
import argparse

import numpy as np
import torch

import torch_model as tm

HYPER = dict(lr=0.02, weight_decay=0.01, momentum=0.95, nesterov=True)


def set_lr(lr):
    HYPER["lr"] = lr


def save(model, path, full=lambda p: p):
    np.savez(path, **{n: full(p).detach().numpy()
                      for n, p in model.named_parameters()})


def distributed(a):
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (get_state_dict,
                                                         set_state_dict)
    from muon.optim import Muon
    rank, world = tm.init_distributed()
    if a.mesh.startswith("hsdp"):  # hsdpRxD: HSDP, R replicas of D shards
        rep, d = (int(x) for x in a.mesh[4:].split("x"))
        model, mesh, coord, dp = tm.parallelise_hsdp(tm.Model(), rep, d)
    else:
        dp, tp = (int(x) for x in a.mesh.split("x"))
        assert dp * tp == world
        model, mesh, coord, dp = tm.parallelise(tm.Model(), (dp, tp))
    opt = Muon(model.parameters(), **HYPER)
    start = 0
    if a.resume:
        start, where = int(a.resume[0]), a.resume[1]
        msd, osd = get_state_dict(model, opt)
        state = {"model": msd, "optim": osd}
        dcp.load(state, checkpoint_id=where)
        set_state_dict(model, opt, model_state_dict=state["model"],
                       optim_state_dict=state["optim"])
    for step in range(start, a.steps):
        tm.loss_of(model, tm.local_batch(step, coord, dp)).backward()
        opt.step()
        opt.zero_grad()
        if a.save_at and step + 1 == int(a.save_at[0]):
            msd, osd = get_state_dict(model, opt)
            dcp.save({"model": msd, "optim": osd},
                     checkpoint_id=a.save_at[1])
    fulls = {n: p.full_tensor() for n, p in model.named_parameters()}
    if rank == 0:
        np.savez(a.out, **{n: t.detach().numpy() for n, t in fulls.items()})
    dist.barrier()
    dist.destroy_process_group()


def reference(a):
    from muon.reference import muon_step
    model = tm.Model()
    momenta = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for step in range(a.steps):
        model.zero_grad()
        tm.loss_of(model, tm.batch(step)).backward()
        with torch.no_grad():
            for n, p in model.named_parameters():
                newp, newm = muon_step(p.numpy(), p.grad.numpy(),
                                       momenta[n].numpy(), **HYPER)
                p.copy_(torch.from_numpy(newp))
                momenta[n].copy_(torch.from_numpy(newm))
    save(model, a.out)


def _fp32_newton_schulz(grad, ns_coefficients, ns_steps, eps):
    """torch.optim.Muon's iteration without its bf16 cast (and with
    muon.step's normalisation, ||X|| + eps): the same formulas in fp32."""
    a, b, c = ns_coefficients
    x = grad.to(torch.float32, copy=True)
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x = x / (x.norm() + eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x,
                        beta=a)
    return x.T if tall else x


def torch_muon(a):
    """torch.optim.Muon on the 2-D parameters; the expert stack, which it
    refuses, follows the reference. --fp32 swaps its bf16 Newton-Schulz for
    the same iteration in fp32. --teacher instead puts torch.optim.Muon at
    every step of the reference's trajectory and prints the largest
    difference of its one step from the reference's. The reference is the
    float64 Muon, or with --ours-bf16 muon.optim.Muon with ns_dtype bf16
    (the compiled step, one process)."""
    import torch.optim._muon as shipped
    from muon.reference import muon_step
    if a.fp32:
        shipped._zeropower_via_newtonschulz = _fp32_newton_schulz
    model = tm.Model()
    mats = [p for p in model.parameters() if p.ndim == 2]
    opt = torch.optim.Muon(mats, **HYPER)
    ref = tm.Model()
    ref_m = {n: torch.zeros_like(p) for n, p in ref.named_parameters()}
    ours = None
    if a.ours_bf16:
        from muon.optim import Muon
        ours = Muon(ref.parameters(), ns_dtype="bf16", **HYPER)
    worst = worst_rel = 0.0
    for step in range(a.steps):
        if a.teacher:
            with torch.no_grad():
                for (n, p), (_, q) in zip(model.named_parameters(),
                                          ref.named_parameters()):
                    p.copy_(q)
                    if p.ndim == 2:
                        m = (ours.state[q]["momentum_buffer"] if ours
                             else ref_m[n])
                        opt.state[p]["momentum_buffer"] = m.clone()
        for m in (model, ref):
            m.zero_grad()
            tm.loss_of(m, tm.batch(step)).backward()
        opt.step()
        with torch.no_grad():
            before = {n: q.detach().clone() for n, q in ref.named_parameters()}
            if ours is not None:
                ours.step()
            for (n, p), (_, q) in zip(model.named_parameters(),
                                      ref.named_parameters()):
                if ours is None:
                    newp, newm = muon_step(q.numpy(), q.grad.numpy(),
                                           ref_m[n].numpy(), **HYPER)
                    q.copy_(torch.from_numpy(newp))
                    ref_m[n].copy_(torch.from_numpy(newm))
                update = float((q - before[n]).norm())
                if p.ndim != 2:
                    p.copy_(q)  # not torch's to update
                elif a.teacher:
                    worst = max(worst, float((p - q).abs().max()))
                    worst_rel = max(worst_rel,
                                    float((p - q).norm()) / update)
    save(model, a.out)
    if a.teacher:
        print(f"one step from the reference's states: largest difference "
              f"{worst:.3e}, largest |difference| / |update| "
              f"{worst_rel:.3e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["dist", "reference", "torch"])
    ap.add_argument("args", nargs="+")
    ap.add_argument("--save-at", nargs=2)
    ap.add_argument("--resume", nargs=2)
    ap.add_argument("--fp32", action="store_true")
    ap.add_argument("--teacher", action="store_true")
    ap.add_argument("--ours-bf16", action="store_true")
    ap.add_argument("--lr", type=float, default=HYPER["lr"])
    a = ap.parse_args()
    set_lr(a.lr)
    if a.mode == "dist":
        a.mesh, a.steps, a.out = a.args[0], int(a.args[1]), a.args[2]
        distributed(a)
    else:
        a.steps, a.out = int(a.args[0]), a.args[1]
        (reference if a.mode == "reference" else torch_muon)(a)


if __name__ == "__main__":
    main()
