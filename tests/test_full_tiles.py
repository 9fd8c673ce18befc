"""Full/partial tile separation: the point loops of a full tile have constant trip counts.

`tile`, `time-tile` (parallelogram tiles: a diamond is never a box) and `fuse-tile` generate
the point loops of full tiles (entirely inside the domain) apart from the partial ones
(polyhedral/schedule/bands.py `full_tiles`). Checked here: the full-tile condition against a
count of every tile's points; the LLVM loops the passes generate (constant trip counts where
full, min/max bounds where partial); `simd` binding the full-tile loops with nothing left to
its scalar remainder; bit-exactness against cc with sizes that do not divide the extents,
smaller than one tile, exact multiples (only full tiles) and T = 0, 1, odd.
"""

from __future__ import annotations

import itertools
import math
import os

import islpy as isl
import pytest
from corpus_check import assert_fired, check, compiled, kernel_group
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.polyhedral.deps import compute_dependences
from pycc_stencil.polyhedral.schedule import bands
from pycc_stencil.polyhedral.schedule.fuse_tile import fuse_tile
from pycc_stencil.polyhedral.schedule.time_tile import time_tile
from pycc_stencil.polyhedral.scop import extract_scops
from test_tiling import stencil  # noqa: F401 (test_tiling's kernels: a fixture)

HOST = host_target()

HERE = os.path.dirname(os.path.abspath(__file__))
BLUR_SHARPEN = os.path.join(HERE, "..", "scripts", "bench_kernels", "blur_sharpen_f32.c")

#: every tile of a tiling whose sizes divide n and m is full
SCALE2D_C = r"""
void scale2d(int n, int m, double A[n][m], double B[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      B[i][j] = 0.5 * A[i][j] + 0.25 * A[i][j] * A[i][j];
}
"""


@pytest.fixture(scope="module")
def kernel(request, kernel_file):
    """The path of a C file holding the named kernel (test_tiling's STENCILS_C, or scale2d)."""
    stencils = request.getfixturevalue("stencil")
    return lambda name: kernel_file(name, SCALE2D_C) if name == "scale2d" else stencils(name)


def _check(path: str, function: str, params: dict, passes: str, nonempty: bool = True):
    """The remarks about `function` (and the functions outlined from it: the tile loops run
    in `function.par`, ...) of a bit-exact check (asserted, and with `nonempty` that the run
    changed something) under `passes`, compiled once (tests/corpus_check.py)."""
    result, remarks = check(path, function, params, passes, ["-std=c99"])
    assert result.status == "OK", f"{result}\n{[str(r) for r in remarks]}"
    assert result.changed or not nonempty, f"{result}: the run changed nothing"
    assert_fired(remarks, passes)
    return remarks


def _innermost_trip_counts(path: str, function: str, passes: str) -> list[int | None]:
    """The trip counts (None: not a constant) of the innermost loops `passes` leave in
    `function` and the functions outlined from it (in the module of the compile the
    bit-exact tests of the same pipeline check)."""
    module = compiled(path, ["-std=c99"], passes).module
    counts = []
    for fn in module.functions:
        if fn.blocks and fn.name.startswith(function):
            for loop in loops_of(fn).loops:
                if loop.innermost and loop.trip_count is not None:
                    counts.append(loop.trip_count.constant)
    return counts


# --------------------------------------------------------------------------------------------
# 1. the full-tile condition is exact: a tile is full iff it has as many points as any tile


def _fixed(program, values: dict[str, int], tile: tuple[int, ...]) -> isl.Set:
    """The parameter point of the SCoP parameters `values` and the tile coordinates `tile`."""
    fixed = {**values, **dict(zip(program.tile_params, tile))}
    equations = " and ".join(f"{k} = {v}" for k, v in fixed.items())
    return isl.Set(f"[{', '.join(fixed)}] -> {{ : {equations} }}")


def _points(program, values: dict[str, int], tile: tuple[int, ...]) -> int:
    points: list[isl.Point] = []
    domain = program.inner.get_domain()
    domain.intersect_params(_fixed(program, values, tile)).foreach_point(points.append)
    return len(points)


def _assert_exact_full_tiles(program, values: dict[str, int], extent: int, most: int) -> None:
    """Over every tile with coordinates in [-1, extent): full (program.full) iff it has `most`
    points, and there are both full and partial tiles with points."""
    tiles = list(itertools.product(range(-1, extent), repeat=len(program.tile_params)))
    counts = {tile: _points(program, values, tile) for tile in tiles}
    full = program.full
    for tile, count in counts.items():
        point = _fixed(program, values, tile).align_params(full.get_space())
        is_full = not full.intersect(point).is_empty()
        assert is_full == (count == most), (tile, count, most, full)
    assert 0 < sum(c == most for c in counts.values()) < sum(c > 0 for c in counts.values())


