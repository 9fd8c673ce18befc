"""Diamond (concurrent-start) time tiles: bit-exact against `cc`, really diamond, really
concurrent, refused (and replaced by parallelogram tiles) where illegal.

`diamond-tile(st,s1,s2,..)` forces the shape (st: the diamond's height in sweeps, also its
width along x_1; s1 is not used; s2.. tile the other space dimensions); `time-tile` chooses.
Every case checks the bits AND the remark; sizes do not divide the extents, are larger than
the grid, T = 0, 1, odd; tiles run reversed, shuffled and on 2 threads.
"""

from __future__ import annotations

import re

import islpy as isl
import pytest
import test_tiling
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import kernel_group, on_entry, sweep_if
from pycc_stencil.emit.host_jit import optimize, parse_verified
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.machine_model import SERIAL
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.polyhedral.codegen import TwoLevel
from pycc_stencil.polyhedral.deps import compute_dependences
from pycc_stencil.polyhedral.schedule import time_tile as time_tile_module
from pycc_stencil.polyhedral.scop import extract_scops
from test_tiling import (
    ORDERS,
    _corpus_check,
    _grouped,
    _outlined_parallel_loops,
    assert_bit_exact,
    assert_refused,
    check_tiled,
    in_order,
    missed,
    passed,
)

stencil = test_tiling.stencil  # the fixture: the path of one kernel of STENCILS_C

DIAMOND = "diamond tiles (concurrent start"
PARALLELOGRAM = "parallelogram tiles"


def _corpus(function: str) -> dict:
    return next(e for e in KERNELS if e["function"] == function)


def _steps(params: dict) -> int:
    """The time steps of a case (T, tsteps or tmax)."""
    return next(params[k] for k in ("T", "tsteps", "tmax") if k in params)


def assert_shape(remarks, shape: str) -> str:
    """The one time-tiled remark, which names `shape`."""
    (message,) = [m for m in passed(remarks) if m.startswith("time-tiled")]
    assert shape in message, message
    return message


# --------------------------------------------------------------------------------------------
# 1. bit-exact diamond tiles: sizes not dividing the extents, larger than the grid, T = 0, 1, odd

#: (params, pipeline): sizes smaller and larger than the grid, not dividing it
CORPUS_CASES = {
    "kernel_jacobi_1d_vla": [
        ({"tsteps": 0, "n": 13}, "diamond-tile(4)"),
        ({"tsteps": 1, "n": 101}, "diamond-tile(3)"),
        ({"tsteps": 7, "n": 53}, "diamond-tile(5)"),
        ({"tsteps": 6, "n": 3}, "diamond-tile(4)"),
        ({"tsteps": 9, "n": 41}, "diamond-tile(64)"),
        ({"tsteps": 5, "n": 97}, "diamond-tile"),
    ],
    "kernel_jacobi_2d_vla": [
        ({"tsteps": 0, "n": 13}, "diamond-tile(3,0,5)"),
        ({"tsteps": 2, "n": 13}, "diamond-tile(3,0,5)"),
        ({"tsteps": 1, "n": 37}, "diamond-tile(4,0,3)"),
        ({"tsteps": 5, "n": 23}, "diamond-tile(3,0,7)"),
        ({"tsteps": 3, "n": 4}, "diamond-tile(5,0,2)"),
        ({"tsteps": 4, "n": 19}, "diamond-tile"),
    ],
    "kernel_heat_3d_vla": [
        ({"tsteps": 0, "n": 7}, "diamond-tile(3,0,3,5)"),
        ({"tsteps": 4, "n": 7}, "diamond-tile(3,0,3,5)"),
        ({"tsteps": 1, "n": 9}, "diamond-tile(4,0,2,3)"),
        ({"tsteps": 3, "n": 11}, "diamond-tile(3,0,5,4)"),
        ({"tsteps": 2, "n": 4}, "diamond-tile(2,0,3,3)"),
    ],
    "kernel_fdtd_2d_vla": [
        ({"tmax": 5, "nx": 23, "ny": 37}, "diamond-tile(3,0,5)"),
        ({"tmax": 1, "nx": 7, "ny": 5}, "diamond-tile(4,0,3)"),
    ],
    "kernel_star_3d_vla": [({"tsteps": 3, "n": 11}, "diamond-tile(3,0,4,5)")],
}


