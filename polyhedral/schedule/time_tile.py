"""`time-tile(st,s1,...)`: diamond or skewed (parallelogram) tiling across the time loop of an
iterated stencil, tiles run in wavefronts whose tiles are independent.

An iterated stencil is a time loop `t` whose body is K sweeps, each a perfect nest over the
same space (jacobi-1d/2d's A->B, B->A; heat-3d; one sweep `A[(t+1)%2] = f(A[t%2])`; Gauss-
Seidel in place). Sweep k of step t becomes time step tau = K*t + k, so both forms of the same
stencil get the same schedule.

Parallelogram tiles: space is skewed by time, y_m = x_m + sum_l c_ml * y_l (l < m, y_0 = tau),
with the smallest non-negative coefficients that make every dependence distance non-negative
in every y (the band is then fully permutable; deps are exact, see deps.py): jacobi needs
y = x + tau, seidel-2d (tau, tau + i, 2 tau + i + j). The band is tiled with the given sizes
(or sizes from the cache model), and the tile loops become a wavefront w = sum of tile
coordinates: tiles with the same w never depend on each other, so the next tile loop runs in
parallel. The first wavefront is one corner tile, and a time band starts only when the one
below it has advanced: with few time tiles (jacobi-1d: T*K <= 64 sweeps is one) the tiles run
nearly serially.

Diamond tiles (Bandishti, Pananilath, Bondhugula, SC'12; Pluto's concurrent start): the first
two hyperplanes are a*tau - x_1 and a*tau + x_1 (smallest a, 1 for radius-1 stencils), the
others y_m = x_m + c*tau + ... as above; both are tiled with the same size S, so a tile is a
diamond S/a steps high and S points wide along x_1, and the wavefront w = T_0 + T_1 is a time
band: all its ~N/S tiles along x_1 start together. The other tile coordinates run serially
inside each parallel T_1, and the points of a tile run in the original order (tau, x_1, ...).
A dependence inside one time step along x_1 (in-place Gauss-Seidel) is negative in
a*tau - x_1 for every a: no diamond exists, and parallelogram tiles are used.

The choice (`time-tile`, `time-tile-large`): diamond tiles whenever they are legal,
parallelogram tiles otherwise (the remark says which and why). Measured (docs/polyhedral.md):
on one thread diamonds are within +-10 % of parallelograms, on two threads up to 2.8x faster
(jacobi-1d). The thread count is known only at run time (PYCC_NUM_THREADS), so the rule does
not depend on it. `diamond-tile` and `parallelogram-tile` force a shape. Every schedule is
checked against the dependences before it is used.

Rows run together (in-place sweeps): where the innermost point loop of a parallelogram tile
carries a dependence (Gauss-Seidel: each point reads its west neighbour's new value), every
point waits for the one before it, and the core runs one latency-bound chain (seidel-2d: 6
adds and a divide, about 30 cycles a point). The point loops of such a tile then run all its
rows together, as a wavefront: row r of the tile is skewed by s*r points (the point order
[y_0, .., y_d + s*r, y_{d-1}], r = y_{d-1} - S*T_{d-1} its row in the tile, s the smallest
skew that leaves the rows' points of one step of the wavefront independent), so the core
works on S chains at once, each point's operations in their original order (bit-exact).
Measured on seidel-2d (docs/polyhedral.md): groups of 4 rows ran 2.9x faster than gcc,
8 rows 3.8x, all 16 rows of the default tile 3.6-5.4x (the one chain: 1.0x).
"""

from __future__ import annotations

import itertools

import islpy as isl

from ..cache_model import diamond_tile as diamond_sizes
from ..cache_model import time_tile as default_sizes
from ..codegen import PARALLEL_MARK, TwoLevel
from ..deps import Dependences, carried_at, is_legal
from ..scop import LoopNode, Scop, Statement
from ..tuned_sizes import default_sizes as measured_or_model
from ..tuned_sizes import lost, stencil_class
from . import bands
from .outcome import Outcome

_MAX_SKEW = 3
#: the remark's reason for choosing diamond tiles (see the module docstring)
_WHY_DIAMOND = (
    "; diamond tiles because they are legal (parallelogram wavefronts start with one tile)"
)


