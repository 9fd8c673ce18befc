"""`tune`: the search's stopping rules on made-up costs, the Hexagon oracle on real compiled
kernels, the C66x model against Table 5.1, host costs, and the command line."""

from __future__ import annotations

import json
import os
import re

import pytest
from corpus.manifest import CORPUS_DIR
from corpus_check import assert_fired, check, passed_by
from pycc_stencil.cli import main
from pycc_stencil.emit import hexagon, x86_cost
from pycc_stencil.emit.c66x_model import c66x_loops
from pycc_stencil.emit.targets import host_target, target_from_spec
from pycc_stencil.executor import InProcess
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.target import Cost
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.strategy import (
    CONVERGED,
    PIPELINING_LOST,
    REGISTERS,
    SearchOptions,
    Strategy,
    StrategyFailed,
    search,
)
from pycc_stencil.ir_passes.tuning import Tuner, tune_module, vector_widths
from pycc_stencil.runtime.footprint import FootprintProbe
from pycc_stencil.tune_remote import tune_on

HOST = host_target()

C66X = os.path.join(CORPUS_DIR, "c66x")


def _table(entries):
    """evaluate() over {(vf, uf): Cost or exception message}, recording what was asked."""
    asked = []

    def evaluate(strategy: Strategy) -> Cost:
        asked.append((strategy.vf, strategy.uf))
        value = entries[(strategy.vf, strategy.uf)]
        if isinstance(value, str):
            raise StrategyFailed(value)
        return value

    return evaluate, asked


def _cost(ii, registers=10, pipelined=True, instructions=10, exceeded=False):
    return Cost(ii, registers, pipelined, instructions, exceeded)


def test_rule1_stops_after_eps_ufs_without_gain_past_min_unroll():
    costs = {(1, u): _cost(ii) for u, ii in enumerate([4, 3, 3, 3, 2, 2, 2, 2], 1)}
    evaluate, asked = _table(costs)
    result = search(evaluate, [1], SearchOptions(max_unroll=8, min_unroll=1, eps=2))
    assert asked == [(1, 1), (1, 2), (1, 3), (1, 4)]
    assert result.trials[-1].stop == CONVERGED
    assert result.best.strategy == Strategy(2, 1)
    # a larger UF_min keeps searching through the plateau and finds II 2 at UF 5
    evaluate, asked = _table(costs)
    result = search(evaluate, [1], SearchOptions(max_unroll=8, min_unroll=7, eps=2))
    assert asked == [(1, u) for u in range(1, 8)]
    assert result.best.strategy == Strategy(5, 1)


def test_rule2_stops_a_width_when_registers_run_out_and_goes_on_with_the_next():
    costs = {
        (1, 1): _cost(4),
        (1, 2): _cost(3),
        (1, 3): _cost(1, exceeded=True),
        (2, 1): _cost(2.5),
        (2, 2): _cost(2, registers=70, exceeded=True),
    }
    evaluate, asked = _table(costs)
    result = search(evaluate, [1, 2], SearchOptions(max_unroll=8, eps=3))
    assert asked == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2)]
    assert [t.stop for t in result.trials] == [None, None, REGISTERS, None, REGISTERS]
    assert result.best.strategy == Strategy(1, 2)  # the II 1 and II 2 loops do not fit


def test_the_baseline_stays_a_candidate_when_it_already_spills():
    evaluate, asked = _table({(1, 1): _cost(30, exceeded=True), (2, 1): _cost(40, exceeded=True)})
    result = search(evaluate, [1, 2])
    assert asked == [(1, 1), (2, 1)]
    assert result.best.strategy == Strategy(1, 1)


def test_rule3_stops_when_pipelining_is_lost_but_not_if_it_never_was():
    costs = {
        (1, 1): _cost(3),
        (1, 2): _cost(1, pipelined=False),
        (2, 1): _cost(5, pipelined=False),
        (2, 2): _cost(4, pipelined=False),
        (2, 3): _cost(3.5, pipelined=False),
    }
    evaluate, asked = _table(costs)
    result = search(evaluate, [1, 2], SearchOptions(max_unroll=3, eps=2))
    assert asked == [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3)]
    assert result.trials[1].stop == PIPELINING_LOST
    assert result.best.strategy == Strategy(1, 1)