#: cases that add little to the others of their kernel (a tile shape already covered at
#: another size): opt-in (sweep), to keep CI under 8 minutes
CORPUS_SWEEP = {
    ("kernel_jacobi_2d_vla", "diamond-tile(4,0,3)"),
    ("kernel_jacobi_2d_vla", "diamond-tile(3,0,7)"),
    ("kernel_heat_3d_vla", "diamond-tile(4,0,2,3)"),
    # the default sizes on a 2-D grid: -O3's own tiles run them (test_large_tiles)
    ("kernel_jacobi_2d_vla", "diamond-tile"),
}


def _corpus_cases():
    """Every (kernel, pipeline) pair runs at least once with T > 0 (a non-empty iteration
    space: asserted)."""
    for function, cases in CORPUS_CASES.items():
        for params, passes in cases:
            label = f"{function}-{'-'.join(f'{k}={v}' for k, v in params.items())}-{passes}"
            marks = [on_entry(_corpus(function), []), *sweep_if((function, passes) in CORPUS_SWEEP)]
            yield pytest.param(function, params, passes, id=label, marks=marks)


@pytest.mark.parametrize("function, params, passes", list(_corpus_cases()))
def test_corpus_diamond_tiles_are_bit_exact(function, params, passes):
    result, remarks = _corpus_check(_corpus(function), [], params, passes)
    assert_bit_exact(result, remarks, nonempty=_steps(params) > 0)
    assert_shape(remarks, DIAMOND)


#: both forms of jacobi-2d and heat-2d, a radius-2 3-D star in `%2` form, heat-1d
STENCIL_CASES = [
    ("jacobi2d_mod2", {"T": 5, "n": 23}, "diamond-tile(3,0,4)"),
    ("jacobi2d_mod2", {"T": 1, "n": 7}, "diamond-tile(5,0,3)"),
    ("jacobi2d_two", {"T": 5, "n": 23}, "diamond-tile(3,0,4)"),
    ("jacobi2d_two", {"T": 0, "n": 9}, "diamond-tile(2,0,3)"),
    ("jacobi2d_two", {"T": 3, "n": 9}, "diamond-tile(2,0,3)"),
    ("heat2d_mod2", {"T": 7, "n": 17}, "diamond-tile(4,0,5)"),
    ("heat2d_two", {"T": 3, "n": 19}, "diamond-tile(5,0,3)"),
    ("heat2d_two", {"T": 2, "n": 3}, "diamond-tile(4,0,4)"),
    ("star3d_r2", {"T": 3, "n": 11}, "diamond-tile(3,0,4,5)"),
    ("star3d_r2", {"T": 1, "n": 6}, "diamond-tile(4,0,3,3)"),
    ("heat1d_n", {"T": 9, "n": 61}, "diamond-tile(4)"),
    ("jacobi2d_lin", {"T": 4, "n": 17}, "diamond-tile(3,0,5)"),
]


@pytest.mark.parametrize("function, params, passes", _grouped(STENCIL_CASES))
def test_iterated_stencils_in_diamond_tiles_are_bit_exact(stencil, function, params, passes):
    result, remarks = check_tiled(stencil(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=_steps(params) > 0)
    assert_shape(remarks, DIAMOND)


def test_radius_2_star_gets_the_steeper_diamond(stencil):
    """(2 tau - i, 2 tau + i): a = 1 would break the distance (1, +-2)."""
    _, remarks = check_tiled(stencil("star3d_r2"), "star3d_r2", {"T": 2, "n": 9}, "diamond-tile")
    message = assert_shape(remarks, DIAMOND)
    assert "2*(t) - (i), 2*(t) + (i)" in message, message


# --------------------------------------------------------------------------------------------
# 2. the choice: diamond where legal, parallelogram (with the reason) where not


@pytest.mark.parametrize(
    "function", [pytest.param(f, marks=kernel_group(f)) for f in ("jacobi2d_two", "jacobi2d_mod2")]
)
def test_time_tile_chooses_diamond_tiles_where_legal(stencil, function):
    result, remarks = check_tiled(stencil(function), function, {"T": 4, "n": 21}, "time-tile")
    assert_bit_exact(result, remarks, nonempty=True)
    assert "diamond tiles because they are legal" in assert_shape(remarks, DIAMOND)


SEIDEL = ("kernel_seidel_2d_vla", [({"tsteps": 3, "n": 23}), ({"tsteps": 0, "n": 7})])


@on_entry(_corpus(SEIDEL[0]), [])
@pytest.mark.parametrize("params", SEIDEL[1])
def test_seidel_2d_falls_back_to_parallelogram_tiles(params):
    """In-place Gauss-Seidel reads A[i-1][j] of the same step: tau - i goes backwards."""
    result, remarks = _corpus_check(_corpus(SEIDEL[0]), [], params, "time-tile(3,4,5)")
    assert_bit_exact(result, remarks, nonempty=_steps(params) > 0)
    message = assert_shape(remarks, PARALLELOGRAM)
    assert "not diamond tiles: no a <= 3 makes both" in message, message


def test_diamond_tiles_of_seidel_2d_are_refused():
    result, remarks = _corpus_check(
        _corpus(SEIDEL[0]), [], {"tsteps": 3, "n": 23}, "diamond-tile(3,0,5)"
    )
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "refused: no diamond tiles: no a <= 3")


