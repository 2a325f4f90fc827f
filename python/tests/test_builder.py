"""The step builder: text that parses, aliases, options and refusals."""
import subprocess

import numpy as np
import pytest

import muon
from muon import Partial, Reduced, Replicate, Shard, StepBuilder
from conftest import muon_opt


def llama_like(layers=2, dim=64, ffn=96, **hyper):
    hyper.setdefault("lr", 0.02)
    b = StepBuilder({"dp": 2, "tp": 2}, **hyper)
    col = {"dp": Shard(0), "tp": Shard(0)}
    row = {"dp": Shard(0), "tp": Shard(1)}
    for l in range(layers):
        for name, shape, pl in [("q", (dim, dim), col), ("o", (dim, dim), row),
                                ("up", (ffn, dim), col),
                                ("down", (dim, ffn), row)]:
            b.add(f"layers.{l}.{name}", shape, pl)
    return b


def test_round_trip_through_muon_opt(tmp_path):
    b = llama_like(weight_decay=0.01, nesterov=False, ns_steps=3,
                   lr_adjust="match_rms_adamw", momentum_form="sum",
                   strategy="balanced", prefetch_count=2)
    text = b.text()
    m = b.build()
    path = tmp_path / "step.mlir"
    path.write_text(text)
    out = subprocess.run([muon_opt(), str(path)], check=True,
                         capture_output=True, text=True).stdout
    assert str(muon.parse(out)) == str(m)
    printed = str(m)
    for attr in ["weight_decay = 1.000000e-02", "nesterov = false",
                 "ns_steps = 3", "#muon.lr_adjust<match_rms_adamw>",
                 "#muon.momentum_form<sum>", "#muon.strategy<balanced>",
                 "prefetch_count = 2", '#muon.param<"layers.1.down">']:
        assert attr in printed, attr


def test_floats_in_every_notation():
    b = StepBuilder({"dp": 1}, lr=2, eps=2e-7, weight_decay=1e-10,
                    momentum=0.5, ns_coefficients=(3, -4.775, 1e20))
    b.add("w", (4, 4))
    text = str(b.build())
    for attr in ["lr = 2.000000e+00", "eps = 2.000000e-07",
                 "weight_decay = 1.000000e-10",
                 "array<f64: 3.000000e+00, -4.775000e+00, 1.000000e+20>"]:
        assert attr in text, attr


def test_aliases_keep_big_steps_readable():
    b = llama_like(layers=50)
    text = b.text()
    # 200 parameters, 4 distinct types: one alias each.
    assert text.count(" = !dist.tensor<") == 4
    func = [l for l in text.splitlines() if l.startswith("func.func")][0]
    assert "!dist.tensor" not in func
    assert b.build().step().num_params == 200


def test_placements_as_lists_dicts_and_strings():
    b = StepBuilder([("dp", 2), ("tp", 2)], lr=0.1)
    b.add("a", (8, 8), [Shard(0), "shard<1>"])
    b.add("b", (8, 8), {"tp": Shard(0)})
    b.add("c", (8, 8), [Reduced(), Replicate()])
    b.add("d", (8, 8), {"dp": Shard(0)},
          grad_placements={"dp": Shard(0), "tp": Partial("avg")})
    text = b.text()
    assert "[shard<0>, shard<1>]" in text
    assert "[replicate, shard<0>]" in text
    # a reduced weight's gradient is a partial sum by default
    assert "[partial<sum>, replicate]" in text
    assert "[shard<0>, partial<avg>]" in text
    step = b.build().step()
    assert step.partial_term(2, 3) == (1, 2, 1.0)


def test_storage_order_flat_groups_and_annotations():
    b = StepBuilder({"dp": 2, "tp": 2}, lr=0.1)
    # numel is one count per member, not a total.
    with pytest.raises(muon.MuonError,
                       match="flat_group 'g': numel must be a list of "
                             "element counts, one per member, got 300"):
        b.flat_group("g", "dp", 300)
    b.flat_group("g", "dp", [240, 60])
    b.add("flat0", (12, 20), storage="flat<@g, 0>")
    b.add("flat1", (6, 10), storage="flat<@g, 1>")
    b.add("dim", (40, 16), storage="dim<0 on dp weights [1, 3]>")
    b.add("outer", (48, 32), {"dp": Shard(0), "tp": Shard(0)},
          order={0: ["tp", "dp"]})
    b.add("expert", (16, 16), {"tp": Shard(0)}, expert=("dp", 1))
    b.add("stage", (16, 24), {"tp": Shard(1)}, stage=("dp", 0))
    step = b.build().step()
    # 300 elements over dp = 2: member 0 (240) is [0, 150) on dp 0 and
    # [150, 240) on dp 1; member 1 (60) lives on dp 1 only.
    s = step.local_shard(0, "param", 1)
    assert s.flattened and (s.shape, s.offsets) == ((150,), (0,))
    s = step.local_shard(0, "param", 2)
    assert (s.shape, s.offsets) == ((90,), (150,))
    assert step.local_shard(1, "param", 0).shape == (0,)
    s = step.local_shard(2, "param", 3)
    assert s.shape == (30, 16) and s.offsets == (10, 0)
    assert step.holds(4, 2) and not step.holds(4, 0)
    assert step.holds(5, 0) and not step.holds(5, 2)


