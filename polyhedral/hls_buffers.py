"""On-chip stencil caches for an FPGA (Mayer, Brandner, Philippsen, IMPACT'24): which buffer
each access of a tiled loop nest gets, how big, and which intra-tile loop order needs least.

The nest (one perfect, rectangular SCoP) is tiled by sizes SZ, its intra-tile loops run in an
order p (outermost first). The working set of an access (or of a group of accesses to one
array) in one tile has a bounding box; a box of constant extents is a buffer:

- *full*: the box of the whole tile, filled before it and flushed after it;
- *chunk*: the box of one iteration of the outermost intra-tile loop `l_1`, which moves by one
  element along a single array dimension per iteration (shifted on chip, the new slice read
  from memory) and whose innermost array dimension is walked by the innermost loop (bursts);
- *line*: a chunk that is one row of the array (extent 1 in every dimension but the last);
  Fig. 4 of the paper gives V[i,k,j] under p=(i,k,j) a chunk [1,32,32], not the line [1,1,32]
  that fixing every loop but the innermost would give, and its costs (36 961 vs 34 946) need
  that reading;
- *nc*: no buffer (the box is not constant, or dependent accesses do not share data in a tile).

Accesses to one array are grouped first, independently of the order: accesses that may touch
the same element where one of them writes (dependent) share one buffer, or are all nc if two
of them share nothing within a tile; other accesses whose tile working sets intersect are
fused when the union's full box is smaller than their boxes together (the paper's size test,
made on full tiles: it fuses A[i,j,k] and A[i+1,j+1,k+1] (33^3 < 2 * 32^3), whose fused chunk
[2,33,33] is then larger than two separate chunks, as in its Fig. 4). With a burst width w,
a buffer's innermost extent holds the left halo (the misalignment of its first element) and
is rounded up to w; where that is not the same in every tile (an innermost tile size or row
length not divisible by w, a bound that is a parameter) the buffer keeps w = 1.

The order chosen has the fewest nc accesses, then the least on-chip words, then the faster
buffers (line before chunk before full). Rectangular tiles need every dependence distance
non-negative; then every order is legal.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl

from .deps import compute_dependences
from .scop import Access, LoopNode, Scop, Statement

#: deepest nest planned: the orders tried are d!
MAX_DEPTH = 4
#: buffer kinds, fastest first (the tie-break between orders of equal size)
KINDS = ("line", "chunk", "full")
_ORIGIN = "__tile"  # parameter names of the tile origin, one per loop
_STEP = "__step"  # the iteration of l_1 a chunk is taken at


@dataclass(frozen=True)
class NestAccess:
    """One array access of the nest's statements."""

    statement: Statement
    access: Access

    @property
    def array(self) -> str:
        return self.access.array.name

    @property
    def is_write(self) -> bool:
        return self.access.is_write


@dataclass(frozen=True)
class Nest:
    """A perfect nest of `depth` loops over a rectangular domain (the loops' iterators are
    those of every statement after the `outer` ones, the iterators of the loops around it,
    which are parameters here) and its accesses, in program order."""

    scop: Scop
    iterators: tuple[str, ...]
    accesses: tuple[NestAccess, ...]
    lower_bounds: tuple[int | None, ...]  # constant lower bound of each loop, if any
    statements: tuple[Statement, ...] = ()
    outer: tuple[str, ...] = ()

    @property
    def depth(self) -> int:
        return len(self.iterators)

    @property
    def params(self) -> list[str]:
        """The SCoP's parameters and the iterators of the loops around the nest."""
        return [*self.scop.params, *self.outer]


@dataclass(frozen=True)
class OuterLoop:
    """A loop kept as it is around nests that are tiled (a time loop): its iterator, its
    position among the statements' iterators, and what it runs, in order."""

    iterator: str
    position: int
    body: tuple[OuterLoop | Nest, ...]


@dataclass(frozen=True)
class Buffer:
    """The buffer of one group of accesses to `array` (indices into `Nest.accesses`)."""

    array: str
    accesses: tuple[int, ...]
    kind: str  # "full", "chunk", "line" or "nc"
    box: tuple[int, ...] = ()  # extents of the working set, per array dimension
    extent: tuple[int, ...] = ()  # as declared: left halo and rounding to the burst width
    left_halo: int = 0
    burst: int = 1  # w the buffer is shipped with
    shift_dim: int | None = None  # chunk, line: the array dimension that moves with l_1
    reason: str = ""  # nc: why

    @property
    def words(self) -> int:
        size = 1
        for extent in self.extent:
            size *= extent
        return 0 if self.kind == "nc" else size

    def describe(self) -> str:
        if self.kind == "nc":
            return f"{self.array}: nc ({self.reason})"
        shape = ",".join(map(str, self.extent))
        return f"{self.array}: {self.kind} [{shape}]"


