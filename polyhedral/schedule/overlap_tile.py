"""`overlap-tile(st,s1,...)`: overlapped (flextended) time tiles of an iterated stencil, after
Zhao & Cohen (TACO 2020): time tiles of `st` sweeps run one after the other; inside one, the
space tiles run in parallel, each computing the trapezoid its results need (recomputing the
halos its neighbours compute too), so all tiles of a time tile start at once.

Sweeps are recognized as in `time_tile` (sweep k of step t is tau = K*t + k). Each written
array is *owned* tile by tile: the array dimension that the writes index by space loop d
(the same in every write) lies in [S_d*b_d, S_d*b_d + S_d) for tile b. A tile must run
the instances of its time tile that perform the last write (within the time tile) of an
element it owns, and, closed under the flow dependences within the time tile, every instance
they depend on (widened to boxes per time row for simple loops, closed again). isl checks the
closure (everything a tile runs reads values the tile computes or the time tile's input) and
that the tiles together perform every last write.

Memory (see polyhedral/scratch.py): each tile runs on private copies of the written arrays
(the box of its footprint, copied in from the time tile's input state) and copies the elements
it owns out to the time tile's output state; the input and output states alternate between the
caller's arrays and one shadow copy per written array, so no tile ever reads what another
writes. Refused: a nest that is not an iterated stencil, writes that do not follow the space
loops, and halos that grow with the tile's position (a sweep that reads its own results, as
in-place Gauss-Seidel does: every tile would recompute everything before it).
"""

from __future__ import annotations

import islpy as isl

from ..cache_model import overlap_tile as default_sizes
from ..codegen import PARALLEL_MARK
from ..deps import Dependences
from ..scop import Scop, Statement
from ..scratch import Buffer, Overlapped, ScratchPlan
from . import bands
from .footprint import box, sources
from .outcome import Outcome
from .time_tile import base_coordinates, iterated_sweeps, space_depth

#: elements of one private buffer beyond which tiles are refused (a mistaken mapping, not a tile)
_MAX_PRIVATE = 1 << 26


def overlap_tile(
    scop: Scop, deps: Dependences, sizes: list[int], *, l2: int, l1: int = 0
) -> Outcome:
    """Overlapped time tiles (sizes from Zhao & Cohen's table, whatever the cache: `l2` and
    `l1` are unused)."""
    outcome = Outcome(scop.schedule())
    for nest in scop.nests:
        sweeps = iterated_sweeps(scop, deps, nest)
        if isinstance(sweeps, str):
            outcome.refuse(sweeps)
            continue
        space = space_depth(sweeps)
        base = base_coordinates(scop, nest, sweeps, space)
        want = [*sizes, *default_sizes(space)[len(sizes) :]][: space + 1]
        plan = _Plan(scop, deps, [s for s, _ in sweeps], base, want)
        program = plan.build()
        if isinstance(program, str):
            outcome.refuse(program)
            continue
        halos = "x".join(f"{lo}+{hi}" for lo, hi in plan.halos)
        outcome.accept(
            program,
            f"overlap-tiled {len(nest.children)} sweep(s) per step over {space}-D space with "
            f"tiles {'x'.join(map(str, want))} (halos {halos}), the tiles of a time tile in "
            "parallel on private buffers",
        )
    return outcome


