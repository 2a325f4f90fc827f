"""Compiled steps in this process (a one-rank mesh) against the NumPy
float64 reference, and the checks made before calling compiled code."""
import numpy as np
import pytest

import muon
from muon import Shard, StepBuilder
from muon.reference import muon_step, newton_schulz
from conftest import have_cuda

SHAPES = {"tall": (24, 8), "wide": (8, 20), "square": (16, 16),
          "experts": (3, 8, 12)}


def one_rank_step(**hyper):
    hyper.setdefault("lr", 0.02)
    b = StepBuilder({"dp": 1}, **hyper)
    for name, shape in SHAPES.items():
        b.add(name, shape, [Shard(0)])
    return b


def run_and_compare(hyper, steps=3):
    step = muon.compile(one_rank_step(**hyper).build())
    rng = np.random.default_rng(1)
    P = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
    M = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
    refP = [p.astype(np.float64) for p in P]
    refM = [m.astype(np.float64) for m in M]
    for t in range(steps):
        G = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
        P, M = step(P, G, M)
        for i in range(len(G)):
            refP[i], refM[i] = muon_step(refP[i], G[i], refM[i], **hyper)
    for i, name in enumerate(SHAPES):
        assert P[i].dtype == np.float32 and P[i].shape == SHAPES[name]
        np.testing.assert_allclose(P[i], refP[i], rtol=1e-5, atol=1e-5,
                                   err_msg=name)
        np.testing.assert_allclose(M[i], refM[i], rtol=1e-5, atol=1e-5,
                                   err_msg=name)


def test_defaults_match_the_reference():
    run_and_compare({"lr": 0.02})


def test_options_match_the_reference():
    run_and_compare({"lr": 0.05, "weight_decay": 0.1, "momentum": 0.9,
                     "nesterov": False, "momentum_form": "sum",
                     "lr_adjust": "match_rms_adamw", "ns_steps": 3})


def test_a_zero_update_without_eps_stays_finite():
    # eps = 0 and an all-zero gradient and momentum: Newton-Schulz of zero
    # is zero (not 0 / 0), so only the weight decay moves the parameters,
    # in the compiled step and in the reference alike.
    hyper = {"lr": 0.1, "eps": 0.0, "weight_decay": 0.5}
    step = muon.compile(one_rank_step(**hyper).build())
    P = [np.ones(s, np.float32) for s in SHAPES.values()]
    Z = [np.zeros(s, np.float32) for s in SHAPES.values()]
    newP, newM = step(P, Z, Z)
    for i, name in enumerate(SHAPES):
        np.testing.assert_array_equal(newP[i], np.float32(1 - 0.1 * 0.5),
                                      err_msg=name)
        np.testing.assert_array_equal(newM[i], 0.0, err_msg=name)
        refP, _ = muon_step(P[i].astype(np.float64), Z[i], Z[i], **hyper)
        np.testing.assert_allclose(refP, 1 - 0.1 * 0.5, err_msg=name)


def test_the_reference_orthogonalises():
    u = np.random.default_rng(2).standard_normal((32, 16))
    # Polar-style coefficients that converge (a, b, c) = (1.5, -0.5, 0):
    # many steps of the cubic iteration give an orthogonal matrix.
    x = newton_schulz(u, ns_steps=60, ns_coefficients=(1.5, -0.5, 0.0))
    np.testing.assert_allclose(x.T @ x, np.eye(16), atol=1e-6)


# Polar Express's 5 triples as its authors list them, before the safety
# factor they apply (every triple but the last as a/1.01, b/1.01^3,
# c/1.01^5).
POLAR_EXPRESS = [(8.28721201814563, -23.595886519098837, 17.300387312530933),
                 (4.107059111542203, -2.9478499167379106, 0.5448431082926601),
                 (3.9486908534822946, -2.908902115962949, 0.5518191394370137),
                 (3.3184196573706015, -2.488488024314874, 0.51004894012372),
                 (2.300652019954817, -1.6689039845747493, 0.4188073119525673)]