def test_failed_strategies_are_recorded_and_ties_go_to_the_smaller_loop():
    costs = {
        (1, 1): _cost(2, instructions=9),
        (1, 2): "loop not unrolled: trip count unknown",
        (1, 3): _cost(2, instructions=30),
        (2, 1): _cost(2, instructions=5),
        (2, 2): _cost(2, instructions=8),
        (2, 3): _cost(2, instructions=12),
    }
    evaluate, _ = _table(costs)
    result = search(evaluate, [1, 2], SearchOptions(max_unroll=3, eps=2))
    assert result.trials[1].error == "loop not unrolled: trip count unknown"
    assert result.best.strategy == Strategy(1, 2)
    assert result.best.strategy.pipeline == "simd(2)"
    again = search(_table(costs)[0], [1, 2], SearchOptions(max_unroll=3, eps=2))
    assert [(t.strategy, t.cost, t.stop) for t in again.trials] == [
        (t.strategy, t.cost, t.stop) for t in result.trials
    ]


def test_strategy_pipelines():
    assert Strategy(4).pipeline == "unroll(4)"
    assert Strategy(1, 8).pipeline == "simd(8)"
    assert Strategy(2, 8, align=True).pipeline == "unroll(16),simd(8),align"


MATRIX_ADD_RESTRICT = """
void MatrixAdd(float *restrict a, float *restrict b, int size_x, int size_y, float *restrict c) {
  for (int i = 0; i < size_y; ++i)
    for (int j = 0; j < size_x; ++j)
      c[i * size_x + j] = a[i * size_x + j] + b[i * size_x + j];
}
"""


def _module(path, pipeline=""):
    return run_passes(lower_file(str(path)).module, parse_pipeline(pipeline), target=HOST).module


def test_hexagon_pipelined_loop_has_a_prologue_and_ii_packets(tmp_path):
    path = tmp_path / "add.c"
    path.write_text(MATRIX_ADD_RESTRICT)
    assembly, remarks = hexagon.compile_to_assembly(_module(path))
    (loop,) = hexagon.analyze(assembly, remarks).values()
    assert loop.pipelined
    assert loop.packets in hexagon.successful_schedules(remarks)
    assert loop.instructions >= 4 and loop.registers > 0 and not loop.registers_exceeded
    # the pipeliner's prologue: the first loads are issued before the hardware loop starts
    lines = assembly.splitlines()
    setup = next(i for i, line in enumerate(lines) if "loop0(" in line)
    header = next(i for i, line in enumerate(lines) if "Inner Loop Header" in line)
    assert any("memw(" in line and "=" in line for line in lines[setup - 4 : header])


@pytest.mark.parametrize("kernel", ["jacobi.c", "gaussian_x7.c", "sobel.c"])
@pytest.mark.parametrize("factor", [1, 2])
def test_hexagon_reads_ii_instructions_and_registers_of_corpus_kernels(kernel, factor):
    assembly, remarks = hexagon.compile_to_assembly(
        _module(os.path.join(C66X, kernel), f"unroll({factor})")
    )
    (loop,) = hexagon.analyze(assembly, remarks).values()
    assert loop.packets > 0 and loop.instructions >= loop.packets // 4
    assert 0 < loop.registers <= 32
    # consistency: a loop is pipelined iff the pipeliner reported a schedule of its length
    assert loop.pipelined == (loop.packets in hexagon.successful_schedules(remarks))
    if loop.pipelined:
        assert ":endloop0" in assembly


TABLE_5_1_BASELINE = {
    "matrix_add.c": 2,
    "mean_filter_1x3.c": 2,
    "mean_filter_3x3.c": 5,
    "jacobi.c": 3,
    "gaussian_x7.c": 4,
    "sobel.c": 5,
    "lucas_kanade.c": 15,
}


@pytest.mark.parametrize("kernel, ii", TABLE_5_1_BASELINE.items())
def test_c66x_model_reproduces_table_5_1_baselines(kernel, ii):
    (loop,) = c66x_loops(_module(os.path.join(C66X, kernel))).values()
    assert loop.pipelined
    assert loop.cycles == ii


