"""Parsing, diagnostics as exceptions, passes, lowering, report, plans."""
import re
import subprocess
import sys

import numpy as np
import pytest

import muon
from conftest import gen_step, muon_opt

STEP = """dist.mesh @m [dp = 2]
!t = !dist.tensor<8x4xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {
  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t)
      {lr = 0.02 : f64, param_info = [#muon.param<"w">]}
  return %r#0, %r#1 : !t, !t
}
"""


def test_the_submodules_are_attributes_after_import_muon():
    # muon.reference and muon.report with the package; muon.optim (torch)
    # when first named. A fresh interpreter: this one imported them all.
    code = ("import sys, muon; assert 'torch' not in sys.modules; "
            "print(muon.reference.muon_step.__name__, "
            "muon.report.__name__.split('.')[-1], muon.optim.Muon.__name__)")
    out = subprocess.run([sys.executable, "-c", code], check=True,
                         capture_output=True, text=True).stdout
    assert out.split() == ["muon_step", "report", "Muon"]


def test_parse_error_is_an_exception_with_location():
    with pytest.raises(muon.MuonError) as e:
        muon.parse("func.func @f() {\n  return %y : i32\n}")
    err = e.value
    assert err.location == "<string>:2:10"
    assert err.diagnostics[0].severity == "error"
    assert "use of undeclared SSA value name" in err.diagnostics[0].message
    assert "<string>:2:10: error: use of undeclared SSA value" in str(err)


def test_deeply_nested_text_is_parsed_printed_and_verified():
    # 100,000 nested arrays overflow the interpreter's own 8 MiB stack
    # (a segfault); parse, print, verify and clone run on a large stack.
    depth = 100_000
    m = muon.parse("func.func @f() attributes {a = " + "[" * depth +
                   "]" * depth + "} {\n  return\n}")
    text = str(m)
    assert text.count("[") == depth
    m.verify()
    assert str(m.clone()) == text


def test_a_missing_symbol_is_named_in_the_compile_error(capfd):
    # ORC reports the unresolved symbols on its own (to stderr by default);
    # the error handed back names them, and nothing is printed.
    from muon import _muon
    m = muon.parse("""
llvm.func @nowhere_at_all() attributes {sym_visibility = "private"}
llvm.func @step() attributes {llvm.emit_c_interface} {
  llvm.call @nowhere_at_all() : () -> ()
  llvm.return
}
llvm.func @_mlir_ciface_step() attributes {llvm.emit_c_interface} {
  llvm.call @step() : () -> ()
  llvm.return
}""")
    exe, error = _muon.compile(m._m, "step", 0)
    assert exe is None
    assert "Symbols not found: [ nowhere_at_all ]" in error
    assert capfd.readouterr().err == ""


def test_verifier_error_names_the_op_location():
    bad = STEP.replace("[shard<0>]", "[shard<2>]")
    with pytest.raises(muon.MuonError) as e:
        muon.parse(bad)
    d = e.value.diagnostics[0]
    # The step that uses the type is refused, at its location.
    assert d.location == "<string>:4:10"
    assert "placement shard<2> on mesh axis 'dp'" in d.message
    # The "see current operation" note MLIR adds is dropped.
    assert d.notes == ()