def with_safety(triples, f=1.01):
    return [(a / f, b / f**3, c / f**5) for a, b, c in triples[:-1]] + \
        [triples[-1]]


def test_coefficients_that_diverge_in_bf16_warn():
    # Without the safety factor a singular value one bf16 rounding above
    # 1 ends near 3e51: compile warns (MuonWarning, the compiler's text),
    # and still compiles. With it, or in f32, no warning.
    def build(coeffs, dtype):
        return one_rank_step(ns_steps=5, ns_coefficients=coeffs,
                             ns_dtype=dtype).build()
    with pytest.warns(muon.MuonWarning,
                      match=r"warning: ns_coeffs may diverge with ns_dtype = "
                            r"bf16: a singular value of 1\.0039 .* ends at "
                            r"3\.19e\+51 after 5 iterations") as caught:
        step = muon.compile(build(POLAR_EXPRESS, "bf16"))
    assert len(caught) == 1
    assert caught[0].filename == __file__  # the caller's line
    assert step.entry
    # lower() keeps it in the module's diagnostics, and warns nothing.
    lowered = build(POLAR_EXPRESS, "bf16").lower()
    assert [d.severity for d in lowered.diagnostics] == ["warning"]
    assert lowered.diagnostics[0].location.startswith("<string>:")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        muon.compile(build(with_safety(POLAR_EXPRESS), "bf16"))
        muon.compile(build(POLAR_EXPRESS, "f32"))


def test_inputs_by_name_and_step_counters():
    step = muon.compile(one_rank_step().build())
    z = {name: np.zeros(s, np.float32) for name, s in SHAPES.items()}
    g = {name: np.ones(s, np.float32) for name, s in SHAPES.items()}
    muon.reset_counters()
    P, M = step(z, g, z)
    # every matrix once: three 2-D parameters and three experts
    assert muon.counters()["ns_matrices"] == 6
    np.testing.assert_allclose(M[0], 0.05, rtol=1e-6)


def test_inputs_by_name_need_names_that_are_unique():
    # A hand-written step may name two parameters alike: a dict cannot say
    # which tensor is whose, so only lists are taken.
    t = "!dist.tensor<8x4xf32, @m, [shard<0>]>"
    step = muon.compile(muon.parse(f"""
dist.mesh @m [dp = 1]
func.func @step(%p: {t}, %q: {t}, %g: {t}, %h: {t}, %m: {t}, %n: {t})
    -> ({t}, {t}, {t}, {t}) {{
  %r:4 = muon.step params(%p, %q : {t}, {t}) grads(%g, %h : {t}, {t})
      momenta(%m, %n : {t}, {t})
      {{lr = 0.02 : f64, param_info = [#muon.param<"w">, #muon.param<"w">]}}
  return %r#0, %r#1, %r#2, %r#3 : {t}, {t}, {t}, {t}
}}"""))
    z = np.zeros((8, 4), np.float32)
    with pytest.raises(muon.MuonError, match="several parameters named"):
        step({"w": z}, {"w": z}, {"w": z})
    (p, q), _ = step([z, z], [z, z + 1], [z, z])
    assert not np.array_equal(p, q)


def test_step_buffers_are_counted():
    step = muon.compile(one_rank_step().build())
    z = [np.zeros(s, np.float32) for s in SHAPES.values()]
    muon.reset_counters()
    step(z, z, z)
    peak = muon.counters()["heap_bytes_peak"]
    # At least the largest matrix's Newton-Schulz result, and less than
    # every parameter's temporaries held at once.
    largest = max(np.prod(s) for s in SHAPES.values()) * 4
    total = sum(np.prod(s) for s in SHAPES.values()) * 4
    assert largest <= peak < 4 * total