def test_c66x_model_harris_is_the_documented_deviation():
    (loop,) = c66x_loops(_module(os.path.join(C66X, "harris_corner.c"))).values()
    assert loop.cycles == 10  # .D-bound (19 accesses); the paper reports 27


def test_c66x_model_predicts_jacobi_unrolled_twice():
    (loop,) = c66x_loops(_module(os.path.join(C66X, "jacobi.c"), "unroll(2)")).values()
    assert loop.cycles / 2 == 2.5


MATRIX_ADD_SIMD2 = """
define void @MatrixAddSimd(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pa = getelementptr float, ptr %a, i64 %i
  %pb = getelementptr float, ptr %b, i64 %i
  %pc = getelementptr float, ptr %c, i64 %i
  %va = load <2 x float>, ptr %pa, align ALIGN
  %vb = load <2 x float>, ptr %pb, align ALIGN
  %sum = fadd <2 x float> %va, %vb
  store <2 x float> %sum, ptr %pc, align ALIGN
  %next = add i64 %i, 2
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
"""


@pytest.mark.parametrize("alignment, ii", [(4, 1.5), (8, 1.0)])
def test_c66x_model_predicts_matrix_add_simd_binding(alignment, ii):
    """Unroll 2x + SIMD binding (Algorithm 3): 2 loads + 1 store of 64 bits per 2 iterations;
    non-aligned (LDNDW/STNDW, Table 5.1's 1.5) or proven aligned (LDDW/STDW, Fig. 5.10)."""
    loop = c66x_loops(MATRIX_ADD_SIMD2.replace("ALIGN", str(alignment)))["MatrixAddSimd"]
    assert loop.d_ops == 3
    assert loop.cycles / 2 == ii


def test_c66x_search_picks_baseline_for_1x3_and_gaussian(capsys):
    for kernel in ("mean_filter_1x3.c", "gaussian_x7.c"):
        assert main(["tune", os.path.join(C66X, kernel), "--target", "c66x", "--json"]) == 0
        (kernel_result,) = json.loads(capsys.readouterr().out)["kernels"]
        if kernel == "mean_filter_1x3.c":
            assert kernel_result["chosen"] == "unroll(1)"
        assert kernel_result["trials"][0]["ii"] == TABLE_5_1_BASELINE[kernel]


def test_host_cost_model_without_llvm_mca():
    assembly = x86_cost.compile_to_assembly(_module(os.path.join(C66X, "jacobi.c")))
    (loop,) = x86_cost.analyze(assembly, use_mca=False).values()
    assert loop.source == "model"
    assert loop.cycles >= loop.instructions / 4 > 0
    assert loop.registers > 0 and loop.spills == 0


@pytest.mark.skipif(x86_cost.llvm_mca() is None, reason="llvm-mca is not installed")
def test_host_cycles_from_llvm_mca_fall_with_unrolling():
    one = x86_cost.host_loops(_module(os.path.join(C66X, "matrix_add.c")))
    four = x86_cost.host_loops(_module(os.path.join(C66X, "matrix_add.c"), "unroll(4)"))
    assert one["MatrixAdd"].source == "llvm-mca"
    assert 0 < four["MatrixAdd"].cycles / 4 < one["MatrixAdd"].cycles


@pytest.mark.parametrize("target", ["c66x", "hexagon"])
def test_tune_prints_a_table_and_the_choice(target, capsys):
    path = os.path.join(C66X, "matrix_add.c")
    assert main(["tune", path, "--target", target, "--max-unroll", "3"]) == 0
    out = capsys.readouterr().out
    assert "unroll(1)" in out and "unroll(2)" in out
    if target == "c66x":  # T7: Unroll 2x + SIMD binding, II 1.5 (ties unroll(2), fewer ops)
        assert "chosen MatrixAdd: simd(2) (1.5 II/iter)" in out
    else:
        assert "chosen MatrixAdd: " in out