@dataclass(frozen=True)
class Plan:
    """The buffers of one intra-tile loop order (`order`: loop indices, outermost first)."""

    sizes: tuple[int, ...]
    order: tuple[int, ...]
    buffers: tuple[Buffer, ...]

    @property
    def words(self) -> int:
        return sum(b.words for b in self.buffers)

    def rank(self) -> tuple:
        kinds = [b.kind for b in self.buffers]
        uncached = sum(len(b.accesses) for b in self.buffers if b.kind == "nc")
        return (uncached, self.words, kinds.count("full"), kinds.count("chunk"), self.order)


class NotPlannable(Exception):
    """The nest is outside what the buffers model (the reason names the construct)."""


# ------------------------------------------------------------------------------ the nest


def nest_tree(scop: Scop) -> list[OuterLoop | Nest]:
    """The SCoP's loops as perfect rectangular nests to tile, in the loops around them
    (kept), or NotPlannable saying why not."""
    return [_node(scop, node, ()) for node in scop.nests]


def _node(scop: Scop, node: LoopNode, outer: tuple[str, ...]) -> OuterLoop | Nest:
    """A perfect nest, tiled if rectangular tiles are legal; if they are not, the outermost
    loop of the SCoP's nest is kept (a time loop around a sweep of two loops or more:
    star-3d) and the sweep tiled alone, if its tiles are legal. A nest of two loops is not
    split (F7: in-place A[i][j] = A[i - 1][j + 1] is refused, not tiled row by row)."""
    if _is_perfect(node):
        nest = _perfect_nest(scop, node, outer)
        if fully_permutable(nest):
            return nest
        if nest.depth < 3 or outer:  # a time loop kept once, around a sweep of 2+ loops
            raise NotPlannable(
                "a dependence distance is negative in a loop: rectangular tiles are illegal"
            )
    if any(isinstance(child, Statement) for child in node.children):
        raise NotPlannable("not a perfect loop nest (statements between its loops)")
    inner = (*outer, node.iterator)
    body = tuple(_node(scop, child, inner) for child in node.children)
    return OuterLoop(node.iterator, len(outer), body)


def _is_perfect(node: LoopNode) -> bool:
    while True:
        loops = [c for c in node.children if isinstance(c, LoopNode)]
        if not loops:
            return True
        if len(node.children) != 1:
            return False
        node = loops[0]


def _perfect_nest(scop: Scop, node: LoopNode, outer: tuple[str, ...]) -> Nest:
    iterators = []
    while True:
        iterators.append(node.iterator)
        loops = [c for c in node.children if isinstance(c, LoopNode)]
        if not loops:
            break
        node = loops[0]
    if len(iterators) > MAX_DEPTH:
        raise NotPlannable(f"{len(iterators)} nested loops (at most {MAX_DEPTH} are planned)")
    statements = node.statements()
    domain = leaf_domain(scop, outer, statements[0])
    for statement in statements:
        mine = statement.iterators[len(outer) :]
        if mine != iterators or not leaf_domain(scop, outer, statement).is_equal(domain):
            raise NotPlannable("its statements run over different domains")
    if not _is_rectangular(domain):
        raise NotPlannable("the iteration domain is not rectangular (a bound depends on a loop)")
    accesses = tuple(NestAccess(s, a) for s in statements for a in s.accesses)
    lows = tuple(constant_value(domain.dim_min(k)) for k in range(len(iterators)))
    return Nest(scop, tuple(iterators), accesses, lows, tuple(statements), outer)


def leaf_domain(scop: Scop, outer: tuple[str, ...], statement: Statement) -> isl.Set:
    """The statement's points for one iteration of the loops around its nest, in an
    anonymous space (statements compared by their points)."""
    constraints = " and ".join(statement.constraints) or "0 = 0"
    params = ", ".join([*scop.params, *outer])
    iterators = ", ".join(statement.iterators[len(outer) :])
    return isl.Set(f"[{params}] -> {{ [{iterators}] : {constraints} }}").coalesce()