def test_without_the_checks_diamond_tiles_of_seidel_2d_miscompile(monkeypatch):
    """The refusal is not luck: accepting every skew and schedule gives wrong results."""
    monkeypatch.setattr(time_tile_module, "_nonnegative", lambda *args: True)
    monkeypatch.setattr(time_tile_module, "is_legal", lambda deps, schedule: True)
    result, remarks = _corpus_check(
        _corpus(SEIDEL[0]), [], {"tsteps": 3, "n": 23}, "diamond-tile(3,0,5)", fresh=True
    )
    assert_shape(remarks, DIAMOND)
    assert result.status == "MISMATCH", str(result)


def test_parallelogram_tile_forces_the_old_shape(stencil):
    result, remarks = check_tiled(
        stencil("jacobi2d_two"), "jacobi2d_two", {"T": 3, "n": 17}, "parallelogram-tile(2,3,5)"
    )
    assert_bit_exact(result, remarks, nonempty=True)
    assert_shape(remarks, PARALLELOGRAM)
    assert not missed(remarks), remarks


def _band_loop_types(schedule: isl.Schedule) -> list:
    """The AST loop type of every member of every band of `schedule`."""
    types = []

    def collect(node: isl.ScheduleNode) -> bool:
        if node.get_type() == isl.schedule_node_type.band:
            types.extend(node.band_member_get_ast_loop_type(k) for k in range(node.band_n_member()))
        return True

    schedule.get_root().foreach_descendant_top_down(collect)
    return types


def test_diamond_tile_and_point_loops_are_generated_once_each():
    """The tile loops and the point loops of diamonds are generated "atomic" (each loop once,
    with min/max bounds). isl's default separation split fdtd-2d's tile body into 11 loops
    here (at -O3's sizes 30 in the outlined tile function, against 10) and its tile loops into
    cases (97 loops in the kernel, against 9), and LLVM spent about 1.3 s more on the file at
    -O3; the separated tile loops also ran most tiles outside the parallel loop (fdtd-2d on 2
    threads 0.31 s, atomic 0.20 s; docs/build_cost.md)."""
    path = f"{CORPUS_DIR}/polybench/fdtd_2d_ptr.c"
    module = lower_file(path).module
    (scop,), _ = extract_scops(module.get_global("kernel_fdtd_2d_ptr"), merge=False)
    outcome = time_tile_module.time_tile(
        scop, compute_dependences(scop), [4, 8, 16], l2=512 << 10, shape="diamond"
    )
    program = outcome.schedule
    assert isinstance(program, TwoLevel), outcome.refused
    for schedule in (program.outer, program.inner):
        types = _band_loop_types(schedule)
        assert types and all(t == isl.ast_loop_type.atomic for t in types), types
    names = ", ".join([*scop.params, *program.tile_params])
    body = isl.AstBuild.from_context(isl.Set(f"[{names}] -> {{ : }}"))
    code = body.node_from_schedule(program.inner).to_C_str()
    assert code.count("for (") <= 8, code
    tiles = isl.AstBuild.from_context(scop.context()).node_from_schedule(program.outer)
    # the wavefront, its parallel tiles, the third tile coordinate
    assert tiles.to_C_str().count("for (") == 3, tiles.to_C_str()


def _overlap_checks(module) -> int:
    """The run-time overlap checks LLVM's vectorizer versions loops with, after `-O3`."""
    parsed = parse_verified(str(module))
    optimize(parsed, 3)
    return len(re.findall(r"%found\.conflict[\w.]* = ", str(parsed)))