def test_declared_row_alignment_adds_align_and_the_c66x_model_sees_aligned_vectors(
    tmp_path, capsys
):
    """Fig. 5.10: with `row_align(8)` MatrixAdd's 64-bit accesses are LDDW/STDW (II 1.0)."""
    source = open(os.path.join(C66X, "matrix_add.c")).read()
    path = tmp_path / "aligned.c"
    path.write_text(source.replace("void MatrixAdd", "#pragma pycc row_align(8)\nvoid MatrixAdd"))
    assert main(["tune", str(path), "--target", "c66x", "--max-unroll", "2", "--json"]) == 0
    (kernel,) = json.loads(capsys.readouterr().out)["kernels"]
    assert all(t["strategy"].endswith(",align") for t in kernel["trials"])
    iis = {t["strategy"]: t["ii"] for t in kernel["trials"]}
    assert iis["simd(2),align"] == 1.0  # the paper's "Unroll 2x + SIMD", aligned
    # two 2-wide vectors per iteration share the loop's branch
    assert kernel["chosen"] == "unroll(4),simd(2),align" and kernel["ii"] == 0.75


def test_tune_json(capsys):
    path = os.path.join(C66X, "jacobi.c")
    assert main(["tune", path, "--target", "c66x", "--json", "--eps", "1"]) == 0
    (kernel,) = json.loads(capsys.readouterr().out)["kernels"]
    assert kernel["function"] == "Jacobi" and kernel["chosen"] in ("unroll(2)", "simd(2)")
    assert kernel["ii"] == 2.5
    assert kernel["trials"][2]["strategy"] == "unroll(3)"
    assert kernel["trials"][2]["stop"] == CONVERGED


def test_tune_on_workers_measures_in_rounds_and_chooses_what_tune_alone_does():
    """Each round measures the next eps + 1 unroll factors of every width still searched:
    several tasks at once, the same trials and choice as alone, at most eps per width more."""
    path, options = os.path.join(C66X, "jacobi.c"), SearchOptions(eps=1)
    module, target = lower_file(path, []).module, target_from_spec("c66x")
    rounds = []

    class Recording(InProcess):
        def run(self, function, work):
            rounds.append([task[3] for task in work.values()])
            yield from super().run(function, work)

    (remote,) = tune_on(Recording(), Tuner(module, target), path, [], ["Jacobi"], options)
    assert [remote] == tune_module(module, ["Jacobi"], target, options)
    widths = vector_widths(target, module.get_global("Jacobi"))
    assert len(widths) > 1 and len(rounds[0]) == 2 * len(widths)  # UF 1 and 2 of each
    measured = [s for batch in rounds for s in batch]
    tried = [t.strategy for t in remote.result.trials]
    assert set(tried) <= set(measured) and len(measured) == len(set(measured))
    assert len(measured) <= len(tried) + options.eps * len(widths)
    assert len(rounds) < len(tried)  # fewer rounds than measurements one by one


def test_tune_jobs_gives_what_tune_alone_gives(capsys):
    args = ["tune", os.path.join(C66X, "jacobi.c"), "--target", "c66x", "--json", "--eps", "1"]
    assert main(args) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main([*args, "--jobs", "2"]) == 0  # two local processes
    assert json.loads(capsys.readouterr().out) == alone


def test_tune_bad_input_gets_a_compiler_error(tmp_path, capsys):
    assert main(["tune", str(tmp_path / "missing.c")]) == 1
    assert "error: no such file or directory" in capsys.readouterr().err
    assert main(["tune", os.path.join(C66X, "jacobi.c"), "--target", "hls"]) == 1
    assert "target hls has no cost model for loops: tune needs one" in capsys.readouterr().err
    assert main(["tune", os.path.join(C66X, "jacobi.c"), "--target", "tpu"]) == 1
    valid = "valid: host, aie, c, c66x, hexagon, hls"
    assert f"unknown target 'tpu' ({valid})" in capsys.readouterr().err
    assert main(["tune", os.path.join(C66X, "jacobi.c"), "--function", "nope"]) == 1
    assert "error: no function 'nope'" in capsys.readouterr().err
    bad = tmp_path / "bad.c"
    bad.write_text("void f(int n) { for (;;) n++ }\n")
    assert main(["tune", str(bad)]) == 1
    assert "bad.c:1:" in capsys.readouterr().err