def test_runtime_hyper_parameters():
    b = StepBuilder({"dp": 2}, runtime_hyper=("weight_decay", "lr"),
                    momentum=0.9)
    b.add("w", (4, 4), [Shard(0)])
    text = b.text()
    assert "%lr: f64, %weight_decay: f64) ->" in text
    assert "lr(%lr) weight_decay(%weight_decay)" in text
    assert "lr(%arg3) weight_decay(%arg4)" in str(b.build())
    with pytest.raises(muon.MuonError, match="choose one"):
        StepBuilder({"dp": 2}, lr=0.1, runtime_hyper=("lr",))
    with pytest.raises(muon.MuonError, match="only lr and weight_decay"):
        StepBuilder({"dp": 2}, lr=0.1, runtime_hyper=("momentum",))


def test_refusals():
    with pytest.raises(muon.MuonError, match="needs lr"):
        StepBuilder({"dp": 2})
    with pytest.raises(muon.MuonError, match="unknown hyper-parameters"):
        StepBuilder({"dp": 2}, lr=0.1, betas=(0.9, 0.99))
    b = StepBuilder({"dp": 2}, lr=0.1)
    with pytest.raises(muon.MuonError, match="another optimizer"):
        b.add("bias", (16,), [Shard(0)])
    with pytest.raises(muon.MuonError, match="no mesh axis 'tp'"):
        b.add("w", (4, 4), {"tp": Shard(0)})
    with pytest.raises(muon.MuonError, match="2 placements for a mesh of 1"):
        b.add("w", (4, 4), [Shard(0), Shard(1)])
    # A single placement, not a list of them (a string was read character
    # by character).
    with pytest.raises(muon.MuonError, match=r"got the single 'shard<0>'"):
        b.add("w", (4, 4), "shard<0>")
    with pytest.raises(muon.MuonError, match="one per mesh axis"):
        b.add("w", (4, 4), Shard(0))
    with pytest.raises(muon.MuonError, match="runtime_hyper is a list"):
        StepBuilder({"dp": 2}, runtime_hyper="lr")
    with pytest.raises(muon.MuonError, match="no parameters"):
        b.text()
    with pytest.raises(muon.MuonError, match="not finite"):
        StepBuilder({"dp": 2}, lr=float("nan"))
    with pytest.raises(muon.MuonError, match="not finite"):
        StepBuilder({"dp": 2}, lr=0.1, ns_coefficients=(1, float("inf"), 2))


