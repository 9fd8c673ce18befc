"""`fuse-tile(s1,s2)`: tiling after fusion of loop-nest pipelines, bit-exact against cc.

The pipelines: the 3-stage blur x -> blur y -> sharpen benchmark kernel, a 4-stage unsharp
mask (without the threshold branch, which makes its last nest non-affine; the benchmark's
version with it fuses the three nests before), a Harris-like
pipeline (two stages writing two and three arrays), a point-wise pipeline (tiles independent,
run in parallel); sizes not divisible by the tiles, smaller than one tile, prime; tile sizes
from 1 to beyond the image; tiles in reversed and shuffled order; intermediates pre-filled
with NaN; illegal requests refused with the output still bit-exact.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import islpy as isl
import numpy as np
import pytest
from corpus_check import check, compiled, in_child, kernel_group, passed_by, sweep_if
from pycc_stencil.emit.cc_machine import cache_model
from pycc_stencil.frontend import lower_file
from pycc_stencil.polyhedral.deps import compute_dependences
from pycc_stencil.polyhedral.schedule.fuse_tile import fuse_tile
from pycc_stencil.polyhedral.scop import extract_scops
from pycc_stencil.runtime.compare import Tolerance, equal_elements
from test_compiler_mode import clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
BLUR_SHARPEN = os.path.join(HERE, "..", "scripts", "bench_kernels", "blur_sharpen_f32.c")
UNSHARP_BENCH = os.path.join(HERE, "..", "scripts", "bench_kernels", "unsharp_f32.c")


def pipeline(name: str) -> str:
    return os.path.join(HERE, "corpus", "pipelines", f"{name}.c")


KERNELS = [
    (BLUR_SHARPEN, "kernel_blur_sharpen_f32", 3),
    (pipeline("unsharp4"), "unsharp4", 4),
    (pipeline("harris"), "harris", 3),
]
#: (h, w, pipeline): every tile shape on a prime size, sizes smaller than one tile and than
#: the halo, a larger image with tiles that do not divide it
CASES = [
    *((23, 19, t) for t in ("fuse-tile(1,1)", "fuse-tile(4,5)", "fuse-tile(3)", "fuse-tile")),
    *(
        (h, w, t)
        for h, w in ((7, 5), (5, 6), (3, 4))
        for t in ("fuse-tile(2,3)", "fuse-tile(64,100)")
    ),
    (37, 41, "fuse-tile(8,16)"),
]


def _check(path: str, function: str, params: dict, passes: str):
    """check of `function` on the compile of (file, pipeline) made once (corpus_check), and
    the remarks about it (not about the functions outlined from it)."""
    result, remarks = check(path, function, params, passes)
    return result, [r for r in remarks if r.function == function]


def _grouped(cases, at: int):
    """pytest params of `cases`, each on the worker of the file at index `at`."""
    return [
        pytest.param(*c, marks=kernel_group(os.path.basename(c[at])[:-2]), id=c[at + 1])
        for c in cases
    ]


def _fused_cases():
    """Every case on every kernel; of the seven pipelines, a kernel keeps every other one
    (rotating: each pipeline meets one or two of the three kernels, on all its sizes), the
    others are sweeps (docs/testing.md)."""
    pipelines = list(dict.fromkeys(passes for _, _, passes in CASES))
    for k, (path, function, stages) in enumerate(KERNELS):
        group = kernel_group(os.path.basename(path)[:-2])
        for h, w, passes in CASES:
            sweep = (pipelines.index(passes) + k) % 2 == 1
            yield pytest.param(
                path, function, stages, h, w, passes,
                id=f"{h}-{w}-{passes}-{function}", marks=[group, *sweep_if(sweep)],
            )  # fmt: skip


@pytest.mark.parametrize("path, function, stages, h, w, passes", list(_fused_cases()))
def test_fused_pipeline_is_bit_exact(path, function, stages, h, w, passes):
    result, remarks = _check(path, function, {"h": h, "w": w}, passes)
    assert result.status == "OK", str(result)
    assert result.changed or min(h, w) < 5, f"{result}: the run changed nothing"
    passed = [r.message for r in remarks if r.kind == "passed"]
    assert len(passed) == 1 and passed[0].startswith(
        f"fused {stages} loop nests into tiles (sizes "
    )


@pytest.mark.parametrize("passes", ["fuse-tile(1)", "fuse-tile(5)", "fuse-tile"])
@pytest.mark.parametrize(
    "function, params",
    [
        pytest.param("one_d", {"n": 41}, id="one_d-41", marks=kernel_group("one_d")),
        pytest.param("one_d", {"n": 6}, id="one_d-6", marks=kernel_group("one_d")),
        pytest.param("side", {"h": 13, "w": 11}, id="side", marks=kernel_group("side")),
    ],
)
def test_one_d_pipeline_and_unread_side_output(function, params, passes):
    """A 1-D pipeline; a stage no tile needs (its output is never read) runs after the
    tiles and still writes its caller-visible array."""
    result, remarks = _check(pipeline(function), function, params, passes)
    assert result.status == "OK", str(result)
    assert [r.message[:29] for r in remarks] == ["fused 3 loop nests into tiles"]


ORDERED = [
    # point-wise stages: no two tiles write one element
    (pipeline("pointwise"), "pointwise", "fuse-tile(4,8)", "rows of tiles in parallel"),
    # halos: rows of tiles t0 and t0 + 1 write common elements, t0 and t0 + 2 do not
    (pipeline("harris"), "harris", "fuse-tile(4,8)", "in 2 colours (their halos overlap)"),
    # bx of a row of 4-row tiles: 8 rows; of 3-row tiles: 7 rows (t0 + 2 still overlaps)
    (BLUR_SHARPEN, "kernel_blur_sharpen_f32", "fuse-tile(4,64)", "in 2 colours"),
    (BLUR_SHARPEN, "kernel_blur_sharpen_f32", "fuse-tile(3,64)", "in 3 colours"),
    # one-row tiles, halos of two rows: too close to colour
    (BLUR_SHARPEN, "kernel_blur_sharpen_f32", "fuse-tile(1,4)", "tiles run serially"),
]


#: ORDERED as pytest params, each on the worker of its file (which compiles it once)
ORDERED_PARAMS = [
    pytest.param(*o, id=o[2], marks=kernel_group(os.path.basename(o[0])[:-2])) for o in ORDERED
]


@pytest.mark.parametrize("order", ["reverse", "shuffle:3", "shuffle:11"])
@pytest.mark.parametrize("path, function, passes, how", ORDERED_PARAMS)
def test_tile_order_does_not_matter(monkeypatch, path, function, passes, how, order):
    monkeypatch.setenv("PYCC_PARALLEL_ORDER", order)
    result, remarks = _check(path, function, {"h": 29, "w": 31}, passes)
    assert result.status == "OK", str(result)
    (passed,) = [r.message for r in remarks if r.kind == "passed"]
    assert how in passed


@pytest.mark.parametrize("path, function, passes, how", ORDERED_PARAMS)
def test_parallel_tiles_on_two_threads(monkeypatch, path, function, passes, how):
    monkeypatch.setenv("PYCC_NUM_THREADS", "2")
    result, remarks = _check(path, function, {"h": 61, "w": 47}, passes)
    assert result.status == "OK", str(result)
    assert result.changed, f"{result}: the run changed nothing"
    (done,) = passed_by(remarks, "fuse-tile")
    assert how in done, done


@pytest.mark.parametrize(
    "function, reason",
    [
        ("in_place", "loop nest 2 updates b in place (reads what it writes)"),
        ("overwrites", "an array element is written more than once"),
        ("reads_later_write", "loop nest 1 reads a, which a later loop nest (2) writes"),
        ("independent", "no loop nest reads what an earlier one writes: nothing to fuse"),
    ],
)
def test_impure_pipelines_are_refused(function, reason):
    result, remarks = _check(pipeline(function), function, {"h": 13, "w": 17}, "fuse-tile(4,4)")
    assert result.status == "OK", str(result)
    assert [r.message for r in remarks if r.kind == "passed"] == []
    assert [r.message for r in remarks if r.kind == "missed"] == [f"refused: {reason}"]


def test_too_many_tile_sizes_and_single_nests_are_refused():
    result, remarks = _check(pipeline("harris"), "harris", {"h": 11, "w": 9}, "fuse-tile(2,2,2)")
    assert result.status == "OK", str(result)
    assert [r.message for r in remarks] == [
        "refused: the live-out loop nest is 2 deep, shallower than the 3 tile sizes"
    ]


@pytest.mark.parametrize(
    "h, w, passes", [(11, 9, "fuse-tile"), (37, 53, "fuse-tile(8)"), (5, 7, "fuse-tile(3)")]
)
def test_the_affine_nests_before_a_branching_one_are_fused(h, w, passes):
    """The unsharp benchmark's last nest branches (not a SCoP): the three nests before it
    are one SCoP, fused; the last runs as written."""
    result, remarks = _check(UNSHARP_BENCH, "kernel_unsharp_f32", {"h": h, "w": w}, passes)
    assert result.status == "OK", str(result)
    assert [r.message for r in remarks if r.kind == "missed"] == [
        "loop nest is not a SCoP: condition in the loop body"
    ]
    (done,) = [r.message for r in remarks if r.kind == "passed"]
    assert done.startswith("fused 3 loop nests into tiles")


def _nan_run(function, h: int, w: int, arrays: int) -> list[np.ndarray]:
    """`function(h, w, image, *arrays)` (a ctypes function) with every array pre-filled with
    NaN: the arrays after the call."""
    rng = np.random.default_rng(5)
    image = rng.uniform(0.5, 2.0, (h, w)).astype(np.float32)
    buffers = [np.full((h, w), np.nan, dtype=np.float32) for _ in range(arrays)]
    function(h, w, image.ctypes.data, *(b.ctypes.data for b in buffers))
    return buffers


NAN_PIPELINES = [
    (pipeline("unsharp4"), "unsharp4", 4),
    (pipeline("harris"), "harris", 6),
    (BLUR_SHARPEN, "kernel_blur_sharpen_f32", 3),
]


@pytest.mark.parametrize("path, function, arrays", _grouped(NAN_PIPELINES, 0))
@pytest.mark.parametrize("passes", ["fuse-tile(4,5)", "fuse-tile(1,3)", "fuse-tile(16,16)"])
@pytest.mark.parametrize("h, w", [(23, 19), (6, 7)])
def test_intermediates_prefilled_with_nan(path, function, arrays, passes, h, w):
    """A producer value a tile reads but did not compute would be a NaN in the output: the
    fused code leaves what cc's build of the C leaves (NaN where neither writes, the same
    bits elsewhere), and the output's interior is computed."""
    unit = compiled(path, [], passes)
    (done,) = passed_by([r for r in unit.remarks if r.function == function], "fuse-tile")
    assert done.startswith("fused "), done
    got = in_child(lambda: _nan_run(unit.function(function), h, w, arrays))
    reference = unit.source.reference_of(function).function(function)
    want = in_child(lambda: _nan_run(reference, h, w, arrays))
    for k, (a, b) in enumerate(zip(got, want)):
        same = equal_elements(a, b, Tolerance())
        assert same.all(), f"array {k}: {np.argwhere(~same)[:5].tolist()} differ from cc's"
    assert not np.isnan(got[-1][2 : h - 2, 2 : w - 2]).any()