def _program(path: str, function: str, transform, sizes: list[int]):
    scop = extract_scops(lower_file(path).module.get_global(function), transform is fuse_tile)
    scop = scop[0][0]
    outcome = transform(scop, compute_dependences(scop), sizes, l2=512 << 10)
    assert outcome.changed, outcome.refused
    return outcome.schedule


def parallelogram(scop, deps, sizes, *, l2):
    """`time-tile` with parallelogram tiles (a diamond tile is never a box: never full)."""
    return time_tile(scop, deps, sizes, l2=l2, shape="parallelogram")


@pytest.mark.parametrize(
    "function, sizes, values",
    [
        ("jacobi2d_mod2", [2, 4, 4], {"T": 5, "n": 13}),
        ("jacobi2d_two", [2, 4, 4], {"T": 3, "n": 12}),
        ("jacobi2d_two", [4, 3, 5], {"T": 4, "n": 11}),
        ("heat1d_n", [3, 5], {"T": 7, "n": 19}),
        ("star3d_r2", [2, 4, 6, 6], {"T": 3, "n": 16}),  # skews 2 and 1: divisions
    ],
)
def test_full_time_tiles_are_exactly_the_tiles_with_all_their_points(
    kernel, function, sizes, values
):
    """A full time tile has a point (one statement instance) at every point of its box."""
    program = _program(kernel(function), function, parallelogram, sizes)
    extent = {2: 5, 3: 4, 4: 5}[len(sizes)]
    _assert_exact_full_tiles(program, values, extent, most=math.prod(sizes))


def test_diamond_time_tiles_are_not_separated(kernel):
    """A diamond is never a box, so no diamond tile is full: the program is left without a
    full-tile version (telling took isl 1.7 s on PolyBench's fdtd-2d, and then failed)."""

    def diamond(scop, deps, sizes, *, l2):
        return time_tile(scop, deps, sizes, l2=l2, shape="diamond")

    program = _program(kernel("jacobi2d_two"), "jacobi2d_two", diamond, [4, 8, 8])
    assert program.full is None


def test_full_fused_tiles_are_exactly_the_tiles_with_all_their_points():
    """The producers' halos make the first row and column of tiles partial."""
    program = _program(BLUR_SHARPEN, "kernel_blur_sharpen_f32", fuse_tile, [4, 8])
    # per tile: bx (4 + 4) x (8 + 2), by (4 + 2) x (8 + 2), sharpen 4 x 8
    _assert_exact_full_tiles(program, {"h": 19, "w": 30}, extent=5, most=80 + 60 + 32)


# --------------------------------------------------------------------------------------------
# 2. the generated loops: constant trip counts in full tiles, min/max bounds in partial ones


@pytest.mark.parametrize(
    "function, passes, constant",
    [
        pytest.param(f, s, c, marks=kernel_group(f))
        for f, s, c in [
            ("jacobi2d_two", "parallelogram-tile(4,8,16)", {16}),
            ("jacobi2d_mod2", "parallelogram-tile(3,5,7)", {7}),
            ("heat1d_n", "parallelogram-tile(4,16)", {16}),
            ("jacobi2d_two", "tile(8,16)", {16}),
            ("scale2d", "tile(8,16)", {16}),
            ("star3d_r2", "parallelogram-tile(2,3,4,8)", {8}),
        ]
    ],
)
def test_full_tile_point_loops_have_constant_trip_counts(kernel, function, passes, constant):
    counts = _innermost_trip_counts(kernel(function), function, passes)
    assert constant <= set(counts), counts  # the full tiles' innermost point loops
    assert None in counts, counts  # the partial tiles' (and the original nest's)


def test_fused_full_tiles_have_constant_trip_counts_with_halos():
    """blur x and blur y run 16 + 2 columns per 16-column tile of sharpen."""
    counts = _innermost_trip_counts(BLUR_SHARPEN, "kernel_blur_sharpen_f32", "fuse-tile(8,16)")
    assert {16, 18} <= set(counts) and None in counts, counts


# --------------------------------------------------------------------------------------------
# 3. simd binds the full tiles' loops with nothing left to the scalar remainder


@pytest.mark.parametrize(
    "function, params, passes",
    [
        pytest.param(f, p, s, marks=kernel_group(f))
        for f, p, s in [
            ("jacobi2d_two", {"T": 5, "n": 41}, "parallelogram-tile(4,8,16),simd"),
            ("jacobi2d_two", {"T": 3, "n": 41}, "tile(8,16),simd"),
            ("scale2d", {"n": 32, "m": 64}, "tile(8,16),simd"),
        ]
    ],
)
def test_simd_binds_full_tiles_without_remainder(kernel, function, params, passes):
    remarks = _check(kernel(function), function, params, passes)
    simd = [r.message for r in remarks if r.pass_name == "simd" and r.kind == "passed"]
    exact = [m for m in simd if "trip count 16: no iteration left to the scalar remainder" in m]
    assert exact, [str(r) for r in remarks]
    assert len(exact) < len(simd)  # the partial tiles' loops are vectorized with remainders