class _Plan:
    """The overlapped tiles of one nest: relations, checks and the two-level program."""

    def __init__(self, scop: Scop, deps: Dependences, stmts: list[Statement], base, sizes):
        self.scop, self.deps, self.stmts, self.base, self.sizes = scop, deps, stmts, base, sizes
        iterators = [it for s in scop.statements for it in s.iterators]
        self.names = bands.tile_parameter_names([*scop.params, *iterators], len(sizes))
        self.tile = f"TILE[{', '.join(self.names)}]"
        self.halos: list[tuple[int, int]] = []

    def build(self) -> Overlapped | str:
        scop = self.scop
        writes = scop.writes()
        if any(sum(a.is_write for a in s.accesses) != 1 for s in self.stmts):
            return "a statement does not write exactly one element"
        first = self._first_step()
        if isinstance(first, str):
            return first
        owners = self._owners()
        if isinstance(owners, str):
            return owners
        time = self._time_tile_of(first)
        same = time.apply_range(time.reverse())
        flow = self.deps.flow
        overwritten = self.deps.output.intersect(same).domain()
        last = writes.subtract_domain(overwritten).domain()
        window = self._window(first)
        own = self._own(owners).intersect(window).intersect_range(last)
        if not last.is_subset(own.range()):
            return "the tiles do not perform every last write (coverage check failed)"
        run = self._closed(own, window)
        if run is None:
            return (
                "what a tile needs grows with every round of closing it under the "
                "dependences: a sweep reads values of the same sweep (in-place "
                "Gauss-Seidel), each tile would recompute everything before it"
            )
        if not run.apply_range(flow.reverse()).intersect(window).is_subset(run):
            return "a tile would read a value it does not compute (closure check failed)"
        buffers = self._buffers(run, owners)
        if isinstance(buffers, str):
            return buffers
        plan = ScratchPlan(buffers, self._subscripts(buffers), self.names)
        tiles = self._tiles(time, buffers)
        return Overlapped(
            outer=self._outer(tiles, buffers),
            inner=self._inner(run, buffers),
            tile_params=self.names,
            plan=plan,
        )

    # -- relations ---------------------------------------------------------------------------

    def _first_step(self) -> int | str:
        """The first time step tau (a constant: time tiles count from it, the first one reads
        the caller's arrays)."""
        taus = self.scop.domain().apply(self._map(lambda s: f"[{self.base[s.name][0]}]"))
        first = isl.Set.from_union_set(taus).lexmin().dim_min(0)
        if not first.is_cst():
            return "the time loop does not start at a constant step"
        return first.max_val().to_python()

    def _map(self, image) -> isl.UnionMap:
        """{ S[i] -> image(S) } over the statements' domains."""
        parts = "; ".join(f"{s.tuple_text()} -> {image(s)}" for s in self.stmts)
        relation = isl.UnionMap(f"{self.scop.param_prefix}{{ {parts} }}")
        return relation.intersect_domain(self.scop.domain())

    def _time_tile_of(self, first: int) -> isl.UnionMap:
        st = self.sizes[0]
        return self._map(lambda s: f"[floor(({self.base[s.name][0]} - {first}) / {st})]")

    def _owners(self) -> dict[str, list[int | None]] | str:
        """Per written array, per dimension: the space loop (1..d) every write indexes it by
        (subscript minus that loop's coordinate is one value), or None (a dimension of
        constant extent, e.g. `t % 2`)."""
        space = len(self.sizes) - 1
        out: dict[str, list[int | None]] = {}
        for array in self._written():
            writes = [(s, a) for s in self.stmts for a in s.accesses if a.is_write]
            writes = [(s, a) for s, a in writes if a.array is array]
            dims: list[int | None] = []
            for k in range(array.rank):
                follows = [
                    d
                    for d in range(1, space + 1)
                    if all(self._follows(s, a.subscripts[k], d) for s, a in writes)
                ]
                dims.append(follows[0] if len(follows) == 1 else None)
            if sorted(d for d in dims if d) != list(range(1, space + 1)):
                return (
                    f"the writes of {array.name} do not index one dimension by each space "
                    "loop: no tile owns its elements"
                )
            out[array.name] = dims
        return out

    def _follows(self, stmt: Statement, subscript: str, d: int) -> bool:
        x = self.base[stmt.name][d]
        where = " and ".join(stmt.constraints) or "0 = 0"
        text = f"{{ {stmt.tuple_text()} -> [({subscript}) - ({x})] : {where} }}"
        offsets = isl.Map(f"{self.scop.param_prefix}{text}").range()
        return not offsets.is_empty() and offsets.is_singleton()

    def _written(self):
        seen = {a.array.name: a.array for s in self.stmts for a in s.accesses if a.is_write}
        return [seen[name] for name in sorted(seen)]

    def _owned(self, dims, element: list[str], names: list[str] | None = None) -> str:
        """isl constraints: `element` lies in the own region of the tile with coordinates
        `names` (default: the tile parameters), `dims` mapping its dimensions to space loops."""
        names = names or self.names
        parts = []
        for e, d in zip(element, dims):
            if d:
                size, b = self.sizes[d], names[d]
                parts.append(f"{size}*{b} <= {e} < {size}*{b} + {size}")
        return " and ".join(parts)

    def _window(self, first: int) -> isl.UnionMap:
        """TILE -> the instances of its time tile (no integer division: simpler sets)."""
        st, n = self.sizes[0], self.names[0]
        lo = f"{st}*{n} + {first}"
        return self._map(
            lambda s: f"{self.tile} : {lo} <= {self.base[s.name][0]} < {lo} + {st}"
        ).reverse()

    def _own(self, owners) -> isl.UnionMap:
        """TILE -> the instances writing an element it owns (in any time tile)."""
        parts = []
        for s in self.stmts:
            (write,) = [a for a in s.accesses if a.is_write]
            inside = self._owned(owners[write.array.name], write.subscripts)
            parts.append(f"{s.tuple_text()} -> {self.tile} : {inside}")
        relation = isl.UnionMap(f"{self.scop.param_prefix}{{ {'; '.join(parts)} }}")
        return relation.intersect_domain(self.scop.domain()).reverse()

    def _closed(self, own: isl.UnionMap, window: isl.UnionMap) -> isl.UnionMap | None:
        """TILE -> every instance it runs: Own and, round by round, the flow sources (within
        the time tile, `window`) of what the last round found, boxed per time row, until a
        round finds nothing new; it takes about one round per sweep of the tile."""
        domain = self.scop.domain()
        run = box(own, exact=1).intersect_range(domain).coalesce()
        added = run
        for _ in range(2 * self.sizes[0] + 4):
            # the sources of the last round's instances only (not minus `run`: isl's
            # difference of these sets can take seconds)
            added = sources(added, self.deps.flow, domain, exact=1).intersect(window).coalesce()
            if added.is_subset(run):
                return run
            run = run.union(added).coalesce()
        return None

    # -- buffers -----------------------------------------------------------------------------

    def _buffers(self, run: isl.UnionMap, owners) -> list[Buffer] | str:
        scop = self.scop
        accesses = scop.reads().union(scop.writes())
        out = []
        self.halos = [(0, 0)] * (len(self.sizes) - 1)
        for array in self._written():
            cells = isl.UnionSet(f"{scop.param_prefix}{{ {array.name}[{self._es(array)}] }}")
            mine = accesses.intersect_range(cells)
            (accessed,) = _sets(mine.range())
            # boxed per value of the leading dimensions no space loop follows (the `%2`
            # planes): a box across planes would take in elements no plane touches
            lead = next((k for k, d in enumerate(owners[array.name]) if d), array.rank)
            whole = box(isl.UnionMap.from_range(isl.UnionSet.from_set(accessed)), lead).range()
            (whole,) = _sets(whole.coalesce())
            footprint = run.apply_range(mine)
            lows, extents = [], []
            for k, d in enumerate(owners[array.name]):
                if d:
                    size, b = self.sizes[d], self.names[d]
                    e = f"_e{k}"
                    left = _max(footprint, array, f"{size}*{b} - {e}", self)
                    right = _max(footprint, array, f"{e} - {size}*{b} - {size - 1}", self)
                    if left is None or right is None:
                        return (
                            f"the tiles' halo in {array.name} grows with the tile's position "
                            "(a sweep reads values of the same sweep): no bounded overlap"
                        )
                    old = self.halos[d - 1]
                    self.halos[d - 1] = (max(old[0], left), max(old[1], right))
                    lows.append((d, size, -left))
                    extents.append(size + left + right)
                else:
                    low, high = whole.dim_min(k), whole.dim_max(k)
                    if not (low.is_cst() and high.is_cst()):
                        return (
                            f"dimension {k} of {array.name} follows no space loop and has no "
                            "constant extent"
                        )
                    lo = low.min_val().to_python()
                    lows.append((None, 0, lo))
                    extents.append(high.max_val().to_python() - lo + 1)
            total = 1
            for x in extents:
                total *= x
            if total > _MAX_PRIVATE:
                return f"a tile's private copy of {array.name} would hold {total} elements"
            out.append(Buffer(array, lows, extents, whole))
        return out

    def _es(self, array) -> str:
        return ", ".join(f"_e{k}" for k in range(array.rank))

    def _subscripts(self, buffers: list[Buffer]) -> dict[int, tuple[str, list[isl.AstExpr]]]:
        """The subscripts of every access to a written array, as AST expressions in the
        statement's iterators (parameters here) and the SCoP's parameters."""
        written = {b.array.name for b in buffers}
        out = {}
        for s in self.scop.statements:
            params = ", ".join([*self.scop.params, *s.iterators])
            where = " and ".join(s.constraints) or "0 = 0"
            build = isl.AstBuild.from_context(isl.Set(f"[{params}] -> {{ : {where} }}"))
            for a in s.accesses:
                if a.array.name in written:
                    out[id(a.instruction)] = (
                        a.array.name,
                        [
                            build.expr_from_pw_aff(isl.PwAff(f"[{params}] -> {{ [({e})] }}"))
                            for e in a.subscripts
                        ],
                    )
        return out

    # -- programs ----------------------------------------------------------------------------

    def _tiles(self, time: isl.UnionMap, buffers: list[Buffer]) -> isl.Set:
        """TILE[n, b..]: every time tile x every space tile owning an accessed element."""
        (steps,) = _sets(time.range())
        names = ["_n", *(f"_b{d}" for d in range(1, len(self.sizes)))]
        owned = None
        for buf in buffers:
            es = [f"_e{k}" for k in range(buf.array.rank)]
            owner = isl.Map(
                f"{self.scop.param_prefix}{{ {buf.array.name}[{', '.join(es)}] -> "
                f"[{', '.join(names[1:])}] : {self._owned(buf.owners, es, names)} }}"
            )
            region = buf.cells.apply(owner)
            owned = region if owned is None else owned.union(region)
        return steps.flat_product(owned.coalesce()).set_tuple_name("TILE").coalesce()

    def _outer(self, tiles: isl.Set, buffers: list[Buffer]) -> isl.Schedule:
        """Time tiles in order; the space tiles of one in parallel (the first coordinate);
        then, if the last time tile wrote the shadows, their copy back."""
        prefix = self.scop.param_prefix
        members = ", ".join(f"{{ {self.tile} -> [({n})] }}" for n in self.names)
        node = isl.Schedule.from_domain(isl.UnionSet.from_set(tiles)).get_root().child(0)
        node = node.insert_partial_schedule(isl.MultiUnionPwAff(f"{prefix}[{members}]"))
        node = node.band_split(1).child(0)
        if node.band_n_member() > 1:
            node = node.band_split(1)
        outer = node.insert_mark(isl.Id(PARALLEL_MARK)).get_schedule()
        steps = tiles.project_out(isl.dim_type.set, 1, len(self.sizes) - 1)
        last = steps.lexmax()
        even = last.intersect(isl.Set(f"{prefix}{{ [_n] : _n mod 2 = 0 }}")).params()
        for buf in buffers:
            cells = buf.cells.set_tuple_name(f"BACK_{buf.array.name}").intersect_params(even)
            outer = outer.sequence(_loops(cells))
        return outer

    def _inner(self, run: isl.UnionMap, buffers: list[Buffer]) -> isl.Schedule:
        """One tile: copy in its private boxes, its instances in the original order, copy out
        the elements it owns."""
        params = ", ".join([*self.scop.params, *self.names])
        point = isl.UnionSet(f"[{params}] -> {{ {self.tile} }}")
        instances = point.apply(run).coalesce()
        schedule = None
        for buf in buffers:
            schedule = _then(schedule, _loops(self._copy(buf, "COPYIN", buf.box_text(self.names))))
        schedule = _then(schedule, bands.atomic(self.scop.schedule().intersect_domain(instances)))
        for buf in buffers:
            own = self._owned(buf.owners, [f"_e{k}" for k in range(buf.array.rank)])
            schedule = _then(schedule, _loops(self._copy(buf, "COPYOUT", own)))
        return schedule

    def _copy(self, buf: Buffer, kind: str, where: str) -> isl.Set:
        params = ", ".join([*self.scop.params, *self.names])
        region = isl.Set(
            f"[{params}] -> {{ {buf.array.name}[{self._es(buf.array)}] : {where or '0 = 0'} }}"
        )
        return region.intersect(buf.cells).set_tuple_name(f"{kind}_{buf.array.name}")