def test_parse_file_locations_name_the_file(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(STEP.replace("lr = 0.02", "lr = -1.0"))
    with pytest.raises(muon.MuonError) as e:
        muon.parse_file(path)
    assert e.value.location.startswith(str(path) + ":4:")
    assert "lr" in e.value.diagnostics[0].message


def test_missing_file():
    with pytest.raises(muon.MuonError, match="no such file"):
        muon.parse_file("/nonexistent/step.mlir")


def test_print_round_trips_and_clone_is_independent():
    m = muon.parse(STEP)
    again = muon.parse(str(m))
    assert str(again) == str(m)
    c = m.clone()
    c.run_passes("muon-assign-owners")
    assert "owners" in str(c) and "owners" not in str(m)


def test_passes_and_their_errors():
    m = muon.parse(STEP)
    m.run_passes("muon-assign-owners,muon-expand-step,dist-verify-spmd")
    assert "muon.step" not in str(m) and "dist.gather" in str(m)
    with pytest.raises(muon.MuonError) as e:
        muon.parse(STEP).run_passes("no-such-pass")
    assert "invalid pass pipeline 'no-such-pass'" in str(e.value)


def test_pass_failure_carries_the_pass_diagnostic():
    # A mesh of 2^21 ranks verifies, but the passes that visit every rank
    # refuse it at the step.
    m = muon.parse(STEP.replace("[dp = 2]", "[dp = 2097152]")
                   .replace("8x4xf32", "2097152x4xf32"))
    with pytest.raises(muon.MuonError) as e:
        m.run_passes("muon-assign-owners")
    assert e.value.location == "<string>:4:10"
    assert "at most 1048576 are supported" in str(e.value)


def test_named_pipeline():
    m = muon.parse(STEP).run_passes("muon-to-llvm{target=cpu}")
    assert "llvm.func @_mlir_ciface_step" in str(m)


def test_lower_to_llvm_and_unknown_target():
    m = muon.parse(STEP).lower()
    assert "llvm.func @_mlir_ciface_step" in str(m)
    assert "__muon_roles_step" in str(m)
    with pytest.raises(muon.MuonError, match="unknown target 'gpu'"):
        muon.parse(STEP).lower(target="gpu")


def test_an_unknown_cuda_chip_is_one_error_and_nothing_on_stderr(capfd):
    # Refused before LLVM prints its own warnings and ptxas fails.
    with pytest.raises(muon.MuonError, match="cudaChip 'sm_xx' is not a GPU "
                       "architecture LLVM's NVPTX backend knows"):
        muon.parse(STEP).lower(target="cuda", cuda_chip="sm_xx")
    assert capfd.readouterr().err == ""


def test_a_cuda_toolkit_without_libdevice_is_an_error(monkeypatch, tmp_path):
    # Upstream reported it on stderr and lowered with another toolkit.
    monkeypatch.setenv("MUON_CUDA_PATH", str(tmp_path / "none"))
    with pytest.raises(muon.MuonError, match="the CUDA toolkit '.*none' has "
                       "no nvvm/libdevice/libdevice.10.bc"):
        muon.parse(STEP).lower(target="cuda")


def test_lower_stacks_same_shape_matrices_on_request():
    # Three 64x32 matrices on one rank: one Newton-Schulz call per matrix by
    # default on the cpu target, one call on a batch with ns_stack_bytes.
    three = """
dist.mesh @m [dp = 1]
!t = !dist.tensor<64x32xf32, @m, [shard<0>]>
func.func @step(%p0: !t, %p1: !t, %p2: !t, %g0: !t, %g1: !t, %g2: !t,
                %m0: !t, %m1: !t, %m2: !t) -> (!t, !t, !t, !t, !t, !t) {
  %r:6 = muon.step params(%p0, %p1, %p2 : !t, !t, !t)
      grads(%g0, %g1, %g2 : !t, !t, !t)
      momenta(%m0, %m1, %m2 : !t, !t, !t) {lr = 0.02 : f64}
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : !t, !t, !t, !t, !t, !t
}"""
    call = "llvm.call @muon_rt_newton_schulz_by_reference("
    assert str(muon.parse(three).lower()).count(call) == 3
    assert str(muon.parse(three).lower(ns_stack_bytes=65536)).count(call) == 1
    with pytest.raises(muon.MuonError, match="nsStackBytes must be -1"):
        muon.parse(three).lower(ns_stack_bytes=-5)


def test_lower_takes_the_schedule_options():
    # Each option reaches muon-to-llvm: the prefetch bound lowers the step's
    # prefetch_count (a remark says so), ownership-based deallocation frees
    # in fewer calls, unbatched rounds make no batches, and a negative bound
    # is refused.
    step = gen_step("--mesh", "dp=2,tp=2", "--only", "fsdp_tp")
    default = muon.parse(step).lower()
    bounded = muon.parse(step).lower(max_prefetch_bytes=1)
    assert str(bounded) != str(default)
    assert any("prefetch_count 1 lowered to 0 by max-prefetch-bytes = 1"
               in d.message for d in bounded.diagnostics)
    free = "llvm.call @muon_rt_buffers_free("
    ownership = muon.parse(step).lower(place_deallocations=False)
    assert 0 < str(ownership).count(free) < str(default).count(free)
    every = gen_step("--mesh", "dp=2,tp=2")
    begin = "llvm.call @muon_rt_batch_begin("
    assert str(muon.parse(every).lower()).count(begin) > 0
    assert str(muon.parse(every).lower(batch_collectives=False)).count(
        begin) == 0
    with pytest.raises(muon.MuonError, match="maxPrefetchBytes must be 0"):
        muon.parse(step).lower(max_prefetch_bytes=-1)


def test_lower_defaults_are_the_pipelines():
    # Module.lower writes its defaults out (they show in help()); they must
    # be the C API's muonLLVMPipelineOptionsDefault(), field for field.
    import inspect
    from muon import _muon
    signature = inspect.signature(muon.Module.lower).parameters
    python = {name: p.default for name, p in signature.items()
              if name != "self"}
    pipeline = _muon.lower_defaults()
    assert python == pipeline
    # (True == 1 in Python: the types are compared too.)
    assert ({k: type(v) for k, v in python.items()} ==
            {k: type(v) for k, v in pipeline.items()})


def test_report_with_schedules_and_stacks():
    three = muon.parse(gen_step("--mesh", "dp=2,tp=2", "--only", "fsdp_tp"))
    text = three.report_text(schedules=True, ns_stack_bytes=4096)
    assert "schedule estimates (" in text and "owner path bound" in text
    assert "Newton-Schulz stacked up to 4096 bytes" in text
    (r,) = three.report(schedules=True, ns_stack_bytes=4096)
    assert r.schedule["ns_stack_bytes"] == 4096
    names = [e["schedule"] for e in r.schedule_estimates]
    assert "rounds+prefetch1" in names and r.lower_bound_us > 0
    assert r.owner_path_bound_us >= r.lower_bound_us
    (plain,) = three.report()
    assert plain.schedule_estimates is None and plain.lower_bound_us is None
    with pytest.raises(muon.MuonError, match="the report failed"):
        three.report(ns_stack_bytes=-1)


def test_report_and_plan():
    m = muon.parse(gen_step("--mesh", "dp=2,tp=2", "--only", "fsdp_tp"))
    text = m.report_text()
    assert "fsdp_tp.default" in text and "balance:" in text
    step = m.step()
    assert step.plan(0)[0].startswith("gather")
    assert any(s.startswith("newton_schulz") for s in step.plan(0))


def test_plan_needs_owners_and_a_parameter():
    step = muon.parse(STEP).step()
    with pytest.raises(muon.MuonError, match="has no owners"):
        step.plan(0)
    m = muon.parse(STEP)
    m.report_text()
    with pytest.raises(muon.MuonError, match="has no parameter 3"):
        m.step().plan(3)


def test_step_queries():
    m = muon.parse(gen_step("--mesh", "dp=2,tp=2"))
    step = m.step()
    names = step.param_names
    i = names.index("tiny")
    assert step.param_shape(i) == (3, 2)
    assert step.num_ranks == 4
    # uneven rows: 10 rows over dp=2 -> 5 + 5; tp replicates.
    j = names.index("uneven.rows")
    assert step.local_shard(j, "param", 3).shape == (5, 6)
    assert step.local_shard(j, "param", 3).offsets == (5, 0)
    # hsdp: the gradient is a partial average over dp.
    h = names.index("hsdp")
    assert step.partial_term(h, 2) == (1, 2, 0.5)
    assert step.partial_term(h, 1) == (0, 2, 0.5)
    # an expert of dp coordinate 1 lives on ranks 2 and 3 only.
    e = names.index("ep.expert")
    assert [step.holds(e, r) for r in range(4)] == [False, False, True, True]
    with pytest.raises(muon.MuonError, match="rank 4 is not a rank"):
        step.local_shard(j, "param", 4)
    with pytest.raises(muon.MuonError, match="unknown tensor kind 'weights'"):
        step.local_shard(j, "weights", 0)
    # whole storage: only the owner's coordinate stores the parameter.
    w = names.index("storage.whole")
    assert [step.holds(w, r) for r in range(4)] == [False, False, True, True]
    assert step.local_shard(w, "param", 0).shape == (0, 12)
    with pytest.raises(muon.MuonError, match="no parameter 99"):
        step.param_name(99)


GLOBAL_VIEW_STEP = """
func.func @step(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %m: tensor<8x4xf32>)
    -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %r:2 = muon.step params(%p : tensor<8x4xf32>) grads(%g : tensor<8x4xf32>)
                   momenta(%m : tensor<8x4xf32>) {lr = 0.02 : f64}
  return %r#0, %r#1 : tensor<8x4xf32>, tensor<8x4xf32>
}
"""


def test_a_global_view_step_has_no_shards_to_query():
    # Plain tensor operands carry no layout until convert-shard-to-dist:
    # every query that needs one fails with the step's diagnostic.
    step = muon.parse(GLOBAL_VIEW_STEP).step()
    assert step.num_params == 1
    for query in (lambda: step.num_ranks,
                  lambda: step.local_shard(0, "param", 0),
                  lambda: step.partial_term(0, 0),
                  lambda: step.holds(0, 0)):
        with pytest.raises(muon.MuonError, match="is a global-view step"):
            query()


def test_a_step_removed_by_a_pass_is_an_error_not_a_crash():
    # Passes change the module in place; a Step taken before the expansion
    # removed its op is refused on every query (it crashed the interpreter).
    m = muon.parse(STEP)
    step = m.step()
    m.run_passes("muon-assign-owners,muon-expand-step")
    assert m.steps == []
    for query in (lambda: step.num_params, lambda: step.num_ranks,
                  lambda: step.param_shape(0), lambda: step.param_names,
                  lambda: step.local_shard(0, "param", 0),
                  lambda: step.param_blocks(0), lambda: step.holds(0, 0),
                  lambda: step.partial_term(0, 0), lambda: step.plan(0)):
        with pytest.raises(muon.MuonError,
                           match="no longer has muon.step #0"):
            query()


def test_shards_check_the_full_and_piece_shapes():
    # 8x4 over dp = 2: rank 1 holds rows 4..7.
    piece = muon.parse(STEP).step().local_shard(0, "param", 1)
    assert piece.global_shape == (8, 4)
    full = np.arange(32, dtype=np.float32).reshape(8, 4)
    assert (piece.extract(full) == full[4:]).all()
    for bad in [(20, 4), (16, 8), (6, 6), (8,)]:
        with pytest.raises(muon.MuonError,
                           match=r"extract: the full tensor has shape "
                                 + re.escape(str(bad))):
            piece.extract(np.zeros(bad, np.float32))
    with pytest.raises(muon.MuonError, match=r"insert: the full tensor"):
        piece.insert(np.zeros((2, 2), np.float32), full[4:])
    for bad in [np.float32(7), np.ones((1, 4), np.float32),
                np.ones((4, 1), np.float32)]:
        with pytest.raises(muon.MuonError,
                           match=r"insert: the piece has shape .*, expected "
                                 r"shape \(4, 4\)"):
            piece.insert(full, bad)
    out = np.zeros((8, 4), np.float32)
    piece.insert(out, full[4:])
    assert (out[4:] == full[4:]).all() and not out[:4].any()


def test_muon_opt_reads_what_python_prints(tmp_path):
    m = muon.parse(STEP)
    path = tmp_path / "step.mlir"
    path.write_text(str(m))
    out = subprocess.run([muon_opt(), str(path)], check=True,
                         capture_output=True, text=True).stdout
    assert str(muon.parse(out)) == str(m)


def test_report_as_objects_and_frames():
    m = muon.parse(STEP)
    (r,) = m.report()
    assert (r.mesh, r.num_ranks, r.axes, r.strategy) == ("m", 2, ("dp",),
                                                        "round_robin")
    assert r.location == "<string>:4:10"
    (p,) = r.params
    # 8x4 over dp = 2, owner 0: NS = 5 * (4*4*4*8 + 2*4^3) FLOPs; rank 1
    # sends its 4x4 f32 half (64 B) to the owner and gets it back.
    assert (p.name, p.shape, p.owner, p.ns_flops) == ("w", (8, 4), 0, 3200)
    assert (p.gather_bytes, p.scatter_bytes, p.chain) == (64, 64, "dp(d0)")
    assert [x.coords for x in r.ranks] == [{"dp": 0}, {"dp": 1}]
    assert r.ranks[1].sent_bytes == 64 and r.ranks[1].params == 0
    assert r.schedule["rounds"] == 1 and r.schedule["kind"] == "rounds"
    # the owners the report assigned are in the module now
    assert "owners = array<i64: 0>" in str(m)
    # pandas is a test dependency (scripts/setup.sh): no skip without it.
    frame = r.ranks_frame()
    assert list(frame["dp"]) == [0, 1] and list(frame["params"]) == [1, 0]
    assert r.params_frame().loc[0, "chain"] == "dp(d0)"


def test_timeline_writes_a_chrome_trace(tmp_path):
    import json
    m = muon.parse(STEP)
    path = tmp_path / "t.json"
    m.timeline(path)
    events = json.loads(path.read_text())["traceEvents"]
    names = [(e["pid"], e["name"]) for e in events if e["ph"] == "X"]
    assert (0, "newton_schulz w") in names
    assert (1, "gather dp dim 0 root 0 w") in names
    assert not any(n.startswith("newton_schulz") for pid, n in names if pid)
    assert "owners" not in str(m)
    with pytest.raises(muon.MuonError, match="schedule"):
        m.timeline(path, schedule="fastest")
    # A path with a space; the stack bound reaches the pass.
    spaced = tmp_path / "a b" / "t.json"
    spaced.parent.mkdir()
    m.timeline(spaced, ns_stack_bytes=4096)
    assert json.loads(spaced.read_text())["traceEvents"]
    with pytest.raises(muon.MuonError, match="ns-stack-bytes"):
        m.timeline(path, ns_stack_bytes=-1)
    for bad in (tmp_path / 'q"uote.json', tmp_path / "b{race.json", ""):
        with pytest.raises(muon.MuonError, match="double quote or a brace"):
            m.timeline(bad)
    # Numbers are integers, never truncated or converted; the schedule is
    # one word (a space would start another pass option).
    for bad in ({"prefetch": 2.5}, {"prefetch": "2"}, {"prefetch": True},
                {"ns_stack_bytes": 2.7}):
        with pytest.raises(TypeError, match="must be an integer"):
            m.timeline(path, **bad)
    with pytest.raises(muon.MuonError, match="is not one of"):
        m.timeline(path, schedule="rounds prefetch=3")


def test_queries_take_integers_only():
    # nanobind takes a bool as an int: local_shard(0, "param", True) gave
    # rank 1's shard and param_shape(True) parameter 1's shape.
    step = muon.parse(STEP).step()
    for call in (lambda: step.local_shard(0, "param", True),
                 lambda: step.local_shard(0.0, "param", 0),
                 lambda: step.local_shard(0, "param", "1"),
                 lambda: step.param_shape(True),
                 lambda: step.param_name(0.0),
                 lambda: step.holds(1.0, 0),
                 lambda: step.partial_term(0, True),
                 lambda: step.plan(True),
                 lambda: step.local_shard(0, "param", np.True_)):
        with pytest.raises(TypeError, match="must be an integer"):
            call()
    m = muon.parse(STEP)
    for call in (lambda: m.clone().lower(ns_stack_bytes=True),
                 lambda: m.clone().lower(max_prefetch_bytes="5"),
                 lambda: m.clone().report_text(ns_stack_bytes=2.5),
                 lambda: m.clone().report(ns_stack_bytes="8")):
        with pytest.raises(TypeError, match="ns_stack_bytes|max_prefetch"):
            call()


def test_a_torch_bool_is_not_an_index():
    # torch.tensor(True).__index__() is 1: it gave rank 1's shard.
    torch = pytest.importorskip("torch")
    step = muon.parse(STEP).step()
    with pytest.raises(TypeError, match="rank must be an integer"):
        step.local_shard(0, "param", torch.tensor(True))
    with pytest.raises(TypeError, match="ns_stack_bytes must be an integer"):
        muon.parse(STEP).lower(ns_stack_bytes=torch.tensor(True))


def test_blocked_newton_schulz_is_visible():
    m = muon.parse('''
dist.mesh @m [dp = 2]
!t = !dist.tensor<32x12xf32, @m, [shard<0>]>
func.func @step(%p: !t, %g: !t, %m: !t, %q: !t, %h: !t, %n: !t) -> (!t, !t, !t, !t) {
  %r:4 = muon.step params(%p, %q : !t, !t) grads(%g, %h : !t, !t)
      momenta(%m, %n : !t, !t)
      {lr = 0.02 : f64, param_info = [#muon.param<"qkv", split = 0 [16, 8, 8]>,
                                      #muon.param<"w">]}
  return %r#0, %r#1, %r#2, %r#3 : !t, !t, !t, !t
}''')
    step = m.step()
    assert step.param_blocks(0) == (0, (16, 8, 8))
    assert step.param_blocks(1) is None
    with pytest.raises(muon.MuonError, match="no parameter 5"):
        step.param_blocks(5)