# --------------------------------------------------------------------------------------------
# 4. bit-exact: sizes not dividing the extents, smaller than one tile, exact multiples, T = 0,
#    1, odd; tiles on two threads


CASES = [
    ("jacobi2d_two", {"T": 0, "n": 13}, "parallelogram-tile(4,8,16)"),
    ("jacobi2d_two", {"T": 1, "n": 7}, "parallelogram-tile(4,8,16)"),
    ("jacobi2d_two", {"T": 7, "n": 53}, "parallelogram-tile(4,8,16),simd"),
    ("jacobi2d_two", {"T": 5, "n": 34}, "parallelogram-tile(2,8,8)"),
    ("jacobi2d_two", {"T": 3, "n": 18}, "tile(8,16),simd"),
    ("jacobi2d_two", {"T": 2, "n": 5}, "tile(8,16)"),
    ("jacobi2d_mod2", {"T": 9, "n": 29}, "parallelogram-tile(3,5,7)"),
    ("jacobi2d_mod2", {"T": 1, "n": 2}, "parallelogram-tile(3,5,7)"),
    ("heat1d_n", {"T": 9, "n": 61}, "parallelogram-tile(4,16)"),
    ("heat1d_n", {"T": 4, "n": 66}, "parallelogram-tile(4,16)"),
    ("star3d_r2", {"T": 3, "n": 15}, "parallelogram-tile(2,3,4,8)"),
    ("scale2d", {"n": 32, "m": 64}, "tile(8,16)"),
    ("scale2d", {"n": 33, "m": 63}, "tile(8,16),simd"),
    ("scale2d", {"n": 3, "m": 5}, "tile(8,16)"),
]


@pytest.mark.parametrize(
    "function, params, passes",
    [pytest.param(f, p, s, id=f"{f}-{p}-{s}", marks=kernel_group(f)) for f, p, s in CASES],
)
def test_separated_tiles_are_bit_exact(kernel, monkeypatch, function, params, passes):
    monkeypatch.setenv("PYCC_NUM_THREADS", "2")
    nonempty = params.get("T", 1) > 0 and min(params.get("n", 3), params.get("m", 3)) > 2
    remarks = _check(kernel(function), function, params, passes, nonempty)
    done = [r.message for r in remarks if r.kind == "passed" and "tile" in r.pass_name]
    assert done, [str(r) for r in remarks]


@kernel_group("blur_sharpen_f32")
@pytest.mark.parametrize("h, w", [(26, 37), (7, 5), (18, 34)])
def test_fused_separated_tiles_are_bit_exact(h, w):
    remarks = _check(BLUR_SHARPEN, "kernel_blur_sharpen_f32", {"h": h, "w": w}, "fuse-tile(8,16)")
    assert any(r.message.startswith("fused") for r in remarks), [str(r) for r in remarks]


@pytest.mark.parametrize(
    "text, largest",
    [
        # the largest in the first piece (an integer division, as skewed bands have), in the
        # second, and unbounded
        ("[n] -> { [] -> [(floor(n/2))] : 0 <= n <= 9; [] -> [(3)] : 9 < n <= 20 }", 4),
        (
            "[n, m] -> { [] -> [(n - m)] : 0 <= m <= n <= 7; [] -> [(2m)] : 0 <= m < n - 7 <= 9 }",
            16,
        ),
        ("[n] -> { [] -> [(n)] : n >= 0 }", math.inf),
        # a piece max_val refuses (not an integer expression)
        ("[n] -> { [i] -> [(n)/2] : 2i = n and 0 <= n <= 9 }", 4),
    ],
)
def test_the_longest_extent_is_the_largest_over_all_parameters(text, largest, capfd):
    """`_maximum` (per piece) gives what the range's dim_max_val gives, and prints nothing
    (islpy prints errors raised in its callbacks: compiler mode's output must stay clean)."""
    value = isl.PwAff(text)
    got = bands._maximum(value)
    assert got.eq(isl.Map.from_pw_aff(value).range().dim_max_val(0))
    assert (got.is_infty() and largest == math.inf) or got.to_python() == largest
    assert capfd.readouterr() == ("", "")


def test_a_piece_without_integer_points_does_not_make_the_longest_extent_nan():
    """isl keeps a piece whose set has rational points only (its max_val is NaN): it is no
    extent of any tile."""
    hollow = isl.Set("{ [x, y] : 5x < 2y <= 3x and 3y >= 3 - 4x }")
    value = isl.PwAff.alloc(hollow, isl.Aff("{ [x, y] -> [(100)] }")).union_max(
        isl.PwAff("{ [x, y] -> [(3)] : x = 50 }")
    )
    assert bands._maximum(value).to_python() == 3