def test_values_that_integers_or_booleans_would_change_are_refused():
    # int(2.5) and bool("no") used to be written silently as 2 and true.
    cases = [
        (lambda: StepBuilder({"dp": 2.5}, lr=0.1), "mesh axis 'dp'"),
        (lambda: StepBuilder({"dp": 2}, lr=0.1, owners=[0.5]), "owners"),
        (lambda: StepBuilder({"dp": 2}, lr=0.1, prefetch_count=1.7),
         "prefetch_count"),
        (lambda: StepBuilder({"dp": 2}, lr=0.1, nesterov="no"),
         "nesterov must be True or False, got 'no'"),
        (lambda: StepBuilder({"dp": 2}, lr=0.1, async_gpu_parallelism=1),
         "async_gpu_parallelism must be True or False"),
        # The cases are named (before, the parser's error on the generated
        # text: "expected ::muon::optim::MomentumForm to be one of ...").
        (lambda: StepBuilder({"dp": 2}, lr=0.1, momentum_form="ema"),
         "momentum_form must be one of 'lerp', 'sum', got 'ema'"),
        (lambda: StepBuilder({"dp": 2}, lr=0.1, strategy="fair"),
         "strategy must be one of 'round_robin', 'balanced', 'explicit', "
         "got 'fair'"),
        (lambda: StepBuilder({"dp": 2}, lr=0.1, lr_adjust="adam"),
         "lr_adjust must be one of 'original', 'match_rms_adamw', "
         "'spectral_unclamped', got 'adam'"),
    ]
    b = StepBuilder({"dp": 2}, lr=0.1)
    cases += [
        (lambda: b.add("w", (8.5, 4), [Shard(0)]), "shape must be an integer"),
        (lambda: b.add("w", (4, -4), [Shard(0)]),
         r"shape \(4, -4\) has a negative size"),
        (lambda: b.add("w", (8, 4), [Shard(0.5)]), "Shard dim"),
        (lambda: b.add("w", (8, 4), [Shard(0)], split=(0, [4.5, 3.5])),
         "split size must be an integer, got 4.5"),
        (lambda: b.add("w", (8, 4), [Shard(0)], expert=("dp", "1")),
         "expert index must be an integer"),
        (lambda: b.flat_group("g", "dp", [32.5]), "numel must be an integer"),
        (lambda: b.flat_group("g", "dp", [True, 3]), "got True"),
        (lambda: b.flat_group("g", "dp", [np.True_, 3]), "got "),
        (lambda: b.flat_group("g", "dp", [bytearray(b"3")]), "bytearray"),
        (lambda: b.flat_group("g", "dp", []), "one positive element count"),
        (lambda: b.flat_group("g", "dp", [0]), r"got \[0\]"),
        (lambda: b.flat_group("g", "dp", (3, -1)), r"got \[3, -1\]"),
    ]
    for make, message in cases:
        with pytest.raises(muon.MuonError, match=message):
            make()
    assert b.params == [] and b.flat_groups == []


def test_a_name_is_added_once():
    # Names key the tensors of a call: a second 'w' would take the first's.
    b = StepBuilder({"dp": 2}, lr=0.1)
    b.add("w", (8, 4), [Shard(0)])
    with pytest.raises(muon.MuonError, match="'w' is added twice"):
        b.add("w", (8, 4), [Shard(0)])


def test_verifier_errors_reach_the_builder_user():
    b = StepBuilder({"dp": 2}, lr=0.1, momentum=1.5)
    b.add("w", (4, 4), [Shard(0)])
    with pytest.raises(muon.MuonError) as e:
        b.build()
    assert "momentum" in str(e.value)
    assert e.value.location.startswith("<string>:")


def test_local_shard_extract_insert_round_trip():
    b = StepBuilder({"dp": 2, "tp": 2}, lr=0.1)
    b.flat_group("g", "dp", [240, 60])
    b.add("flat0", (12, 20), storage="flat<@g, 0>")
    b.add("block", (24, 20), storage="block<0 on dp, 1 on tp>")
    b.add("two", (7, 5), [Shard(0), Shard(1)])
    step = b.build().step()
    rng = np.random.default_rng(0)
    for i in range(step.num_params):
        full = rng.standard_normal(step.param_shape(i)).astype(np.float32)
        back = np.full_like(full, np.nan)
        for r in range(4):
            s = step.local_shard(i, "param", r)
            piece = s.extract(full)
            assert piece.shape == s.shape
            s.insert(back, piece)
        np.testing.assert_array_equal(back, full)


def test_reduced_weights_get_the_cotangent_gradient_and_blocks():
    b = StepBuilder({"dp": 2, "tp": 2}, lr=0.02)
    b.flat_group("g", "dp", [24, 96])
    b.add("fsdp", (16, 8), {"dp": Reduced()}, storage="dim<0 on dp weights [1, 3]>")
    b.add("block", (16, 8), {"tp": Reduced()}, storage="block<0 on dp, 1 on tp weights [3, 1]>")
    b.add("flat", (4, 6), {"dp": Reduced()}, storage="flat<@g, 0>")
    b.add("whole", (4, 6), storage="whole<on tp owner 1>")
    b.add("qkv", (24, 8), {"dp": Shard(0)}, split=(0, [16, 4, 4]))
    text = b.text()
    assert "[partial<sum>, replicate]>" in text
    # The block keeps its dp split for the gradient partial over tp.
    assert "[replicate, partial<sum>], storage = dim<0 on dp>>" in text
    # Storage not over a partial axis stays.
    assert text.count("storage = whole<on tp owner 1>") == 1
    assert '#muon.param<"qkv", split = 0 [16, 4, 4]>' in text
    step = b.build().step()
    assert step.param_blocks(4) == (0, (16, 4, 4))
    assert step.param_blocks(0) is None