def _is_rectangular(domain: isl.Set) -> bool:
    """Every constraint bounds one loop: the domain is a box (in the parameters)."""
    pieces = domain.get_basic_sets()
    if len(pieces) != 1:
        return False
    for constraint in pieces[0].get_constraints():
        loops = sum(
            not constraint.get_coefficient_val(isl.dim_type.set, k).is_zero()
            for k in range(domain.dim(isl.dim_type.set))
        )
        if loops > 1 or constraint.involves_dims(
            isl.dim_type.div, 0, pieces[0].dim(isl.dim_type.div)
        ):
            return False
    return True


def constant_value(value: isl.PwAff) -> int | None:
    """The value of an expression that is one constant, else None."""
    pieces = value.coalesce().get_pieces()
    if len(pieces) != 1 or not pieces[0][1].is_cst():
        return None
    return pieces[0][1].get_constant_val().to_python()


def fully_permutable(nest: Nest) -> bool:
    """Every dependence distance between the nest's points in one iteration of the loops
    around it is non-negative in every loop: rectangular tiles are legal, in any intra-tile
    order."""
    names = ", ".join([*nest.outer, *nest.iterators])
    parts = [f"{s.tuple_text()} -> [{names}]" for s in nest.statements]
    loops = isl.UnionMap(f"{{ {'; '.join(parts)} }}")
    dependences = compute_dependences(nest.scop).all
    distances = dependences.apply_domain(loops).apply_range(loops).deltas()
    same = " and ".join(f"{o} = 0" for o in nest.outer) or "0 = 0"
    for k in range(len(nest.outer), len(nest.outer) + nest.depth):
        negative = isl.UnionSet(f"{{ [{names}] : {same} and {names.split(', ')[k]} < 0 }}")
        if not distances.intersect(negative).is_empty():
            return False
    return True


# ------------------------------------------------------------------------------ working sets


class _Geometry:
    """Working sets of the nest's accesses in a tile at origin `__tile<k>` of sizes SZ, and
    in one iteration `__step` of the outermost intra-tile loop."""

    def __init__(self, nest: Nest, sizes: tuple[int, ...]):
        self.nest, self.sizes = nest, sizes
        self.origins = [f"{_ORIGIN}{k}" for k in range(nest.depth)]
        params = [*nest.params, *self.origins, _STEP]
        self.prefix = f"[{', '.join(params)}] -> "
        self.maps = [self._access_map(a) for a in nest.accesses]

    def _access_map(self, item: NestAccess) -> isl.Map:
        subscripts = ", ".join(item.access.subscripts)
        text = f"{{ [{', '.join(self.nest.iterators)}] -> {item.array}[{subscripts}] }}"
        return isl.Map(self.prefix + text)

    def region(self, fixed: int | None = None) -> isl.Set:
        """The points of a full tile; with `fixed` (a loop index), of iteration `__step` of
        that loop within it."""
        bounds = []
        for k, (name, origin, size) in enumerate(
            zip(self.nest.iterators, self.origins, self.sizes)
        ):
            if k == fixed:
                bounds.append(f"{name} = {origin} + {_STEP} and 0 <= {_STEP} < {size}")
            else:
                bounds.append(f"{origin} <= {name} < {origin} + {size}")
        return isl.Set(
            f"{self.prefix}{{ [{', '.join(self.nest.iterators)}] : {' and '.join(bounds)} }}"
        )

    def working_set(self, group: tuple[int, ...], fixed: int | None = None) -> isl.Set:
        region = self.region(fixed)
        found = None
        for index in group:
            part = region.apply(self.maps[index])
            found = part if found is None else found.union(part)
        return found.coalesce()

    def box(self, working_set: isl.Set) -> tuple[int, ...] | None:
        """Constant extents of the bounding box, or None."""
        extents = []
        for k in range(working_set.dim(isl.dim_type.set)):
            extent = constant_value(working_set.dim_max(k).sub(working_set.dim_min(k)))
            if extent is None:
                return None
            extents.append(extent + 1)
        return tuple(extents)

    def lows(self, working_set: isl.Set) -> list[isl.Aff | None]:
        """The box's lowest index per dimension, as one affine expression each if it is one."""
        found = []
        for k in range(working_set.dim(isl.dim_type.set)):
            pieces = working_set.dim_min(k).coalesce().get_pieces()
            found.append(pieces[0][1] if len(pieces) == 1 else None)
        return found

    def coefficient(self, aff: isl.Aff, parameter: str) -> int:
        position = aff.get_space().find_dim_by_name(isl.dim_type.param, parameter)
        if position < 0:
            return 0
        return aff.get_coefficient_val(isl.dim_type.param, position).to_python()

    def coefficients(self, index: int, loop: int) -> list[int] | None:
        """Per array dimension, the coefficient of `loop` in the access's subscript (None:
        a subscript is not one affine expression)."""
        found = []
        subscripts = self.maps[index].as_pw_multi_aff()
        for k in range(subscripts.dim(isl.dim_type.out)):
            pieces = subscripts.get_pw_aff(k).get_pieces()
            if len(pieces) != 1:
                return None
            found.append(pieces[0][1].get_coefficient_val(isl.dim_type.in_, loop).to_python())
        return found

    def walks_rows(self, group: tuple[int, ...], loop: int) -> bool:
        """Does `loop` walk the innermost (contiguous) dimension of every access of `group`
        one element a step (what a burst reads; not a flattened row's stride)?"""
        for index in group:
            found = self.coefficients(index, loop)
            if found is None or abs(found[-1]) != 1:
                return False
        return True

    def row_dimension(self, group: tuple[int, ...], loop: int) -> int | None:
        """The array dimension `loop` walks one element a step in every access of `group`
        (and no other dimension), if there is one."""
        dims = set()
        for index in group:
            found = self.coefficients(index, loop)
            if found is None or sorted(found) != [0] * (len(found) - 1) + [1]:
                return None
            dims.add(found.index(1))
        return dims.pop() if len(dims) == 1 else None