def test_wait_counters():
    # One rank has no peer to wait for: the counters are there and zero
    # after a reset and a step; a wait's polling never exceeds its wall time.
    step = muon.compile(one_rank_step().build())
    z = [np.zeros(s, np.float32) for s in SHAPES.values()]
    muon.reset_counters()
    step(z, z, z)
    c = muon.counters()
    assert 0 <= c["wait_cpu_seconds"] <= c["wait_seconds"] + 1e-3
    assert c["wait_seconds"] < 1.0


def entry_buffers(step):
    """Zero arguments and out-buffers in the compiled entry's own order
    (what the C API's muonExecutableInvoke takes)."""
    shapes = list(SHAPES.values())
    args = [np.zeros(shapes[param], np.float32) for _, param in step._args]
    outs = [np.zeros(s, np.float32) for s in step._result_shapes]
    return args, outs


def test_out_buffers_overlapping_arguments_are_refused():
    step = muon.compile(one_rank_step().build())
    args, outs = entry_buffers(step)
    # Result #1 is the new value of argument #3 (the second parameter).
    outs[1] = args[3]
    error = step._exe.invoke(args + outs)
    assert "result buffer #1 overlaps argument #3" in error
    outs[1] = outs[0].reshape(-1)[:np.prod(outs[1].shape)].reshape(
        outs[1].shape)
    assert "result buffer #0 overlaps result buffer #1" in \
        step._exe.invoke(args + outs)


def test_out_buffers_of_another_shape_are_refused():
    # The C API compares each out-buffer with the argument it replaces (the
    # compiled code checks only the arguments): a smaller one would be
    # written past its end, a larger one half filled.
    step = muon.compile(one_rank_step().build())
    args, outs = entry_buffers(step)
    assert step._exe.invoke(args + outs) == ""
    n = len(SHAPES)
    for wrong in [(1, 1), (24, 16)]:
        args, outs = entry_buffers(step)
        outs[n] = np.zeros(wrong, np.float32)   # the first momentum's
        error = step._exe.invoke(args + outs)
        shape = "x".join(map(str, wrong))
        assert (f"result buffer #{n} has shape {shape}, but argument "
                f"#2, whose new value it receives, has 24x8") in error


def test_tensors_of_another_number_of_dims_are_refused():
    # The compiled code reads each descriptor with the dims it was compiled
    # for; the C API checks them against the module's __muon_dims_ table.
    step = muon.compile(one_rank_step().build())
    args, outs = entry_buffers(step)
    args[0] = args[0].reshape(-1)
    assert step._exe.invoke(args + outs) == \
        "argument #0 has 1 dims; the entry takes a tensor of 2"
    args, outs = entry_buffers(step)
    outs[3] = outs[3].reshape(1, *outs[3].shape)
    assert step._exe.invoke(args + outs) == \
        "result buffer #3 has 4 dims; the entry takes a tensor of 3"


def test_inputs_are_converted_when_they_must_be():
    step = muon.compile(one_rank_step().build())
    P = [np.ones(s, np.float64) for s in SHAPES.values()]      # float64
    G = [np.ones(s[::-1], np.float32).T for s in SHAPES.values()]  # not C
    M = [np.zeros(s, np.float32) for s in SHAPES.values()]
    newP, _ = step(P, G, M)
    assert all(p.dtype == np.float32 for p in newP)


def test_bad_inputs_are_refused_before_the_call():
    step = muon.compile(one_rank_step().build())
    good = [np.zeros(s, np.float32) for s in SHAPES.values()]
    bad = list(good)
    bad[1] = np.zeros((8, 21), np.float32)
    with pytest.raises(muon.MuonError) as e:
        step(good, bad, good)
    assert "grad of 'wide' on rank 0: local shape (8, 21)" in str(e.value)
    assert "(8, 20)" in str(e.value)
    with pytest.raises(muon.MuonError, match="3 tensors for a step of 4"):
        step(good[:3], good, good)
    with pytest.raises(muon.MuonError, match="unknown parameter names"):
        step({"nope": good[0]}, good, good)