AUTO_CASES = [
    ("c66x/jacobi.c", "Jacobi", {"size_x": 37, "size_y": 23}),
    ("c66x/mean_filter_1x3.c", "MeanFilter1x3", {"size_x": 3, "size_y": 5}),
    pytest.param("c66x/sobel.c", "Sobel", {"size_x": 31, "size_y": 7}, marks=pytest.mark.sweep),
    ("polybench/jacobi_1d_vla.c", "kernel_jacobi_1d_vla", {}),
]


@pytest.mark.parametrize(
    "file, function, params", AUTO_CASES, ids=["Jacobi", "MeanFilter1x3", "Sobel", "jacobi_1d"]
)
def test_passes_auto_is_bit_exact(file, function, params):
    """Bit-exact, and auto did what its remarks say: the iterated stencil time-tiled for
    data beyond the L2 cache; each other kernel tuned for the host and the chosen pipeline
    applied (each of its passes fired), or kept as LLVM vectorizes it better (which choice
    depends on the host CPU's costs; a choice there must be)."""
    result, remarks = check(os.path.join(CORPUS_DIR, file), function, params, "auto")
    assert result.status == "OK", str(result)
    assert result.changed, f"{result}: the run changed nothing"
    if file.startswith("polybench/"):
        assert any(m.startswith("time-tiled") for m in passed_by(remarks, "time-tile-large"))
        return
    (choice,) = [r.message for r in remarks if r.pass_name == "auto" and r.kind == "analysis"]
    applied = passed_by(remarks, "auto")
    if choice.startswith("kept the original loop: "):
        assert not applied, remarks
        return
    chosen = re.match(r"tuned for the host: (\S+) \(", choice).group(1)
    if chosen != "unroll(1)":
        assert applied == [f"applied {chosen}"], remarks
        assert_fired(remarks, chosen)


def test_passes_auto_applies_the_host_choice_or_keeps_the_original_loop(tmp_path):
    for kernel in ("matrix_add.c", "lucas_kanade.c"):  # usually tuned here; usually kept
        lowered = lower_file(os.path.join(C66X, kernel))
        applied = run_passes(lowered.module, parse_pipeline("auto"), verify=True, target=HOST)
        messages = [r.message for r in applied.remarks if r.pass_name == "auto"]
        unrolled = [
            r for r in applied.remarks if r.pass_name in ("unroll", "simd") and r.kind == "passed"
        ]
        if messages[0].startswith("kept the original loop:"):
            assert len(messages) == 1 and not unrolled
            continue
        assert messages[0].startswith("tuned for the host: ")
        chosen = messages[0].split(": ", 1)[1].split(" (")[0]
        if chosen != "unroll(1)":
            assert messages[1] == f"applied {chosen}" and unrolled
    # printed modules (check, emit and the verifier print them) still tune and unroll
    printed = lower_file(os.path.join(C66X, "sobel.c")).module
    str(printed)
    run_passes(printed, parse_pipeline("loop-info,auto"), verify=True, target=HOST)


def test_tune_host_time_confirms_with_jit_timing(capsys):
    path = os.path.join(C66X, "matrix_add.c")
    args = ["tune", path, "--max-unroll", "2", "--time", "--param", "size_x=64"]
    assert main(args) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("JIT timing: unroll(1) ") and " ms" in line
    assert main(["tune", path, "--target", "c66x", "--time"]) == 1
    assert "--time measures the host" in capsys.readouterr().err


def test_a_run_too_large_to_size_is_not_timed_and_says_why(monkeypatch, capsys):
    """`--time` with sizes whose footprint dry run gives up (its access budget made small
    here, as 10^8-element sizes exhaust the real one): a line, not an internal error."""
    budget, timeout, home = FootprintProbe.__init__.__defaults__
    monkeypatch.setattr(FootprintProbe.__init__, "__defaults__", (1000, timeout, home))
    path = os.path.join(C66X, "matrix_add.c")
    assert main(["tune", path, "--max-unroll", "2", "--time", "--param", "size_x=97"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "not timed: " in line and "stopped after 1000 memory accesses" in line, line