def time_tile(
    scop: Scop,
    deps: Dependences,
    sizes: list[int],
    *,
    l2: int,
    l1: int = 0,
    shape: str = "auto",
    tile_key: str = "",
) -> Outcome:
    """Time-tile every iterated stencil of `scop`; `shape` is "diamond" or "parallelogram"
    (refused when that shape is illegal) or "auto": diamond tiles when they are legal,
    parallelogram tiles otherwise (see the module docstring for why). Diamond sizes not given
    are those measured for the target `tile_key` names (`tuned_sizes`), else the cache
    model's; where the target's measurements say time tiles lose to the untiled nest, "auto"
    without sizes refuses."""
    outcome = Outcome(scop.schedule())
    starts = [bands.path_of(n) for n in bands.chain_starts(outcome.schedule.get_root())]
    for path, nest in zip(starts, scop.nests):
        sweeps = iterated_sweeps(scop, deps, nest)
        if isinstance(sweeps, str):
            outcome.refuse(sweeps)
            continue
        why = lost(tile_key, class_of(scop, nest, sweeps), "time tiles")
        if shape == "auto" and not sizes and why:
            outcome.refuse(why)
            continue
        why_not = ""
        if shape != "parallelogram":
            caches = (l1, l2, tile_key)
            done = _attempt(scop, deps, outcome.schedule, path, nest, sweeps, sizes, caches)
            if not isinstance(done, str):
                why = "" if shape == "diamond" else _WHY_DIAMOND
                outcome.accept(done[0], done[1] + why, in_cache=done[2])
                continue
            if shape == "diamond":
                outcome.refuse(f"no diamond tiles: {done}")
                continue
            why_not = f"; not diamond tiles: {done}"
        done = _attempt(scop, deps, outcome.schedule, path, nest, sweeps, sizes, None)
        if isinstance(done, str):
            outcome.refuse(done + why_not)
        else:
            outcome.accept(done[0], done[1] + why_not, in_cache=done[2])
    return outcome


def may_run_rows_together(scop: Scop, deps: Dependences) -> bool:
    """Whether a nest of `scop` is an iterated stencil whose innermost loop carries a
    dependence after skewing (an in-place sweep): its parallelogram tiles may then run their
    rows together, which pays at any size. Cheap (no tiling): `time-tile-large` asks before
    tiling a nest smaller than its size threshold."""
    for nest in scop.nests:
        sweeps = iterated_sweeps(scop, deps, nest)
        if isinstance(sweeps, str) or space_depth(sweeps) < 2:
            continue
        y = _skewed(scop, deps, nest, sweeps, space_depth(sweeps))
        if isinstance(y, str):
            continue
        domain = scop.domain().intersect(
            isl.UnionSet(f"{scop.param_prefix}{{ {'; '.join(s.tuple_text() for s, _ in y)} }}")
        )
        band = isl.Schedule.from_domain(domain).get_root().child(0)
        band = band.insert_partial_schedule(_band(scop, y))
        if not bands.member_is_parallel(band, deps.all, len(y[0][1]) - 1):
            return True
    return False