def test_a_step_of_another_job_size_is_refused_at_the_call():
    # A 2-rank step compiles in this 1-rank process, but running it would
    # end the process in the runtime: the call refuses it instead.
    b = StepBuilder({"dp": 2}, lr=0.02)
    b.add("w", (8, 4), [Shard(0)])
    step = muon.compile(b.text())
    local = np.ones(step.local_shape(0, "param"), np.float32)
    with pytest.raises(muon.MuonError,
                       match=r"compiled for rank 0 of 2, but this process is "
                             r"rank 0 of a job of 1 \(launch with mpirun -np 2"):
        step([local], [local], [local])


def test_compile_refusals():
    text = one_rank_step().text()
    with pytest.raises(muon.MuonError, match="holds 0 muon.step"):
        muon.compile(text, entry="other")
    with pytest.raises(muon.MuonError, match="rank 3 is not a rank"):
        muon.compile(text, rank=3)
    with pytest.raises(muon.MuonError, match=r"optimisation level 7"):
        muon.compile(text, opt_level=7)
    # Numbers are integers, never converted: rank=True ran as rank 1.
    for bad, message in ((dict(rank=0.0), "compile: rank must be an integer, "
                          "got float 0.0"),
                         (dict(rank=True), "got bool True"),
                         (dict(opt_level=2.7), "compile: opt_level must be")):
        with pytest.raises(TypeError, match=message):
            muon.compile(text, **bad)
    step = muon.compile(text)
    z = np.zeros((4, 4), np.float32)
    for bad in ((0.0, "param"), (True, "param")):
        with pytest.raises(TypeError, match="param must be an integer"):
            step.shard(z, *bad)


def test_hyper_parameters_read_at_run_time():
    # A learning-rate schedule and a weight-decay change, one compiled step.
    b = StepBuilder({"dp": 1}, runtime_hyper=("lr", "weight_decay"))
    for name, shape in SHAPES.items():
        b.add(name, shape, [Shard(0)])
    step = muon.compile(b.build())
    assert step.runtime_hyper == ["lr", "weight_decay"]
    rng = np.random.default_rng(4)
    P = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
    M = [np.zeros(s, np.float32) for s in SHAPES.values()]
    refP = [p.astype(np.float64) for p in P]
    refM = [m.astype(np.float64) for m in M]
    for t, (lr, wd) in enumerate([(0.1, 0.0), (0.05, 0.1), (0.0, 0.5),
                                  (0.02, 0.01)]):
        G = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
        P, M = step(P, G, M, lr=lr, weight_decay=wd)
        for i in range(len(G)):
            refP[i], refM[i] = muon_step(refP[i], G[i], refM[i], lr=lr,
                                         weight_decay=wd)
    for i, name in enumerate(SHAPES):
        np.testing.assert_allclose(P[i], refP[i], rtol=1e-5, atol=1e-5,
                                   err_msg=name)
    z = [np.zeros(s, np.float32) for s in SHAPES.values()]
    with pytest.raises(muon.MuonError, match="pass lr="):
        step(z, z, z, weight_decay=0.1)
    with pytest.raises(muon.MuonError, match=r"lr must be a number in \[0, 2\^60\]"):
        step(z, z, z, lr=-1.0, weight_decay=0.1)
    with pytest.raises(muon.MuonError, match="weight_decay must be a number"):
        step(z, z, z, lr=0.1, weight_decay=float("nan"))
    # A bool or a string is not a rate (True ran as 1.0, "0.1" as 0.1).
    for bad in (True, "0.1", np.True_):
        with pytest.raises(TypeError, match="step: lr must be a real number"):
            step(z, z, z, lr=bad, weight_decay=0.1)
    P1, _ = step(z, z, z, lr=np.float32(0.1), weight_decay=0)
    # Finite but past what the f32 step can use (as the verifier's bound).
    with pytest.raises(muon.MuonError, match=r"got 1e\+300"):
        step(z, z, z, lr=1e300, weight_decay=0.1)
    constant = muon.compile(one_rank_step().build())
    with pytest.raises(muon.MuonError, match="this step has it as a constant"):
        constant(z, z, z, lr=0.1)
    # The C API refuses a NaN rate itself (muonExecutableInvoke), for hosts
    # that call it without this package's check.
    from muon._run import LR, WEIGHT_DECAY
    given = {LR: float("nan"), WEIGHT_DECAY: 0.0}
    buffers = [given[role] if role in given else z[param]
               for role, param in step._args]
    outs = [np.empty(s, np.float32) for s in step._result_shapes]
    error = step._exe.invoke(buffers + outs)
    assert "(an f64 hyper-parameter) must be a number in [0, 2^60], got nan" \
        in error


