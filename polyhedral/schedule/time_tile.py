"""`time-tile(st,s1,...)`: skewed (parallelogram) tiling across the time loop of an iterated
stencil, tiles run in wavefronts whose tiles are independent.

An iterated stencil is a time loop `t` whose body is K sweeps, each a perfect nest over the
same space (jacobi-1d/2d's A->B, B->A; heat-3d; one sweep `A[(t+1)%2] = f(A[t%2])`; Gauss-
Seidel in place). Sweep k of step t becomes time step tau = K*t + k, so both forms of the same
stencil get the same schedule. Space is skewed by time, y_m = x_m + sum_l c_ml * y_l (l < m,
y_0 = tau), with the smallest non-negative coefficients that make every dependence distance
non-negative in every y (the band is then fully permutable; deps are exact, see deps.py):
jacobi needs y = x + tau, seidel-2d (tau, tau + i, 2 tau + i + j). The band is tiled with the
given sizes (or sizes from the cache model), and the tile loops become a wavefront
w = sum of tile coordinates: tiles with the same w never depend on each other, so the next
tile loop runs in parallel. Every schedule is checked against the dependences before it is
used.
"""

from __future__ import annotations

import itertools

import islpy as isl

from ..cache_model import time_tile as default_sizes
from ..codegen import PARALLEL_MARK, TwoLevel
from ..deps import Dependences, carried_at, is_legal
from ..scop import LoopNode, Scop, Statement
from . import bands
from .outcome import Outcome

_MAX_SKEW = 3


def time_tile(scop: Scop, deps: Dependences, sizes: list[int]) -> Outcome:
    outcome = Outcome(scop.schedule())
    starts = [bands.path_of(n) for n in bands.chain_starts(outcome.schedule.get_root())]
    for path, nest in zip(starts, scop.nests):
        sweeps = iterated_sweeps(scop, deps, nest)
        if isinstance(sweeps, str):
            outcome.refuse(sweeps)
            continue
        space = space_depth(sweeps)
        y = _skewed(scop, deps, nest, sweeps, space)
        if isinstance(y, str):
            outcome.refuse(y)
            continue
        # the sizes given first (time, then space outermost first), the cache model's after
        want = [*sizes, *default_sizes(space, scop.bytes_per_point())[len(sizes) :]][: space + 1]
        # the time size counts sweeps (rounded up to whole steps), so the one-sweep `%2`
        # form and the K-sweep form of a stencil get the same tiles
        per_step = len(nest.children)
        tiles = [-(-want[0] // per_step) * per_step, *want[1:]]
        schedule = _tiled(scop, outcome.schedule, path, nest, y, tiles, deps)
        if schedule is None:
            outcome.refuse("the time-tiled schedule would violate a dependence")
            continue
        skew = ", ".join(y[0][1])
        outcome.accept(
            schedule,
            f"time-tiled {len(sweeps)} sweep(s) per step over "
            f"{space}-D space (skewed schedule [{skew}]) with tiles "
            f"{'x'.join(map(str, want))}, wavefronts of tiles in parallel",
        )
    return outcome


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


def _skewed(scop, deps: Dependences, nest, sweeps, space: int):
    """[(statement, [y_0..y_space] expressions)] with minimal skews, or why not."""
    base = base_coordinates(scop, nest, sweeps, space)
    stmts = [s for s, _ in sweeps]
    y = {s.name: [base[s.name][0]] for s in stmts}
    every = deps.all
    if not _nonnegative(scop, stmts, y, every, 0):
        return "a dependence goes backwards in time"
    for m in range(1, space + 1):
        for coefficients in _candidates(m):
            trial = {
                s.name: y[s.name] + [_combine(base[s.name][m], coefficients, y[s.name])]
                for s in stmts
            }
            if _nonnegative(scop, stmts, trial, every, m):
                y = trial
                break
        else:
            return f"no skew up to {_MAX_SKEW} makes space dimension {m} permutable with time"
    return [(s, y[s.name]) for s in stmts]


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


def _tiled(scop, schedule, path, nest, y, sizes, deps) -> TwoLevel | None:
    """The wavefront-of-tiles program, or None if it would violate a dependence.

    isl could generate the whole tiled, skewed, wavefront schedule as one AST, but its exact
    tile-loop bounds split into many cases (minutes of AST generation for fdtd-2d). The code is
    generated in two levels instead: tile loops over the bounding box of the tile coordinates
    (`TILE[T0..Td]`, wavefront w = sum T_k, then T_1..T_d, the first of them parallel) and,
    for one tile given as parameters, the exact point loops; a tile of the box outside the
    domain runs no points."""
    node = bands.node_at(schedule, path).cut()
    node = node.insert_partial_schedule(_band(scop, y)).band_set_permutable(1)
    node = _in_program_order(scop, node, [s for s, _ in y])
    tiles = bands.tile_band(node, sizes)
    members = tiles.band_get_partial_schedule()
    wave = members.get_at(0)
    for k in range(1, members.dim(isl.dim_type.out)):
        wave = wave.add(members.get_at(k))
    tiles = bands.replace_band(tiles, members.set_at(0, wave))
    if not is_legal(deps, tiles.get_schedule()):
        return None
    parallel = bands.member_is_parallel(tiles, deps.all, 1)
    return TwoLevel(
        outer=_tile_loops(scop, y, sizes, parallel),
        inner=_point_loops(scop, y, sizes),
        tile_params=bands.tile_parameter_names(scop.params, len(sizes)),
    )


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


def _tile_loops(scop: Scop, y, sizes: list[int], parallel: bool) -> isl.Schedule:
    """TILE[T0..Td] over the box of tile coordinates, wavefront order."""
    names = bands.tile_parameter_names(scop.params, len(sizes))
    maps = "; ".join(
        f"{s.tuple_text()} -> TILE[{', '.join(f'floor(({e}) / {z})' for e, z in zip(ys, sizes))}]"
        for s, ys in y
    )
    image = scop.domain().apply(isl.UnionMap(f"{scop.param_prefix}{{ {maps} }}"))
    (tiles,) = _sets(image)
    tiles = tiles.remove_divs()  # a superset without integer divisions: simpler loop bounds
    box = None
    for k in range(len(sizes)):
        others = tiles.project_out(isl.dim_type.set, k + 1, len(sizes) - k - 1)
        others = others.project_out(isl.dim_type.set, 0, k).remove_divs().coalesce()
        box = others if box is None else box.flat_product(others)
    box = box.set_tuple_name("TILE").coalesce()
    schedule = isl.Schedule.from_domain(isl.UnionSet.from_set(box))
    wave = " + ".join(names)
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
    return node.get_schedule()


def _point_loops(scop: Scop, y, sizes: list[int]) -> isl.Schedule:
    """The points of one tile (its coordinates are parameters tile0..tiled)."""
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
    node = node.insert_partial_schedule(_band(scop, y, prefix))
    return _in_program_order(scop, node, [s for s, _ in y]).get_schedule()


def _sets(union: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    union.foreach_set(out.append)
    return out