def test_tile_footprints_of_blur_sharpen():
    """For an interior 4x8 tile of the sharpen stage: by over the tile grown by the 5-point
    stencil's radius (its box: corners included), bx two rows more (the vertical blur)."""
    function = lower_file(BLUR_SHARPEN).module.get_global("kernel_blur_sharpen_f32")
    (scop,), _ = extract_scops(function)
    outcome = fuse_tile(scop, compute_dependences(scop), [4, 8], l2=512 << 10)
    assert outcome.changed and not outcome.refused
    fix = isl.Set("[h, w, tile0, tile1] -> { : h = 100 and w = 100 and tile0 = 1 and tile1 = 2 }")
    instances = outcome.schedule.inner.get_domain().intersect_params(fix)
    boxes = {}
    for name, (rows, cols) in {"S0": ((2, 9), (15, 24)), "S1": ((3, 8), (15, 24))}.items():
        boxes[name] = f"{name}[y, x] : {rows[0]} <= y <= {rows[1]} and {cols[0]} <= x <= {cols[1]}"
    boxes["S2"] = "S2[y, x] : 4 <= y <= 7 and 16 <= x <= 23"
    want = isl.UnionSet(f"[h, w, tile0, tile1] -> {{ {'; '.join(boxes.values())} }}")
    assert instances.is_equal(want.intersect_params(fix))


