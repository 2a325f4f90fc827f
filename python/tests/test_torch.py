"""The PyTorch frontend (muon.optim.Muon): a DTensor model with FSDP2 over
TP on a 2x2 mesh, an expert stack and uneven shapes, trained for 10 steps
on 4 processes, equals the single-device float64 reference within 1e-5; a
checkpoint taken at step 5 and resumed on a dp=4 mesh reaches the same
step-10 parameters; torch.optim.Muon computes the same step up to its bf16
Newton-Schulz. torch is a test dependency (scripts/setup.sh installs it);
without it these tests fail, they do not skip."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import muon
from muon._ir import MuonError
from muon.optim import Muon
from muon.reference import lr_scale, muon_step
from conftest import TESTS, have_cuda, mpirun, python_path

STEPS = 10
_port = [29600 + os.getpid() % 500]


def train(tmp, *args, ranks=4):
    _port[0] += 1
    os.environ["MASTER_PORT"] = str(_port[0])
    run = mpirun(ranks, os.path.join(TESTS, "torch_train.py"), *args)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    return run


def single(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path()
    run = subprocess.run([sys.executable,
                          os.path.join(TESTS, "torch_train.py"), *args],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def largest(a, b, only2d=False):
    a, b = np.load(a), np.load(b)
    assert sorted(a.files) == sorted(b.files)
    return max(float(np.abs(a[n] - b[n]).max()) for n in a.files
               if not only2d or a[n].ndim == 2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("torch")
    single("reference", str(STEPS), str(tmp / "reference.npz"))
    train(tmp, "dist", "2x2", str(STEPS), str(tmp / "dist.npz"))
    return tmp


def test_fsdp2_over_tp_with_experts_matches_the_reference(runs):
    # Parameters move by ~0.3 over the 10 steps; the distributed fp32 step
    # stays within 1e-5 of the float64 single-device Muon.
    assert largest(runs / "dist.npz", runs / "reference.npz") < 1e-5


def test_hsdp_matches_the_reference(runs):
    # FSDP2's HSDP on a 2x2 (rep x dp) mesh: every parameter
    # [Replicate(), Shard(0)], expert stack included.
    train(runs, "dist", "hsdp2x2", str(STEPS), str(runs / "hsdp.npz"))
    assert largest(runs / "hsdp.npz", runs / "reference.npz") < 1e-5


def test_checkpoint_resumes_on_another_mesh(runs):
    ckpt = runs / "ckpt"
    train(runs, "dist", "2x2", "5", str(runs / "d5.npz"), "--save-at", "5",
          str(ckpt))
    train(runs, "dist", "4x1", str(STEPS), str(runs / "resumed.npz"),
          "--resume", "5", str(ckpt))
    assert largest(runs / "resumed.npz", runs / "dist.npz") < 1e-5


def test_torch_muon_is_the_same_step_up_to_bf16(runs):
    # Without its bf16 cast, torch.optim.Muon follows the same trajectory.
    single("torch", str(STEPS), str(runs / "t32.npz"), "--fp32")
    assert largest(runs / "t32.npz", runs / "reference.npz", True) < 1e-5
    # As shipped (bf16 Newton-Schulz), one step from the same state at
    # torch's default lr differs by less than 1e-3.
    out = single("torch", str(STEPS), str(runs / "t.npz"), "--teacher",
                 "--lr", "1e-3")
    worst = float(out.split("largest difference ")[1].split(",")[0])
    assert worst < 1e-3


def test_process_group_form_with_plain_tensors(tmp_path):
    # FSDP x TP by process groups (create_auto_config), column- and
    # row-parallel and uneven shapes, against the float64 reference.
    _port[0] += 1
    os.environ["MASTER_PORT"] = str(_port[0])
    run = mpirun(4, os.path.join(TESTS, "torch_groups.py"))
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    error = float(run.stdout.split("max error ")[1].split()[0])
    assert error < 1e-5


def test_plain_tensors_under_mpirun_without_torch_distributed():
    # Two processes, plain tensors, no torch.distributed: a 1-rank step in
    # a 2-process job, refused on every rank with what to do.
    code = ("import torch, muon\n"
            "from muon.optim import Muon\n"
            "w = torch.nn.Parameter(torch.ones(4, 4))\n"
            "w.grad = torch.ones(4, 4)\n"
            "try:\n"
            "    Muon([w]).step()\n"
            "except muon.MuonError as e:\n"
            # One write per rank: two ranks' output share the launcher's
            # pipe, and print's pieces could interleave.
            "    import sys; sys.stdout.write(f'refused: {e}\\n')\n"
            "    sys.stdout.flush()\n")
    run = mpirun(2, "-c", code)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert run.stdout.count("refused: the parameters make a step over 1 "
                            "rank(s)") == 2, run.stdout
    assert "initialise torch.distributed" in run.stdout


def test_process_group_form_refusals():
    from muon.optim import create_auto_config
    with pytest.raises(muon.MuonError, match="expert parallelism over "
                                             "process groups"):
        create_auto_config(expert_assignments={0: 1})


def test_schedule_options_given_twice_must_agree():
    from muon.optim import create_auto_config
    w = torch.nn.Parameter(torch.zeros(4, 4))
    config = create_auto_config(prefetch_count=2,
                                async_gpu_parallelism=False)
    with pytest.raises(muon.MuonError, match=r"prefetch_count=3 was given "
                       r"to the optimizer but its distributed_config says "
                       r"prefetch_count=2"):
        Muon([w], distributed_config=config, prefetch_count=3)
    with pytest.raises(muon.MuonError, match="async_gpu_parallelism=True"):
        Muon([w], distributed_config=config, async_gpu_parallelism=True)
    # The config's values, whether or not the optimizer repeats them.
    for extra in ({}, {"prefetch_count": 2, "async_gpu_parallelism": False}):
        opt = Muon([w], distributed_config=config, **extra)
        assert opt.options["prefetch_count"] == 2
        assert opt.options["async_gpu_parallelism"] is False
    # Without a config: the optimizer's, else the defaults.
    assert Muon([w], prefetch_count=0).options["prefetch_count"] == 0
    assert Muon([w]).options["prefetch_count"] == 1
    assert Muon([w]).options["async_gpu_parallelism"] is True


def test_one_dimensional_parameters_are_refused():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        Muon([torch.nn.Parameter(torch.zeros(3))])


def test_parameters_on_another_device_are_refused():
    w = torch.nn.Parameter(torch.zeros(4, 4, device="meta"))
    w.grad = torch.zeros(4, 4, device="meta")
    opt = Muon([w])
    with pytest.raises(MuonError, match="the parameters live on 'meta'; "
                       "this optimizer runs on CPU tensors"):
        opt.step()


@pytest.mark.skipif(not have_cuda(), reason="no CUDA device with PyTorch")
def test_cuda_parameters_run_the_cuda_target():
    # CUDA parameters compile for the cuda target and stay on the GPU; the
    # fp32 step equals the float64 reference like the CPU one.
    torch.manual_seed(4)
    w = torch.nn.Parameter(torch.randn(6, 4, device="cuda"))
    v = torch.nn.Parameter(torch.randn(6, 4, device="cuda"))
    opt = Muon([w, v], lr=0.05, weight_decay=0.1)
    ref = {id(p): (p.detach().double().cpu().numpy(), np.zeros(p.shape))
           for p in (w, v)}
    for step in range(3):
        for p in (w, v):
            p.grad = torch.randn(p.shape, device="cuda")
            rp, rm = ref[id(p)]
            ref[id(p)] = muon_step(rp, p.grad.cpu().numpy(), rm, lr=0.05,
                                   weight_decay=0.1)
        opt.step()
    assert opt._target == "cuda"
    for p in (w, v):
        assert p.device.type == "cuda"
        np.testing.assert_allclose(p.detach().cpu().numpy(), ref[id(p)][0],
                                   rtol=1e-5, atol=1e-5)
        buf = opt.state[p]["momentum_buffer"]
        assert buf.device.type == "cuda"
        np.testing.assert_allclose(buf.cpu().numpy(), ref[id(p)][1],
                                   rtol=1e-5, atol=1e-5)


def test_plain_tensors_in_one_process_and_state_dict():
    torch.manual_seed(3)
    w = torch.nn.Parameter(torch.randn(6, 4))
    x = torch.nn.Parameter(torch.randn(2, 5, 3))
    opt = Muon([w, x], lr=0.05, weight_decay=0.1)
    ref = {id(p): (p.detach().double().numpy(), np.zeros(p.shape))
           for p in (w, x)}
    for step in range(3):
        for p in (w, x):
            p.grad = torch.randn(p.shape)
            rp, rm = ref[id(p)]
            ref[id(p)] = muon_step(rp, p.grad.numpy(), rm, lr=0.05,
                                   weight_decay=0.1)
        opt.step()
    for p in (w, x):
        np.testing.assert_allclose(p.detach().numpy(), ref[id(p)][0],
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                                   ref[id(p)][1], rtol=1e-5, atol=1e-5)
    # The state round-trips through torch's own format.
    again = Muon([w, x], lr=0.05, weight_decay=0.1)
    again.load_state_dict(opt.state_dict())
    torch.testing.assert_close(again.state[w]["momentum_buffer"],
                               opt.state[w]["momentum_buffer"])


def test_a_learning_rate_schedule_compiles_once():
    torch.manual_seed(5)
    w = torch.nn.Parameter(torch.randn(8, 6))
    opt = Muon([w], lr=0.1, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.5 ** t)
    rp, rm = w.detach().double().numpy(), np.zeros((8, 6))
    for t in range(4):
        w.grad = torch.randn(8, 6)
        rp, rm = muon_step(rp, w.grad.numpy(), rm, lr=0.1 * 0.5 ** t,
                           weight_decay=0.05)
        opt.step()
        sched.step()
    np.testing.assert_allclose(w.detach().numpy(), rp, rtol=1e-5, atol=1e-5)
    assert len(opt._compiled) == 1


def test_parameters_without_gradients_are_left_alone():
    w = torch.nn.Parameter(torch.ones(4, 4))
    v = torch.nn.Parameter(torch.ones(4, 4))
    opt = Muon([w, v], lr=0.1)
    w.grad = torch.ones(4, 4)
    opt.step()
    assert not torch.equal(w.detach(), torch.ones(4, 4))
    assert torch.equal(v.detach(), torch.ones(4, 4))
    assert torch.count_nonzero(opt.state[v]["momentum_buffer"]) == 0


def test_the_fsdp_tp_example_trains(tmp_path):
    # examples/torch_fsdp_tp.py as a user runs it: FSDP2 over TP, Muon for
    # the matrices, AdamW for the rest, a cosine schedule, a checkpoint.
    from conftest import ROOT
    _port[0] += 1
    os.environ["MASTER_PORT"] = str(_port[0])
    run = mpirun(4, os.path.join(ROOT, "examples", "torch_fsdp_tp.py"),
                 "--steps", "15", "--checkpoint", str(tmp_path / "ckpt"))
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    losses = [float(l.split("loss")[1].split()[0])
              for l in run.stdout.splitlines() if l.startswith("step")]
    assert len(losses) == 4 and losses[-1] < 0.8 * losses[0], run.stdout
    assert (tmp_path / "ckpt").is_dir()


def test_local_shards_of_torch_tensors():
    b = muon.StepBuilder({"dp": 2}, lr=0.1)
    b.flat_group("g", "dp", [30, 40])
    b.add("f0", (5, 6), storage="flat<@g, 0>")
    b.add("f1", (8, 5), storage="flat<@g, 1>")
    step = b.build().step()
    for i, shape in enumerate([(5, 6), (8, 5)]):
        full = torch.randn(*shape)
        back = torch.full(shape, float("nan"))
        for r in range(2):
            s = step.local_shard(i, "param", r)
            s.insert(back, s.extract(full))
        assert torch.equal(back, full)


def test_compiled_steps_take_torch_tensors():
    b = muon.StepBuilder({"dp": 1}, lr=0.1)
    b.add("w", (6, 4))
    step = muon.compile(b.build())
    p = torch.randn(6, 4)
    g = torch.randn(6, 4)
    m = torch.zeros(6, 4)
    newp, newm = step([p], [g], [m])
    assert isinstance(newp[0], torch.Tensor) and newp[0].dtype == torch.float32
    rp, rm = muon_step(p.numpy(), g.numpy(), m.numpy(), lr=0.1)
    np.testing.assert_allclose(newp[0].numpy(), rp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(newm[0].numpy(), rm, rtol=1e-5, atol=1e-5)
    # A parameter that requires grad, or a non-contiguous one, is accepted.
    q = torch.nn.Parameter(torch.randn(4, 6)).t()
    newp, _ = step([q], [g], [m])
    rp, _ = muon_step(q.detach().numpy(), g.numpy(), m.numpy(), lr=0.1)
    np.testing.assert_allclose(newp[0].numpy(), rp, rtol=1e-5, atol=1e-5)


def test_a_param_group_orthogonalises_in_blocks():
    # A fused 24x8 QKV weight as Q (16 rows), K and V (4 each): the group's
    # split option, against the reference run block by block.
    torch.manual_seed(5)
    qkv = torch.nn.Parameter(torch.randn(24, 8))
    opt = Muon([{"params": [qkv], "split": (0, [16, 4, 4])}], lr=0.05)
    rp, rm = qkv.detach().double().numpy(), np.zeros((24, 8))
    wp, wm = rp, rm  # the same steps on the whole matrix
    for _ in range(2):
        qkv.grad = torch.randn(24, 8)
        rp, rm = muon_step(rp, qkv.grad.numpy(), rm, lr=0.05, weight_decay=0.1,
                           split=(0, [16, 4, 4]))
        wp, wm = muon_step(wp, qkv.grad.numpy(), wm, lr=0.05, weight_decay=0.1)
        opt.step()
    np.testing.assert_allclose(qkv.detach().numpy(), rp, rtol=1e-5, atol=1e-5)
    assert not np.allclose(wp, rp, atol=1e-3)  # the blocks matter


@pytest.mark.parametrize("adjust", ["original", "match_rms_adamw",
                                    "spectral_unclamped"])
def test_each_lr_adjustment_scales_as_torch_muon(adjust):
    # The factor of each of torch.optim.Muon's adjust_lr_fn names, on a
    # wide and a tall matrix (spectral_unclamped scales a wide one down).
    from torch.optim._muon import _adjust_lr
    torch.manual_seed(8)
    wide = torch.nn.Parameter(torch.randn(4, 9))
    tall = torch.nn.Parameter(torch.randn(9, 4))
    torchs = [torch.nn.Parameter(p.detach().clone()) for p in (wide, tall)]
    ours = Muon([wide, tall], lr=0.05, weight_decay=0.1, adjust_lr_fn=adjust)
    theirs = torch.optim.Muon(torchs, lr=0.05, weight_decay=0.1,
                              adjust_lr_fn=adjust)
    for p, q in zip((wide, tall), torchs):
        p.grad = torch.randn(p.shape)
        q.grad = p.grad.clone()
        # The float64 reference scales as torch does ...
        assert math.isclose(0.05 * lr_scale(p.shape, adjust),
                            _adjust_lr(0.05, adjust, p.shape), rel_tol=1e-12)
        # ... and gives the expected step.
        p.expected, _ = muon_step(p.detach().double().numpy(),
                                  p.grad.numpy(), np.zeros(p.shape), lr=0.05,
                                  weight_decay=0.1, lr_adjust=adjust)
    ours.step()
    theirs.step()
    for p, q in zip((wide, tall), torchs):
        np.testing.assert_allclose(p.detach().numpy(), p.expected,
                                   rtol=1e-5, atol=1e-5)
        # torch's own step (bf16 Newton-Schulz) within bf16's error.
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(),
                                   atol=2e-3)


def test_a_group_added_later_steps_with_zero_momenta():
    # add_param_group (as torch.optim.Muon allows) gives the new group's
    # parameters zero momenta and the same checks as the constructor.
    torch.manual_seed(6)
    w = torch.nn.Parameter(torch.randn(6, 4))
    v = torch.nn.Parameter(torch.randn(5, 3))
    opt = Muon([w], lr=0.05, weight_decay=0.1)
    opt.add_param_group({"params": [v], "lr": 0.02})
    ref = {id(w): (w.detach().double().numpy(), np.zeros(w.shape), 0.05),
           id(v): (v.detach().double().numpy(), np.zeros(v.shape), 0.02)}
    for step in range(2):
        for p in (w, v):
            p.grad = torch.randn(p.shape)
            rp, rm, lr = ref[id(p)]
            ref[id(p)] = muon_step(rp, p.grad.numpy(), rm, lr=lr,
                                   weight_decay=0.1) + (lr,)
        opt.step()
    for p in (w, v):
        np.testing.assert_allclose(p.detach().numpy(), ref[id(p)][0],
                                   rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(3))]})
    assert len(opt.param_groups) == 2


def test_a_state_without_momenta_starts_them_at_zero():
    # A state_dict whose parameter never had a gradient (torch.optim.Muon's,
    # or an empty one) has no momentum buffer: loading it gives the
    # parameter a zero one, as the constructor does, and the step starts
    # from it.
    torch.manual_seed(7)
    w = torch.nn.Parameter(torch.randn(6, 4))
    opt = Muon([w], lr=0.05, weight_decay=0.1)
    opt.load_state_dict(torch.optim.Muon([w]).state_dict()
                        | {"param_groups": opt.state_dict()["param_groups"]})
    assert torch.equal(opt.state[w]["momentum_buffer"], torch.zeros(6, 4))
    assert "momentum_buffer" in opt.state_dict()["state"][0]
    w.grad = torch.randn(6, 4)
    rp, rm = muon_step(w.detach().double().numpy(), w.grad.numpy(),
                       np.zeros((6, 4)), lr=0.05, weight_decay=0.1)
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), rp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(opt.state[w]["momentum_buffer"].numpy(), rm,
                               rtol=1e-5, atol=1e-5)


def test_what_torch_muon_refuses_is_refused():
    with pytest.raises(RuntimeError, match="does not support complex"):
        Muon([torch.nn.Parameter(torch.ones(3, 3, dtype=torch.complex64))])
    w = torch.nn.Parameter(torch.ones(3, 3))
    w.grad = torch.eye(3).to_sparse()
    with pytest.raises(RuntimeError, match="does not support sparse"):
        Muon([w]).step()
    w.grad = torch.ones(3, 3)
    # torch.optim.Muon's own checks, with its errors: NaN is refused as a
    # negative value is (it was accepted until the first step()).
    nan = float("nan")
    for bad, text in ((dict(lr=nan), "Learning rate should be >= 0 but is: "
                       "nan"), (dict(lr=-0.1), "Learning rate should be"),
                      (dict(momentum=nan), "momentum should be >= 0"),
                      (dict(momentum=-0.1), "momentum should be >= 0"),
                      (dict(weight_decay=nan), "weight decay should be"),
                      (dict(lr=torch.tensor([0.1, 0.2])),
                       "Tensor lr must be 1-element")):
        with pytest.raises(ValueError, match=text):
            Muon([w], **bad)
    # Options are refused by the constructor (and add_param_group), not at
    # the first step().
    with pytest.raises(MuonError, match="ns_steps must be an integer, got 2.5"):
        Muon([w], ns_steps=2.5)
    for bad, text in ((dict(momentum=1.0), "momentum must be in"),
                      (dict(nesterov=1), "nesterov must be True or False"),
                      (dict(assignment="bogus"), "assignment must be "
                       "'balanced' or 'round_robin', got 'bogus'"),
                      (dict(assignment="explicit"), "got 'explicit'"),
                      (dict(ns_dtype="f16"), "f32 or bf16")):
        with pytest.raises(MuonError, match=text):
            Muon([w], **bad)
    opt = Muon([w])
    with pytest.raises(MuonError, match="ns_steps must be an integer"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.ones(2, 2))],
                             "ns_steps": 0.5})
    assert len(opt.param_groups) == 1
    from muon.optim import create_auto_config
    with pytest.raises(MuonError, match="tp_dim_per_param must be an int"):
        create_auto_config(tp_dim_per_param=[0, 1])


def test_group_options_are_checked_when_the_group_is_added():
    w = torch.nn.Parameter(torch.ones(5, 3))
    w.grad = torch.ones(5, 3)
    # Split sizes are integers, never truncated (2.9 ran as 2), given as
    # (dim, [sizes]) with at least one size.
    for split, text in (((0, [2.9, 3.9]), "split size must be an integer, "
                         "got 2.9"),
                        ((0, ["2", "3"]), "split size must be an integer"),
                        ((True, [1, 2]), "split dim must be an integer, "
                         "got True"),
                        (5, r"split must be \(dim, \[sizes\]\), got 5"),
                        ((0, 3), "split sizes must be a list of integers"),
                        ((0, []), "split needs at least one size")):
        with pytest.raises(MuonError, match=text):
            Muon([{"params": [w], "split": split}])
    # The step's own options belong to the optimizer: a group's copy was
    # silently ignored.
    with pytest.raises(MuonError, match="'momentum_form' is an option of the "
                       "whole step"):
        Muon([{"params": [w], "momentum_form": "sum"}])
    # torch.optim.Muon steps a parameter listed twice twice; one update
    # would differ silently.
    with pytest.raises(MuonError, match="holds the same parameter twice"):
        Muon([{"params": [w, w]}])
    # Integer parameters were stepped and truncated (3 became 2).
    with pytest.raises(MuonError, match="floating-point parameters, found "
                       "one of torch.int32"):
        Muon([torch.ones(3, 3, dtype=torch.int32)])
    opt = Muon([w])
    with pytest.raises(MuonError, match="split size must be an integer"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.ones(2, 2))],
                             "split": (0, [1.5, 0.5])})
    assert len(opt.param_groups) == 1
    # A value changed in param_groups is checked at the step, as the
    # constructor checks it.
    opt.param_groups[0]["adjust_lr_fn"] = "bogus"
    with pytest.raises(ValueError, match="Adjust learning rate function "
                       "bogus is not supported"):
        opt.step()
    opt.param_groups[0]["adjust_lr_fn"] = None
    opt.param_groups[0]["split"] = (0, [2.5, 2.5])
    with pytest.raises(MuonError, match="split size must be an integer"):
        opt.step()


def test_ranks_that_disagree_all_raise():
    # Another shape, a gradient on one rank only, another lr, an error on
    # one rank only, another number of groups: every rank raises (before, some hung in a collective
    # or returned wrong numbers), and a step on which they agree still runs.
    _port[0] += 1
    os.environ["MASTER_PORT"] = str(_port[0])
    run = mpirun(2, os.path.join(TESTS, "torch_disagree.py"), timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    out = run.stdout
    assert "rank 0 done" in out and "rank 1 done" in out, out
    assert "shape rank 0: MuonError: parameter group 0: ranks [1] would " \
           "run another step than rank 0" in out, out
    assert "error rank 1: RuntimeError: Muon does not support sparse " \
           "gradients" in out, out
    assert "error rank 0: MuonError: parameter group 0: rank 1 could not " \
           "prepare its step (RuntimeError: Muon does not support sparse " \
           "gradients), so no rank runs it" in out, out
    # A second parameter group on rank 1 only: rank 0 returned from its
    # step and the next collective paired with rank 1's group-1 check.
    for r in (0, 1):
        assert f"groups rank {r}: MuonError: ranks [1] have [2] parameter " \
               "groups where rank 0 has 1" in out, out