SHARD_STEP = """
shard.grid @grid(shape = 1) {dist.axis_names = ["dp"]}
func.func @step(%p: tensor<24x8xf32>, %g: tensor<24x8xf32>, %m: tensor<24x8xf32>)
    -> (tensor<24x8xf32>, tensor<24x8xf32>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %p1 = shard.shard %p to %s : tensor<24x8xf32>
  %g1 = shard.shard %g to %s : tensor<24x8xf32>
  %m1 = shard.shard %m to %s : tensor<24x8xf32>
  %r:2 = muon.step params(%p1 : tensor<24x8xf32>) grads(%g1 : tensor<24x8xf32>)
                   momenta(%m1 : tensor<24x8xf32>) {lr = 0.02 : f64}
  return %r#0, %r#1 : tensor<24x8xf32>, tensor<24x8xf32>
}
"""


def test_a_step_annotated_with_mlir_shard_compiles():
    # The import gives the global-view step its layout; the compiled step
    # matches the reference, and the imported module names the dist mesh.
    module = muon.parse(SHARD_STEP)
    with pytest.raises(muon.MuonError, match="global-view step"):
        module.clone().run_passes("muon-assign-owners")
    imported = module.clone().run_passes("convert-shard-to-dist")
    assert "dist.mesh @grid [dp = 1]" in imported.print()
    step = muon.compile(module)
    rng = np.random.default_rng(3)
    P, G, M = (rng.uniform(-1, 1, (24, 8)).astype(np.float32) for _ in range(3))
    (newP,), (newM,) = step([P], [G], [M])
    refP, refM = muon_step(P.astype(np.float64), G.astype(np.float64),
                           M.astype(np.float64), lr=0.02)
    np.testing.assert_allclose(newP, refP, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(newM, refM, rtol=1e-5, atol=1e-5)


def test_the_cuda_target_takes_cuda_tensors_only():
    # Checked before the call: a cuda step's buffers are device memory.
    step = muon.compile(one_rank_step().build(), target="cuda")
    host = [np.zeros(s, np.float32) for s in SHAPES.values()]
    with pytest.raises(muon.MuonError,
                       match="param of 'tall': an array on the host; the "
                             "cuda target runs on CUDA torch tensors"):
        step(host, host, host)


@pytest.mark.skipif(not have_cuda(), reason="no CUDA device with PyTorch")
def test_the_cuda_target_on_cuda_tensors_matches_the_cpu_target():
    import torch
    hyper = {"lr": 0.02, "weight_decay": 0.1}
    cpu = muon.compile(one_rank_step(**hyper).build())
    gpu = muon.compile(one_rank_step(**hyper).build(), target="cuda")
    rng = np.random.default_rng(3)
    P = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
    G = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
    M = [rng.uniform(-1, 1, s).astype(np.float32) for s in SHAPES.values()]
    want_p, want_m = cpu(P, G, M)
    on = [[torch.from_numpy(x).cuda() for x in xs] for xs in (P, G, M)]
    got_p, got_m = gpu(*on)
    for w, g in zip(want_p + want_m, got_p + got_m):
        assert g.device.type == "cuda"
        np.testing.assert_allclose(g.cpu().numpy(), w, rtol=1e-5, atol=1e-5)