def test_tiles_tell_llvm_their_arrays_are_apart(stencil):
    """The tiled code runs only when no written array overlaps another (the entry
    condition), and its loads and stores say so (`!alias.scope`/`!noalias`): LLVM adds no
    overlap checks of its own to a tile's loops (jacobi-2d's module lost 16-30 % of its
    optimized size). The original nest, kept for small or overlapping arrays, keeps its."""
    path = stencil("jacobi2d_two")
    untiled = lower_file(path).module
    before = _overlap_checks(untiled)
    tiled = run_passes(lower_file(path).module, parse_pipeline("time-tile"), target=host_target())
    assert "!noalias" in str(tiled.module) and "!alias.scope" in str(tiled.module)
    assert before > 0 and _overlap_checks(tiled.module) == before


def test_the_mod2_form_and_the_two_array_form_get_the_same_default_diamonds(stencil):
    """`A[t % 2][i][j]` holds two elements per grid point (its time planes), as A and B of the
    two-array form do, so the cache model sizes both forms' diamonds alike (counting one
    element, the `%2` form got diamonds twice as large: 2-5 % slower on jacobi-2d and heat-2d
    `%2` at 2800^2, docs/tiling_benchmarks.md). A row index is no plane, even in a loop of
    fixed extent (PolyBench's `#define N` form)."""
    kernels = {
        "jacobi2d_mod2": stencil("jacobi2d_mod2"),
        "jacobi2d_two": stencil("jacobi2d_two"),
        "kernel_jacobi_2d": f"{CORPUS_DIR}/polybench/jacobi_2d_fixed.c",
    }
    sizes, planes = {}, {}
    for name, path in kernels.items():
        module = lower_file(path).module
        (scop,), _ = extract_scops(module.get_global(name), merge=False)
        planes[name] = [scop.planes(array) for array in scop.arrays]
        outcome = time_tile_module.time_tile(
            scop, compute_dependences(scop), [], l2=512 << 10, shape="diamond"
        )
        (done,) = outcome.done
        sizes[name] = done.split(") of ")[1].split(",")[0]
    assert planes == {"jacobi2d_mod2": [2], "jacobi2d_two": [1, 1], "kernel_jacobi_2d": [1, 1]}
    assert set(sizes.values()) == {"64x64x512"}, sizes


@pytest.mark.parametrize(
    "function, l1, expected",
    [
        ("kernel_jacobi_1d_vla", 48 << 10, "2048x2048"),  # the L1's: a diamond of 2048 steps
        ("kernel_jacobi_1d_vla", 32 << 10, "2048x2048"),
        ("kernel_jacobi_1d_vla", 0, "131072x131072"),  # no L1 known: the L2's
        ("kernel_jacobi_1d_vla", 256, "131072x131072"),  # the L1's would be 16 steps
        ("kernel_jacobi_2d_vla", 48 << 10, "32x32x64"),  # 16 rows of 64 on average: 16 KiB
        ("kernel_jacobi_2d_vla", 32 << 10, "32x32x64"),
        ("kernel_jacobi_2d_vla", 16 << 10, "256x256x512"),  # the L1's would be 16 steps
        # ex, ey, hz: 24 bytes a point (`_fict_[t]` holds none of the grid), 32 steps of 64
        ("kernel_fdtd_2d_vla", 48 << 10, "32x32x64"),
        ("kernel_fdtd_2d_vla", 0, "128x128x512"),
    ],
)
def test_diamonds_are_sized_for_the_l1_where_it_holds_enough_steps(function, l1, expected):
    """jacobi-1d at 4 million points x 100 sweeps, diamonds of 2048 (the L1's) against
    131072 (the L2's): 2.6x faster on a Xeon (48 KiB L1, 2 MiB L2); jacobi-2d at 2800^2
    x 100, 32x32x64 against 256x256x512: 1.2x; fdtd-2d, 32x32x64 against 128x128x512:
    1.1-1.4x (docs/tiling_benchmarks.md)."""
    entry = _corpus(function)
    module = lower_file(f"{CORPUS_DIR}/{entry['file']}").module
    (scop,), _ = extract_scops(module.get_global(function), merge=False)
    outcome = time_tile_module.time_tile(
        scop, compute_dependences(scop), [], l2=2 << 20, l1=l1, shape="diamond"
    )
    (done,) = outcome.done
    assert done.split(") of ")[1].split(",")[0] == expected, done


def test_later_passes_say_nothing_of_the_code_time_tiles_generated(stencil):
    """`fuse-tile` after `time-tile` (serial tile loops, compiler mode's default) finds the
    generated tile loops no SCoP: no remark for the user (it had no file and line)."""
    module = lower_file(stencil("jacobi2d_two")).module
    target = host_target(parallel_runtime=SERIAL)
    result = run_passes(module, parse_pipeline("time-tile,fuse-tile"), target=target)
    remarks = [r for r in result.remarks if r.function == "jacobi2d_two"]
    assert any(r.message.startswith("time-tiled") for r in remarks), remarks
    assert not [r for r in remarks if "not a SCoP" in r.message], [str(r) for r in remarks]
    assert all(r.location is not None for r in remarks), [str(r) for r in remarks]