# ------------------------------------------------------------------------------ groups


def access_groups(
    nest: Nest, sizes: tuple[int, ...], fusion: bool = True
) -> list[tuple[tuple[int, ...], str]]:
    """The groups of accesses that share a buffer (order-independent), each with "" or the
    reason it is nc: dependent accesses together, others fused by the size test."""
    geometry = _Geometry(nest, sizes)
    groups: list[tuple[tuple[int, ...], str]] = []
    for array in dict.fromkeys(a.array for a in nest.accesses):
        members = [k for k, a in enumerate(nest.accesses) if a.array == array]
        for component in _dependent_components(nest, members):
            if len(component) > 1 and not _all_intersect(geometry, component):
                why = "dependent accesses that share no data within a tile"
                groups.append((component, why))
            else:
                groups.append((component, ""))
    return _fused(geometry, groups) if fusion else groups


def _dependent_components(nest: Nest, members: list[int]) -> list[tuple[int, ...]]:
    """Accesses of one array linked by a possible dependence (a write and another access that
    may touch one element), as connected components in program order."""
    domain_maps = {k: _touched(nest, k) for k in members}
    parent = {k: k for k in members}

    def root(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    for a, b in itertools.combinations(members, 2):
        if not (nest.accesses[a].is_write or nest.accesses[b].is_write):
            continue
        if not domain_maps[a].intersect(domain_maps[b]).is_empty():
            parent[root(b)] = root(a)
    components: dict[int, list[int]] = {}
    for k in members:
        components.setdefault(root(k), []).append(k)
    return [tuple(c) for c in components.values()]


def _touched(nest: Nest, index: int, one_step: bool = True) -> isl.Set:
    """The elements the access touches over the nest's domain: for one iteration of the
    loops around it (their iterators as parameters), or over all of them."""
    item = nest.accesses[index]
    outer = nest.outer if one_step else ()
    constraints = " and ".join(item.statement.constraints) or "0 = 0"
    iterators = ", ".join(item.statement.iterators[len(outer) :])
    params = ", ".join([*nest.scop.params, *outer])
    text = (
        f"[{params}] -> {{ [{iterators}] -> {item.array}[{', '.join(item.access.subscripts)}]"
        f" : {constraints} }}"
    )
    return isl.Map(text).range()


def _all_intersect(geometry: _Geometry, group: tuple[int, ...]) -> bool:
    sets = [geometry.working_set((k,)) for k in group]
    return all(not a.intersect(b).is_empty() for a, b in itertools.combinations(sets, 2))


def _fused(
    geometry: _Geometry, groups: list[tuple[tuple[int, ...], str]]
) -> list[tuple[tuple[int, ...], str]]:
    """Groups of one array merged while the union of two has a constant full box smaller than
    their boxes together, and their tile working sets intersect."""
    merged = True
    while merged:
        merged = False
        for (a, why_a), (b, why_b) in itertools.combinations(groups, 2):
            if (
                why_a
                or why_b
                or geometry.nest.accesses[a[0]].array != geometry.nest.accesses[b[0]].array
            ):
                continue
            first, second = geometry.working_set(a), geometry.working_set(b)
            if first.intersect(second).is_empty():
                continue
            union = geometry.box(first.union(second))
            alone = [geometry.box(first), geometry.box(second)]
            if union is None or None in alone:
                continue
            if _product(union) < sum(_product(box) for box in alone):
                groups = [g for g in groups if g[0] not in (a, b)] + [(tuple(sorted(a + b)), "")]
                merged = True
                break
    return sorted(groups, key=lambda g: g[0])


def _product(values: tuple[int, ...]) -> int:
    size = 1
    for value in values:
        size *= value
    return size


# ------------------------------------------------------------------------------ buffers


def plan(
    nest: Nest,
    sizes: tuple[int, ...],
    order: tuple[int, ...],
    burst: int = 1,
    groups: list[tuple[tuple[int, ...], str]] | None = None,
) -> Plan:
    """The buffers of the nest tiled by `sizes` with intra-tile loop order `order`."""
    if len(sizes) != nest.depth or sorted(order) != list(range(nest.depth)):
        raise ValueError(f"{nest.depth} tile sizes and an order of the {nest.depth} loops needed")
    geometry = _Geometry(nest, sizes)
    groups = access_groups(nest, sizes) if groups is None else groups
    buffers = tuple(_buffer(geometry, group, why, order, burst) for group, why in groups)
    return Plan(sizes, order, buffers)


def _buffer(
    geometry: _Geometry, group: tuple[int, ...], why: str, order: tuple[int, ...], burst: int
) -> Buffer:
    array = geometry.nest.accesses[group[0]].array
    if why:
        return Buffer(array, group, "nc", reason=why)
    whole = geometry.working_set(group)
    full = geometry.box(whole)
    if full is None:
        return Buffer(array, group, "nc", reason="its working set in a tile has no constant box")
    candidates = [_placed(geometry, Buffer(array, group, "full", full), whole, burst)]
    sliced = _chunk(geometry, array, group, order)
    if sliced is not None:
        candidates.append(_placed(geometry, sliced, whole, burst))
    return min(candidates, key=lambda b: (b.words, KINDS.index(b.kind)))


def _chunk(
    geometry: _Geometry, array: str, group: tuple[int, ...], order: tuple[int, ...]
) -> Buffer | None:
    """The chunk (or line) buffer of the group, if one applies under `order` (two loops at
    least: a single loop is the pipelined one, its whole tile in the buffer)."""
    if len(order) < 2 or not geometry.walks_rows(group, order[-1]):
        return None  # no burst along the rows: the paper's condition (c)
    step = geometry.working_set(group, fixed=order[0])
    box = geometry.box(step)
    if box is None:
        return None
    moves = []
    for low in geometry.lows(step):
        if low is None:
            return None
        moves.append(geometry.coefficient(low, _STEP))
    if sorted(moves) != [0] * (len(moves) - 1) + [1]:
        return None  # it must move by one element along one dimension per iteration of l_1
    line = all(extent == 1 for extent in box[:-1])
    return Buffer(array, group, "line" if line else "chunk", box, shift_dim=moves.index(1))


def _placed(geometry: _Geometry, buffer: Buffer, whole: isl.Set, burst: int) -> Buffer:
    """The buffer with its left halo and innermost extent rounded to `burst` (w = 1 where
    the halo would not be the same in every tile)."""
    halo = _left_halo(geometry, whole, burst) if burst > 1 else None
    if halo is None:
        return _with_extent(buffer, 0, 1)
    return _with_extent(buffer, halo, burst)


def _with_extent(buffer: Buffer, halo: int, burst: int) -> Buffer:
    inner = -(-(halo + buffer.box[-1]) // burst) * burst
    return Buffer(
        buffer.array, buffer.accesses, buffer.kind, buffer.box, (*buffer.box[:-1], inner),
        halo, burst, buffer.shift_dim,
    )  # fmt: skip


def _left_halo(geometry: _Geometry, whole: isl.Set, burst: int) -> int | None:
    """The misalignment of the box's first element in a row, modulo `burst`, if it is the
    same in every tile: the row's lowest index is `tile origin + c` of one loop with a constant
    lower bound and a tile size divisible by w, and the rows' length is divisible by w."""
    nest = geometry.nest
    low = geometry.lows(whole)[-1]
    if low is None:
        return None
    array = next(a.access.array for a in nest.accesses if a.array == whole.get_tuple_name())
    if array.sizes and not (array.sizes[0].isdigit() and int(array.sizes[0]) % burst == 0):
        return None
    loops = [k for k, name in enumerate(geometry.origins) if geometry.coefficient(low, name)]
    others = [p for p in nest.scop.params if geometry.coefficient(low, p)]
    if len(loops) != 1 or others or geometry.coefficient(low, geometry.origins[loops[0]]) != 1:
        return None
    loop = loops[0]
    start = nest.lower_bounds[loop]
    if start is None or geometry.sizes[loop] % burst:
        return None
    offset = low.get_constant_val().to_python()
    return (start + offset) % burst  # tiles start at lb + m * SZ (the outer shift)


# ------------------------------------------------------------------------------ the order


def choose_order(
    nest: Nest, sizes: tuple[int, ...], burst: int = 1, fusion: bool = True
) -> tuple[Plan, list[Plan]]:
    """The plan of the best intra-tile order and the plans of every order (legal ones: the
    nest must be fully permutable, else NotPlannable)."""
    if not fully_permutable(nest):
        raise NotPlannable(
            "a dependence distance is negative in a loop: rectangular tiles are illegal"
        )
    groups = access_groups(nest, sizes, fusion)
    plans = [
        plan(nest, sizes, order, burst, groups)
        for order in itertools.permutations(range(nest.depth))
    ]
    return min(plans, key=Plan.rank), plans


# ------------------------------------------------------------------------------ placement


@dataclass(eq=False)
class Placement:
    """Where one buffer's data lives, for the code generator: its box's lowest element per
    array dimension (in the parameters, the tile origins `__tile<k>` and, for a chunk or
    line, the outermost intra-tile index `__step`); the window of elements its accesses touch
    over the whole domain (what a fill may read) and of those it writes (what a flush may
    write; None: not written); and whether it must be filled before use (all but one write
    that is a translation of the tile: it sets every element of its box the tile owns)."""

    corner: list[isl.Aff]
    read_window: list[tuple[isl.PwAff, isl.PwAff]]
    write_window: list[tuple[isl.PwAff, isl.PwAff]] | None
    filled: bool
    #: a chunk's new slice arrives row by row along this array dimension, which the second
    #: intra-tile loop walks (Fig. 5): `rows_ahead` rows before that loop, one a step after
    row_dim: int | None = None
    rows_ahead: int = 0


def placements(nest: Nest, chosen: Plan) -> list[Placement | None]:
    """The placement of each of the plan's buffers (None for an nc one)."""
    geometry = _Geometry(nest, chosen.sizes)
    found: list[Placement | None] = []
    for buffer in chosen.buffers:
        if buffer.kind == "nc":
            found.append(None)
            continue
        fixed = chosen.order[0] if buffer.kind in ("chunk", "line") else None
        corner = geometry.lows(geometry.working_set(buffer.accesses, fixed))
        writes = [k for k in buffer.accesses if nest.accesses[k].is_write]
        write_window = _window(nest, writes) if writes else None
        only_write = len(buffer.accesses) == 1 and writes
        translation = only_write and _is_translation(geometry, buffer.accesses[0])
        placement = Placement(corner, _window(nest, buffer.accesses), write_window, not translation)
        if fixed is not None and nest.depth >= 3:
            row = geometry.row_dimension(buffer.accesses, chosen.order[1])
            if row is not None and row != buffer.shift_dim:
                placement.row_dim = row
                placement.rows_ahead = buffer.box[row] - chosen.sizes[chosen.order[1]]
        found.append(placement)
    return found


def _window(nest: Nest, group: list[int] | tuple[int, ...]) -> list[tuple[isl.PwAff, isl.PwAff]]:
    """Per array dimension, the lowest and highest element the group touches in the whole
    domain (what a ship may read or write in any tile)."""
    touched = None
    for index in group:
        part = _touched(nest, index, one_step=False)
        touched = part if touched is None else touched.union(part)
    touched = touched.coalesce()
    return [
        (touched.dim_min(k).coalesce(), touched.dim_max(k).coalesce())
        for k in range(touched.dim(isl.dim_type.set))
    ]


def _is_translation(geometry: _Geometry, index: int) -> bool:
    """Does the access map a full tile one to one onto its bounding box?"""
    region = geometry.region()
    access = geometry.maps[index].intersect_domain(region)
    box = geometry.box(region.apply(geometry.maps[index]))
    return access.is_injective() and box is not None and _product(box) == _product(geometry.sizes)
