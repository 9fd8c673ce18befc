"""Tile sizes measured per target (`polyhedral/tuned_sizes.py`, written by
`scripts/tune_tile_sizes.py`): the time-tiling and fused-tiling passes take them instead of
the cache model's for that target only, say so in their remark, refuse a class measured to
lose, and the tiles they give are bit-exact; the tuner reads the passes' remarks, keeps the
model unless a candidate wins by its margin, and rewrites only its part of the table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.polyhedral import tuned_sizes
from pycc_stencil.polyhedral.deps import compute_dependences
from pycc_stencil.polyhedral.schedule.fuse_tile import fuse_tile
from pycc_stencil.polyhedral.schedule.time_tile import time_tile
from pycc_stencil.polyhedral.scop import extract_scops
from test_tiling import assert_bit_exact, check_tiled, passed

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))
import tune_tile_sizes  # noqa: E402  (scripts/ is not a package)

JACOBI_2D = "kernel_jacobi_2d_vla"
BLUR_SHARPEN = SCRIPTS / "bench_kernels" / "blur_sharpen_f32.c"
PIPELINE_3 = "pipeline of 3 stages over 2-D, 16 bytes a point"  # in, bx, by, out: floats
CLASS_2D = "2-D, 16 bytes and 5 loads a point"  # A and B, doubles; the 5 points


def _entry(function: str) -> dict:
    return next(e for e in KERNELS if e["function"] == function)


def _outcome(function: str, tile_key: str, sizes: list[int] | None = None, shape="auto"):
    """`time-tile` on a corpus kernel (L1 48 KiB, L2 2 MiB)."""
    module = lower_file(f"{CORPUS_DIR}/{_entry(function)['file']}").module
    (scop,), _ = extract_scops(module.get_global(function), merge=False)
    deps = compute_dependences(scop)
    return time_tile(
        scop, deps, sizes or [], l2=2 << 20, l1=48 << 10, tile_key=tile_key, shape=shape
    )


def _remark(function: str, tile_key: str, sizes: list[int] | None = None) -> str:
    """The diamond remark of `time-tile` on a corpus kernel."""
    (done,) = _outcome(function, tile_key, sizes).done
    return done


def _sizes(remark: str) -> str:
    return remark.split(") of ")[1].split(",")[0]


@pytest.fixture
def measured(monkeypatch):
    """A table with one entry: 16x16x128 for 2-D stencils of 16 bytes a point on target
    "a-cpu"."""
    table = {"a-cpu": {CLASS_2D: {"sizes": [16, 16, 128], "model": [32, 32, 64]}}}
    monkeypatch.setattr(tuned_sizes, "TUNED", table)
    return table


def test_a_measured_entry_replaces_the_models_sizes_for_its_target_only(measured):
    remark = _remark(JACOBI_2D, "a-cpu")
    assert _sizes(remark) == "16x16x128", remark
    assert f"sizes measured for a-cpu ({CLASS_2D})" in remark
    other = _remark(JACOBI_2D, "another-cpu")
    assert _sizes(other) == "32x32x64", other
    assert f"sizes from the cache model for another-cpu ({CLASS_2D})" in other
    # another class of the same target: jacobi-1d's diamonds are the model's
    assert _sizes(_remark("kernel_jacobi_1d_vla", "a-cpu")) == "2048x2048"


def test_sizes_given_win_over_measured_ones(measured):
    remark = _remark(JACOBI_2D, "a-cpu", [8, 0, 24])
    assert _sizes(remark) == "8x8x24", remark
    assert "sizes measured" not in remark and "cache model" not in remark
    partly = _remark(JACOBI_2D, "a-cpu", [8])  # the innermost tile still the entry's
    assert _sizes(partly) == "8x8x128", partly


def test_where_tiles_lost_to_the_untiled_nest_the_default_tiles_nothing(monkeypatch):
    """An entry without sizes (the tuner timed the tiles slower than gcc's untiled code for
    the class on the target): `time-tile` and `time-tile-large` with default sizes refuse the
    nest, with the reason; sizes given or a shape forced still tile."""
    table = {"a-cpu": {CLASS_2D: {"sizes": None, "model": [32, 32, 64]}}}
    monkeypatch.setattr(tuned_sizes, "TUNED", table)
    outcome = _outcome(JACOBI_2D, "a-cpu")
    assert not outcome.changed
    (why,) = outcome.refused
    assert f"time tiles lost to the untiled code for {CLASS_2D} on a-cpu" in why
    assert _outcome(JACOBI_2D, "another-cpu").changed
    assert _outcome("kernel_jacobi_1d_vla", "a-cpu").changed  # another class
    assert _outcome(JACOBI_2D, "a-cpu", [8, 0, 24]).changed
    assert _outcome(JACOBI_2D, "a-cpu", shape="diamond").changed


def test_measured_sizes_give_bit_exact_tiles(monkeypatch):
    """Through `check` (the host target: its key is this machine's), odd sizes that divide
    nothing, the tiled code forced at any size."""
    key = host_target().tile_key()
    monkeypatch.setattr(tuned_sizes, "TUNED", {key: {CLASS_2D: {"sizes": [6, 6, 5]}}})
    entry = _entry(JACOBI_2D)
    result, remarks = check_tiled(
        f"{CORPUS_DIR}/{entry['file']}", JACOBI_2D, {"tsteps": 7, "n": 23}, "time-tile", fresh=True
    )
    assert_bit_exact(result, remarks, nonempty=True)
    (message,) = [m for m in passed(remarks) if m.startswith("time-tiled")]
    assert _sizes(message) == "6x6x5" and f"sizes measured for {key}" in message, message


def _fused(tile_key: str, sizes: list[int] | None = None):
    """`fuse-tile` on blur -> blur -> sharpen (L2 2 MiB)."""
    function = lower_file(str(BLUR_SHARPEN)).module.get_global("kernel_blur_sharpen_f32")
    (scop,), _ = extract_scops(function)
    return fuse_tile(scop, compute_dependences(scop), sizes or [], l2=2 << 20, tile_key=tile_key)


def test_fused_tiles_take_a_measured_strip_or_refuse_a_class_measured_to_lose(monkeypatch):
    (model,) = _fused("a-cpu").done
    assert (
        "(sizes 256)" in model and f"sizes from the cache model for a-cpu ({PIPELINE_3})" in model
    )
    table = {"a-cpu": {PIPELINE_3: {"sizes": [32], "model": [256]}}}
    monkeypatch.setattr(tuned_sizes, "TUNED", table)
    (done,) = _fused("a-cpu").done
    assert "(sizes 32)" in done and f"sizes measured for a-cpu ({PIPELINE_3})" in done
    (given,) = _fused("a-cpu", [8, 16]).done
    assert "(sizes 8x16)" in given and "sizes measured" not in given
    table["a-cpu"][PIPELINE_3]["sizes"] = None
    lost = _fused("a-cpu")
    assert not lost.changed
    assert f"fused tiles lost to the untiled code for {PIPELINE_3} on a-cpu" in lost.refused[0]
    assert _fused("another-cpu").changed and _fused("a-cpu", [16]).changed


def test_the_tuner_reads_the_passes_remarks(monkeypatch):
    """The tuner finds a kernel's class, model sizes and target key in the remarks of the
    passes themselves (a change of their wording must show here), also where the table
    already has the class (the model's sizes then come from the entry)."""
    cls = tune_tile_sizes.class_of_remarks([_remark(JACOBI_2D, "cpu, 512-bit vectors")])
    assert (cls.name, cls.key, cls.model, cls.tiling) == (
        CLASS_2D,
        "cpu, 512-bit vectors",
        [32, 32, 64],
        "time-tile-large",
    )
    (fused,) = _fused("cpu").done
    cls = tune_tile_sizes.class_of_remarks(["a remark of another pass", fused])
    assert (cls.name, cls.model, cls.tiling) == (PIPELINE_3, [256], "fuse-tile-large")
    table = {"cpu": {CLASS_2D: {"sizes": [16, 16, 128], "model": [32, 32, 64]}}}
    monkeypatch.setattr(tuned_sizes, "TUNED", table)
    cls = tune_tile_sizes.class_of_remarks([_remark(JACOBI_2D, "cpu")])
    assert (cls.name, cls.model) == (CLASS_2D, [32, 32, 64])
    table["cpu"][CLASS_2D]["sizes"] = None
    (lost,) = _outcome(JACOBI_2D, "cpu").refused
    cls = tune_tile_sizes.class_of_remarks([lost])
    assert (cls.name, cls.model, cls.tiling) == (CLASS_2D, [32, 32, 64], "time-tile-large")


@pytest.mark.parametrize(
    "against, lost",
    [
        ({"tiling": 1.8, "l3": 1.1}, False),
        ({"tiling": 1.1, "l3": 0.97}, False),  # within the margin
        ({"tiling": 1.1, "l3": 0.85}, True),  # box-3d27 on the Xeon guest
        ({"tiling": None, "l3": 1.2}, False),  # not measured: no verdict
    ],
)
def test_the_tuner_says_no_tiles_where_they_lose_to_gcc_at_a_size(against, lost):
    assert tune_tile_sizes.loses(against, 0.05) is lost


def test_the_tuner_tries_sizes_around_the_models_and_the_model_first():
    two = tune_tile_sizes.StencilClass(CLASS_2D, "k", [32, 32, 64]).candidates()
    assert two[0] == [32, 32, 64] and len(two) == 12
    assert [16, 16, 32] in two and [64, 64, 128] in two and [32, 32, 16] in two
    three = tune_tile_sizes.StencilClass("3-D", "k", [8, 8, 16, 256]).candidates()
    assert [4, 4, 8, 256] in three and [16, 16, 32, 256] in three and len(three) == 12
    assert [8, 8, 4, 256] in three and [16, 16, 4, 256] in three
    one = tune_tile_sizes.StencilClass("1-D", "k", [2048, 2048]).candidates()
    assert one == [[2048, 2048], [512, 512], [1024, 1024], [4096, 4096], [8192, 8192]]
    strips = tune_tile_sizes.StencilClass(PIPELINE_3, "k", [256], "fuse-tile-large")
    assert strips.candidates() == [[256], [16], [32], [64], [128], [512]]
    assert strips.pipeline([32]) == "fuse-tile-large(32)"


@pytest.mark.parametrize(
    "ratios, chosen",
    [
        ({0: 1.0, 1: 0.97, 2: 1.1}, None),  # 3 % faster: within the margin, the model stays
        ({0: 1.0, 1: 0.94, 2: 0.90}, 2),  # the fastest
        ({0: 1.0, 1: None, 2: 0.99}, None),  # a wrong or failed candidate is none
        ({0: 1.0}, None),
    ],
)
def test_the_tuner_keeps_the_model_unless_a_candidate_wins_by_the_margin(ratios, chosen):
    assert tune_tile_sizes.choose(ratios, 0.05) == chosen


def test_the_tuner_rewrites_only_the_table_of_the_module():
    text = tune_tile_sizes.TABLE.read_text()
    table = {
        "cpu, 512-bit vectors, L1 49152, L2 2097152": {
            CLASS_2D: {"sizes": [16, 16, 128], "model": [32, 32, 64], "speedup": 1.1},
            "3-D, 16 bytes and 7 loads a point": {"sizes": [8, 8, 8, 256], "kernels": ["heat-3d"]},
            "3-D, 16 bytes and 27 loads a point": {"sizes": None, "against_gcc": {"l3": 0.85}},
        }
    }
    written = tune_tile_sizes.write_table(text, table)
    assert tune_tile_sizes.read_table(written) == table
    assert tune_tile_sizes.read_table(tune_tile_sizes.write_table(written, {})) == {}
    outside = [written.split(tune_tile_sizes.BEGIN)[0], written.split(tune_tile_sizes.END)[1]]
    assert outside == [text.split(tune_tile_sizes.BEGIN)[0], text.split(tune_tile_sizes.END)[1]]
    namespace: dict = {}
    exec(compile(written, "tuned_sizes.py", "exec"), namespace)  # the module still loads
    assert namespace["TUNED"] == table