def _attempt(
    scop: Scop,
    deps: Dependences,
    schedule,
    path,
    nest: LoopNode,
    sweeps,
    sizes,
    caches: tuple[int, int, str] | None,
) -> tuple[TwoLevel, str, bool] | str:
    """The time-tiled program of one nest, its remark and whether it pays at any size (its
    tiles' rows run together), or why it cannot be built: diamond tiles sized for the
    `caches` (L1 and L2 bytes, and the target's `tile_key`), or parallelogram tiles when
    `caches` is None."""
    diamond = caches is not None
    space = space_depth(sweeps)
    y = _skewed(scop, deps, nest, sweeps, space, diamond)
    if isinstance(y, str):
        return y
    # the sizes given first (time, then space outermost first), the cache model's after
    points = scop.bytes_per_point(least_rank=space)
    defaults, origin = default_sizes(space, points), ""
    if diamond:
        l1, l2, tile_key = caches
        defaults, origin = measured_or_model(
            tile_key, class_of(scop, nest, sweeps), lambda: diamond_sizes(space, points, l2, l1)
        )
    want = [*sizes, *defaults[len(sizes) :]][: space + 1]
    if len(sizes) > space or (space == 1 and sizes):
        origin = ""  # every size was given (a diamond's s1 is its height)
    # the time size counts sweeps (rounded up to whole steps), so the one-sweep `%2`
    # form and the K-sweep form of a stencil get the same tiles
    per_step = len(nest.children)
    tiles = [-(-want[0] // per_step) * per_step, *want[1:]]
    points = None
    if diamond:  # a diamond is as wide along x_1 as it is high: s1 is not used
        tiles[1] = tiles[0]
        want[1] = want[0]
        base = base_coordinates(scop, nest, sweeps, space)
        points = [(s, base[s.name]) for s, _ in y]
    program, rows_skew = _tiled(scop, schedule, path, y, tiles, deps, points)
    if program is None:
        return "the time-tiled schedule would violate a dependence"
    together = ""
    if rows_skew is not None:
        together = (
            f"; the rows of a tile run together: {tiles[-2]}, each {rows_skew} point(s) behind "
            "the one before (the innermost loop carries a dependence)"
        )
    skew = ", ".join(y[0][1])
    head = f"time-tiled {len(sweeps)} sweep(s) per step over {space}-D space"
    if diamond:
        along = next(xs[0] for _, xs in sweeps if len(xs) == space)
        message = (
            f"{head} with diamond tiles (concurrent start: the tiles along {along} of a time "
            f"band start together; schedule [{skew}]) of {'x'.join(map(str, want))}, "
            f"wavefronts of tiles in parallel{origin}"
        )
        return program, message, False
    message = (
        f"{head} with parallelogram tiles (skewed schedule [{skew}]) of "
        f"{'x'.join(map(str, want))}, wavefronts of tiles in parallel{together}"
    )
    return program, message, rows_skew is not None


def class_of(scop: Scop, nest: LoopNode, sweeps) -> str:
    """The nest's class of stencils (`tuned_sizes.stencil_class`): its space depth, bytes per
    point and the most distinct elements a sweep's statement reads."""
    space = space_depth(sweeps)
    loads = max(
        len({(a.array.name, tuple(a.subscripts)) for a in s.accesses if not a.is_write})
        for s in nest.statements()
    )
    return stencil_class(space, scop.bytes_per_point(least_rank=space), loads)


def node_map(scop: Scop, nest: LoopNode) -> isl.UnionMap:
    """The original schedule of `nest`'s statements (their position in the whole SCoP)."""
    names = {s.name for s in nest.statements()}
    full = scop.schedule().get_map()
    tuples = "; ".join(scop.statement(n).tuple_text() for n in sorted(names))
    keep = isl.UnionSet(f"{scop.param_prefix}{{ {tuples} }}")
    return full.intersect_domain(keep)


def iterated_sweeps(scop: Scop, deps: Dependences, nest: LoopNode):
    """`sweeps_of(nest)` if its outer loop carries a dependence (an iterated stencil), or
    why not."""
    sweeps = sweeps_of(nest)
    if isinstance(sweeps, str) or carried_at(deps.all, node_map(scop, nest), 0):
        return sweeps
    return "the outer loop carries no dependence: not an iterated stencil (use tile)"


def sweeps_of(nest: LoopNode) -> list[tuple[Statement, list[str]]] | str:
    """[(statement, its spatial iterators)] for a time loop of perfect sweeps, or why not."""
    if not nest.children:
        return "empty loop"
    if all(isinstance(c, Statement) for c in nest.children):
        return "not an iterated stencil: the outer loop has no inner loops"
    out = []
    for sweep in nest.children:
        if isinstance(sweep, Statement):
            return "statement between the sweeps of the time loop"
        node, space = sweep, []
        while True:
            space.append(node.iterator)
            if len(node.children) == 1 and isinstance(node.children[0], LoopNode):
                node = node.children[0]
                continue
            break
        if not all(isinstance(c, Statement) for c in node.children):
            return "sweep is not a perfect loop nest"
        out += [(stmt, list(space)) for stmt in node.children]
    return out


def space_depth(sweeps) -> int:
    return max(len(space) for _, space in sweeps)


def base_coordinates(scop: Scop, nest: LoopNode, sweeps, space: int) -> dict[str, list[str]]:
    """Per statement: [tau, x_1..x_space] (a sweep of fewer dimensions is aligned to the
    innermost ones, the missing outer coordinates are 0)."""
    k_of = {stmt.name: k for k, sweep in enumerate(nest.children) for stmt in sweep.statements()}
    sweeps_per_step = len(nest.children)
    out = {}
    for stmt, xs in sweeps:
        tau = nest.iterator
        if sweeps_per_step > 1:
            tau = f"{sweeps_per_step}*{nest.iterator} + {k_of[stmt.name]}"
        out[stmt.name] = [tau] + ["0"] * (space - len(xs)) + xs
    return out


def _skewed(scop, deps: Dependences, nest, sweeps, space: int, diamond: bool = False):
    """[(statement, [y_0..y_space] expressions)] with minimal skews, or why not.

    Parallelogram: y_0 = tau, y_m = x_m + sum_{l<m} c_l*y_l. Diamond: y_0, y_1 = a*tau -+ x_1
    with the smallest a (y_0 + y_1 = 2a*tau: equal tile sizes start tiles along x_1
    concurrently), then y_m = x_m + c_0*tau + sum_{2<=l<m} c_l*y_l (Pluto's tau + j)."""
    base = base_coordinates(scop, nest, sweeps, space)
    stmts = [s for s, _ in sweeps]
    y = {s.name: [base[s.name][0]] for s in stmts}
    every = deps.all
    if not _nonnegative(scop, stmts, y, every, 0):
        return "a dependence goes backwards in time"
    first = 1
    if diamond:
        y = _diamond_pair(scop, stmts, base, every)
        if isinstance(y, str):
            return y
        first = 2
    for m in range(first, space + 1):
        for coefficients in _candidates(m - first + 1):
            trial = {
                s.name: y[s.name]
                + [_combine(base[s.name][m], coefficients, [base[s.name][0], *y[s.name][first:]])]
                for s in stmts
            }
            if _nonnegative(scop, stmts, trial, every, m):
                y = trial
                break
        else:
            return f"no skew up to {_MAX_SKEW} makes space dimension {m} permutable with time"
    return [(s, y[s.name]) for s in stmts]


def _diamond_pair(scop, stmts, base, every: isl.UnionMap) -> dict[str, list[str]] | str:
    """{statement: [a*tau - x_1, a*tau + x_1]} with the smallest a <= _MAX_SKEW that makes
    both non-negative on every dependence, or why there is none (Gauss-Seidel in place: a
    dependence within a time step along x_1 is negative in a*tau - x_1 for every a)."""
    for a in range(1, _MAX_SKEW + 1):
        pair = {
            s.name: [
                f"{a}*({base[s.name][0]}) - ({base[s.name][1]})",
                f"{a}*({base[s.name][0]}) + ({base[s.name][1]})",
            ]
            for s in stmts
        }
        if _nonnegative(scop, stmts, pair, every, 0) and _nonnegative(scop, stmts, pair, every, 1):
            return pair
    return f"no a <= {_MAX_SKEW} makes both a*tau - x_1 and a*tau + x_1 permutable"


def _candidates(m: int):
    """Skew coefficient vectors over y_0..y_{m-1}, smallest total first."""
    vectors = itertools.product(range(_MAX_SKEW + 1), repeat=m)
    return sorted(vectors, key=lambda c: (sum(c), [-x for x in c]))


def _combine(x: str, coefficients, ys: list[str]) -> str:
    terms = [f"({x})"] + [f"{c}*({ys[k]})" for k, c in enumerate(coefficients) if c]
    return " + ".join(terms)


def _schedule_map(scop: Scop, stmts, y: dict[str, list[str]], upto: int) -> isl.UnionMap:
    parts = [f"{s.tuple_text()} -> [{', '.join(y[s.name][: upto + 1])}]" for s in stmts]
    return isl.UnionMap(f"{scop.param_prefix}{{ {'; '.join(parts)} }}")


def _nonnegative(scop, stmts, y, deps: isl.UnionMap, m: int) -> bool:
    """Whether every dependence has a non-negative distance in dimension m of y."""
    schedule = _schedule_map(scop, stmts, y, m)
    distances = deps.intersect_domain(schedule.domain()).intersect_range(schedule.domain())
    distances = distances.apply_domain(schedule).apply_range(schedule).deltas()
    negative = isl.UnionSet(
        f"{scop.param_prefix}{{ [{', '.join(f'd{k}' for k in range(m + 1))}] : d{m} < 0 }}"
    )
    return distances.intersect(negative).is_empty()


def _tiled(scop, schedule, path, y, sizes, deps, points=None) -> tuple[TwoLevel | None, int | None]:
    """The wavefront-of-tiles program (None if it would violate a dependence), and the skew
    of a tile's rows where they run together (`_row_skew`).

    `points`: the point loops of diamond tiles, in the original order (tau, x_1..x_d: within
    a tile that order is legal because the original one is, and its inner loop is
    contiguous); the wavefront is then y_0 + y_1 alone, the other tile loops serial inside
    each parallel T_1 (fewer, fuller wavefronts). None: parallelogram tiles, point loops in y,
    wavefront over all tile coordinates.

    isl could generate the whole tiled, skewed, wavefront schedule as one AST, but its exact
    tile-loop bounds split into many cases (minutes of AST generation for fdtd-2d). The code is
    generated in two levels instead: tile loops over the bounding box of the tile coordinates
    (`TILE[T0..Td]`, wavefront w = sum T_k, then T_1..T_d, the first of them parallel) and,
    for one tile given as parameters, the exact point loops; a tile of the box outside the
    domain runs no points. Only parallelogram tiles are separated into full and partial ones
    (`bands.separate_full_tiles`)."""
    node = bands.node_at(schedule, path).cut()
    node = node.insert_partial_schedule(_band(scop, y)).band_set_permutable(1)
    node = _in_program_order(scop, node, [s for s, _ in y])
    tiles = bands.tile_band(node, sizes)
    members = tiles.band_get_partial_schedule()
    wave = members.get_at(0)
    for k in range(1, _wave_depth(len(sizes), points is not None)):
        wave = wave.add(members.get_at(k))
    tiles = bands.replace_band(tiles, members.set_at(0, wave))
    diamond, skew = points is not None, None
    if diamond:
        tiles = tiles.child(0).delete().insert_partial_schedule(_band(scop, points)).parent()
    else:
        together = _row_skew(scop, tiles, y, sizes[-2], deps)
        if together is not None:
            skew, tiles = together
    if not is_legal(deps, tiles.get_schedule()):
        return None, None
    parallel = bands.member_is_parallel(tiles, deps.all, 1)
    names = bands.tile_parameter_names(scop.params, len(sizes))
    if skew is not None:  # the tile's row coordinate is a parameter of its point loops
        points = _rows_together(y, skew, f"{sizes[-2]}*{names[-2]}")
    program = TwoLevel(
        outer=_tile_loops(scop, y, sizes, parallel, diamond=diamond),
        inner=_point_loops(scop, y, sizes, points),
        tile_params=names,
    )
    if points is not None:
        # a diamond is never a box (fdtd-2d: 1.7 s to tell), nor are rows run together
        return program, skew
    return bands.separate_full_tiles(program), skew


def _rows_together(y, skew: int, first_row: str, size: int | None = None):
    """The point order running a tile's rows together (see the module docstring): the row
    in the tile r = y_{d-1} - first_row, where `first_row` is `S*T` with the tile's row
    coordinate T a parameter, or (with `size`) `S*floor` of y_{d-1} / S, for a band under the
    tile loops."""
    order = []
    for s, ys in y:
        row = f"({ys[-2]})"
        start = f"{first_row}({row} / {size})" if size else first_row
        order.append((s, [*ys[:-2], f"({ys[-1]}) + {skew}*({row} - {start})", row]))
    return order


def _row_skew(scop: Scop, tiles: isl.ScheduleNode, y, size: int, deps: Dependences):
    """The skew s with which the rows of a tile run together and the tile band with that
    point order below it, or None: when the innermost
    point loop carries no dependence (its points are independent already: the vectorizer's),
    in 1-D, or when no s up to _MAX_SKEW makes the points of one step of the wavefront
    independent of each other."""
    depth = len(y[0][1])
    point_band = tiles.child(0)
    if depth < 3 or bands.member_is_parallel(point_band, deps.all, depth - 1):
        return None
    for skew in range(_MAX_SKEW + 1):
        order = _rows_together(y, skew, f"{size}*floor", size)
        trial = point_band.delete().insert_partial_schedule(_band(scop, order))
        if is_legal(deps, trial.get_schedule()) and bands.member_is_parallel(
            trial, deps.all, depth - 1
        ):
            return skew, trial.parent()
    return None


def _band(scop: Scop, y, prefix: str | None = None) -> isl.MultiUnionPwAff:
    parts = []
    for k in range(len(y[0][1])):
        affine = "; ".join(f"{s.tuple_text()} -> [({ys[k]})]" for s, ys in y)
        parts.append(f"{{ {affine} }}")
    return isl.MultiUnionPwAff(f"{prefix or scop.param_prefix}[{', '.join(parts)}]")


def _in_program_order(scop: Scop, node: isl.ScheduleNode, order) -> isl.ScheduleNode:
    """Below the band at `node`, a sequence keeping statements of one time step in order."""
    if len(order) < 2:
        return node
    filters = isl.UnionSetList.alloc(node.get_ctx(), len(order))
    for s in order:
        filters = filters.add(isl.UnionSet(f"{{ {s.tuple_text()} }}"))
    return node.child(0).insert_sequence(filters).parent()


def _wave_depth(count: int, diamond: bool) -> int:
    """How many leading tile coordinates the wavefront sums (see `_tiled`)."""
    return 2 if diamond else count


def _tile_loops(scop: Scop, y, sizes: list[int], parallel: bool, diamond: bool) -> isl.Schedule:
    """TILE[T0..Td] over the box of tile coordinates, wavefront order. Diamond tiles: (T0, T1)
    over their exact projection instead (its box would be mostly empty tiles, ~(N/S)^2);
    parallelogram tiles: the last two coordinates over theirs (skewed, a band of rows meets
    only some of the column tiles: the box's others ran no points, and in static chunks of
    the parallel loop they left one thread idle; seidel-2d on 2 threads 1.2x -> 1.4-1.6x)."""
    names = bands.tile_parameter_names(scop.params, len(sizes))
    maps = "; ".join(
        f"{s.tuple_text()} -> TILE[{', '.join(f'floor(({e}) / {z})' for e, z in zip(ys, sizes))}]"
        for s, ys in y
    )
    image = scop.domain().apply(isl.UnionMap(f"{scop.param_prefix}{{ {maps} }}"))
    (tiles,) = _sets(image)
    tiles = tiles.remove_divs()  # a superset without integer divisions: simpler loop bounds
    box = None
    joint = 2 if diamond else 1
    spans = [(0, joint), *((k, k + 1) for k in range(joint, len(sizes)))]
    if not diamond and len(sizes) > 2:  # parallelograms: the last two jointly
        spans = [*spans[:-2], (len(sizes) - 2, len(sizes))]
    for lo, hi in spans:
        others = tiles.project_out(isl.dim_type.set, hi, len(sizes) - hi)
        others = others.project_out(isl.dim_type.set, 0, lo).remove_divs().coalesce()
        box = others if box is None else box.flat_product(others)
    box = box.set_tuple_name("TILE").coalesce()
    schedule = isl.Schedule.from_domain(isl.UnionSet.from_set(box))
    wave = " + ".join(names[: _wave_depth(len(sizes), diamond)])
    band = isl.MultiUnionPwAff(
        f"{scop.param_prefix}[{{ TILE[{', '.join(names)}] -> [({wave})] }}, "
        + ", ".join(f"{{ TILE[{', '.join(names)}] -> [({n})] }}" for n in names[1:])
        + "]"
    )
    node = schedule.get_root().child(0).insert_partial_schedule(band)
    node = node.band_split(1).child(0)
    if parallel:
        node = node.band_split(1) if node.band_n_member() > 1 else node
        node = node.insert_mark(isl.Id(PARALLEL_MARK))
    return bands.atomic(node.get_schedule())


def _point_loops(scop: Scop, y, sizes: list[int], points=None) -> isl.Schedule:
    """The points of one tile (its coordinates are parameters tile0..tiled), in the order of
    `points` (default: y)."""
    names = bands.tile_parameter_names(scop.params, len(sizes))
    params = [*scop.params, *names]
    prefix = f"[{', '.join(params)}] -> "
    parts = []
    for s, ys in y:
        inside = " and ".join(
            f"{z}*{t} <= {e} < {z}*{t} + {z}" for e, z, t in zip(ys, sizes, names)
        )
        parts.append(f"{s.tuple_text()} : {' and '.join(s.constraints) or '0 = 0'} and {inside}")
    domain = isl.UnionSet(f"{prefix}{{ {'; '.join(parts)} }}")
    node = isl.Schedule.from_domain(domain).get_root().child(0)
    node = node.insert_partial_schedule(_band(scop, points or y, prefix))
    schedule = _in_program_order(scop, node, [s for s, _ in y]).get_schedule()
    return bands.atomic(schedule) if points is not None else schedule


def _sets(union: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    union.foreach_set(out.append)
    return out