def _max(footprint: isl.UnionMap, array, expression: str, plan: _Plan) -> int | None:
    """The largest value of `expression` (in the tile coordinates and e0..) over the
    footprint of `array` (0 if empty), None if unbounded."""
    maps = [m for m in _maps(footprint) if m.get_tuple_name(isl.dim_type.out) == array.name]
    best = 0
    for m in maps:
        es = ", ".join(f"_e{k}" for k in range(array.rank))
        aff = isl.Aff(
            f"{plan.scop.param_prefix}{{ [{plan.tile} -> {array.name}[{es}]] -> [({expression})] }}"
        )
        value = m.wrap().max_val(aff)
        if value.is_infty():
            return None
        if not value.is_neginfty() and not value.is_nan():
            best = max(best, value.to_python())
    return best


def _loops(cells: isl.Set) -> isl.Schedule:
    """A schedule running `cells` in lexicographic order (one loop per dimension)."""
    schedule = isl.Schedule.from_domain(isl.UnionSet.from_set(cells))
    n = cells.dim(isl.dim_type.set)
    name = cells.get_tuple_name()
    es = ", ".join(f"_e{k}" for k in range(n))
    members = ", ".join(f"{{ {name}[{es}] -> [(_e{k})] }}" for k in range(n))
    space = cells.get_space().params()
    params = ", ".join(
        space.get_dim_name(isl.dim_type.param, k) for k in range(space.dim(isl.dim_type.param))
    )
    band = isl.MultiUnionPwAff(f"[{params}] -> [{members}]")
    node = schedule.get_root().child(0).insert_partial_schedule(band)
    return bands.atomic(node.get_schedule())


def _then(first: isl.Schedule | None, second: isl.Schedule) -> isl.Schedule:
    return second if first is None else first.sequence(second)


def _sets(union: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    union.foreach_set(out.append)
    return out


def _maps(union: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    union.foreach_map(out.append)
    return out