def test_a_parameter_named_like_a_tile_coordinate():
    result, remarks = _check(pipeline("clash"), "clash", {"tile0": 17, "w": 13}, "fuse-tile(3,4)")
    assert result.status == "OK", str(result)
    assert [r.kind for r in remarks] == ["passed"]


# --------------------------------------------------------------------------------------------
# local intermediates: contracted to a buffer per tile

LOCALS = pipeline("locals")
PYCC = shutil.which(
    "pycc-stencil", path=os.pathsep.join([os.path.dirname(sys.executable), os.defpath])
)
CONTRACTED = [
    ("blur_local", "tmp contracted to buffers per tile"),
    ("unsharp_local", "bx, by contracted to buffers per tile"),
]


LOCAL_SIZES = [
    (23, 19, "fuse-tile(4,5)"),
    (37, 41, "fuse-tile(8)"),
    (7, 5, "fuse-tile(64,100)"),
    (5, 6, "fuse-tile(1,1)"),
    (3, 4, "fuse-tile"),
]


def _local_cases():
    """Every size with NaN-filled buffers; without, the first size (the others are sweeps:
    the poisoned run checks the same schedule and more, and test_contracted_tiles_... and
    test_o3_fuses_... run the unpoisoned code of both kernels)."""
    for k, (h, w, passes) in enumerate(LOCAL_SIZES):
        for poison in (False, True):
            label = f"{'nan-buffers' if poison else ''}-{h}-{w}-{passes}"
            marks = sweep_if(not poison and k > 0)
            yield pytest.param(h, w, passes, poison, id=label, marks=marks)