# --------------------------------------------------------------------------------------------
# 3. concurrent start: the first wavefront holds many tiles (parallelogram: one)


def _first_wavefront(path: str, function: str, shape: str, params: dict, sizes: list[int]):
    """How many non-empty tiles the first wavefront of `function`'s tiles has."""
    module = lower_file(path).module
    (scop,), _ = extract_scops(module.get_global(function), merge=False)
    outcome = time_tile_module.time_tile(
        scop, compute_dependences(scop), sizes, l2=512 << 10, shape=shape
    )
    program = outcome.schedule
    assert isinstance(program, TwoLevel), outcome.refused
    occupied = program.inner.get_domain().params()  # parameter values with some point
    for name, value in params.items():
        position = occupied.find_dim_by_name(isl.dim_type.param, name)
        occupied = occupied.fix_val(isl.dim_type.param, position, isl.Val(value))
    first = occupied.find_dim_by_name(isl.dim_type.param, program.tile_params[0])
    tiles = occupied.move_dims(isl.dim_type.set, 0, isl.dim_type.param, first, 2)
    tiles = tiles.project_out(isl.dim_type.param, 0, tiles.dim(isl.dim_type.param))
    tiles = tiles.project_out(isl.dim_type.set, 2, tiles.dim(isl.dim_type.set) - 2)
    # the wavefront of a diamond is T0 + T1 (parallelogram: the sum of all, here T0 + T1)
    waves = tiles.apply(isl.Map("{ [a, b] -> [a + b] }"))
    start = waves.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0)
    first_wave = tiles.intersect(isl.Set(f"{{ [a, b] : a + b = {start} }}"))
    return first_wave.count_val().to_python()


def test_diamond_tiles_start_concurrently(stencil):
    """jacobi-1d, n = 400, tiles of 8: the first wavefront of diamonds spans the grid (~n/8
    tiles); the first of parallelograms is the single corner tile."""
    path = stencil("heat1d_n")
    params = {"T": 20, "n": 400}
    diamond = _first_wavefront(path, "heat1d_n", "diamond", params, [8])
    parallelogram = _first_wavefront(path, "heat1d_n", "parallelogram", params, [8, 8])
    assert parallelogram == 1
    assert diamond >= 400 // 8, diamond


@pytest.mark.parametrize(
    "function, params, passes",
    _grouped(
        [
            ("heat1d_n", {"T": 9, "n": 61}, "diamond-tile(4)"),
            ("jacobi2d_two", {"T": 3, "n": 19}, "diamond-tile(3,0,4)"),
            ("star3d_r2", {"T": 3, "n": 11}, "diamond-tile(3,0,3,4)"),
        ]
    ),
)
def test_diamond_tiles_run_in_parallel_code(stencil, function, params, passes):
    assert _outlined_parallel_loops(stencil(function), function, passes)


# --------------------------------------------------------------------------------------------
# 4. independent tiles in any order and on real threads

ORDER_CASES = [
    ("heat1d_n", {"T": 9, "n": 61}, "diamond-tile(4)"),
    ("jacobi2d_mod2", {"T": 5, "n": 23}, "diamond-tile(3,0,5)"),
    ("heat2d_two", {"T": 3, "n": 19}, "diamond-tile(2,0,3)"),
    ("star3d_r2", {"T": 3, "n": 11}, "diamond-tile(3,0,3,4)"),
]


@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
@pytest.mark.parametrize("function, params, passes", _grouped(ORDER_CASES))
def test_diamond_tiles_in_any_order_are_bit_exact(
    stencil, monkeypatch, env, function, params, passes
):
    in_order(monkeypatch, env)
    result, remarks = check_tiled(stencil(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=True)
    assert_shape(remarks, DIAMOND)


@on_entry(_corpus("kernel_heat_3d_vla"), [])
@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_corpus_heat3d_diamonds_in_any_order_are_bit_exact(monkeypatch, env):
    in_order(monkeypatch, env)
    entry = _corpus("kernel_heat_3d_vla")
    result, remarks = _corpus_check(entry, [], {"tsteps": 3, "n": 11}, "diamond-tile(3,0,5,4)")
    assert_bit_exact(result, remarks, nonempty=True)
    assert_shape(remarks, DIAMOND)