@kernel_group("locals")
@pytest.mark.parametrize("function, contracted", CONTRACTED, ids=[c[0] for c in CONTRACTED])
@pytest.mark.parametrize("h, w, passes, poison", list(_local_cases()))
def test_local_intermediates_are_contracted(
    monkeypatch, function, contracted, h, w, passes, poison
):
    """Bit-exact; with the buffers filled with NaN when allocated (PYCC_POISON_SCRATCH at code
    generation), a value a tile reads but did not compute would show in the output."""
    if poison:
        monkeypatch.setenv("PYCC_POISON_SCRATCH", "1")
    result, remarks = _check(LOCALS, function, {"h": h, "w": w}, passes)
    assert result.status == "OK", str(result)
    assert result.changed or min(h, w) < 5, f"{result}: the run changed nothing"
    (done,) = [r.message for r in remarks if r.kind == "passed"]
    assert done.split("; sizes from")[0].endswith(contracted), done  # (then where sizes came from)


@kernel_group("locals")
@pytest.mark.parametrize("order", ["reverse", "shuffle:5"])
def test_contracted_tiles_in_any_order_and_on_two_threads(monkeypatch, order):
    monkeypatch.setenv("PYCC_PARALLEL_ORDER", order)
    for function, contracted in CONTRACTED:
        result, remarks = _check(LOCALS, function, {"h": 41, "w": 29}, "fuse-tile(3,7)")
        assert result.status == "OK", str(result)
        assert result.changed, f"{result}: the run changed nothing"
        (done,) = passed_by(remarks, "fuse-tile")
        assert done.endswith(contracted), done
    monkeypatch.delenv("PYCC_PARALLEL_ORDER")
    monkeypatch.setenv("PYCC_NUM_THREADS", "2")
    for function, contracted in CONTRACTED:
        result, remarks = _check(LOCALS, function, {"h": 67, "w": 53}, "fuse-tile(5)")
        assert result.status == "OK", str(result)
        (done,) = passed_by(remarks, "fuse-tile")
        assert done.endswith(contracted), done


def test_a_local_read_after_the_loops_is_not_contracted():
    result, remarks = _check(LOCALS, "read_after", {"h": 19, "w": 23}, "fuse-tile(4,5)")
    assert result.status == "OK", str(result)
    (done,) = [r.message for r in remarks if r.kind == "passed"]
    assert done.startswith("fused 2 loop nests") and "contracted" not in done


LOCALS_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void unsharp_local(int h, int w, const float in[h][w], float out[h][w]);
int main(int argc, char **argv) {
  int h = atoi(argv[1]), w = atoi(argv[2]);
  float (*in)[w] = malloc(sizeof(float) * h * w), (*out)[w] = calloc(h * w, sizeof(float));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) in[y][x] = (float)((y * 7 + x * 13) % 17) / 3.0f;
  unsharp_local(h, w, in, out);
  double s = 0.0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) s = s * 1.0000001 + out[y][x];
  printf("%a\n", s);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_o3_fuses_a_pipeline_with_local_intermediates(tmp_path):
    """`pycc-stencil -O3` (compiler mode, its default passes) fuses and contracts the pipeline;
    the fused code runs when the images exceed the L2 cache, the original nests otherwise:
    the program prints what the cc build prints in both cases."""
    (tmp_path / "main.c").write_text(LOCALS_MAIN)
    (tmp_path / "kernels.c").write_text(open(LOCALS).read())
    env = clean_env(tmp_path / "cache")
    report = tmp_path / "report.json"
    sources = [str(tmp_path / "main.c"), str(tmp_path / "kernels.c")]
    for compiler, out, extra in (("cc", "ref", {}), (PYCC, "fused", {"PYCC_REPORT": str(report)})):
        cmd = [compiler, "-O3", "-std=c99", *sources, "-o", str(tmp_path / out)]
        proc = subprocess.run(cmd, env=dict(env, **extra), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    units = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    (unit,) = [u for u in units if u.get("source", "").endswith("kernels.c")]
    (record,) = [f for f in unit["functions"] if f["name"] == "unsharp_local"]
    assert any("bx, by contracted" in r for r in record["remarks"]), record
    large = cache_model(["-O3"], {})[2] // (4 * 512) + 67  # float images of large x 512: > L2
    for h, w in [(large, 512), (61, 37), (3, 5)]:
        want = subprocess.run([tmp_path / "ref", str(h), str(w)], capture_output=True, text=True)
        got = subprocess.run(
            [tmp_path / "fused", str(h), str(w)],
            capture_output=True,
            text=True,
            env=dict(env, PYCC_NUM_THREADS="2"),
        )
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout == want.stdout, (h, w)
