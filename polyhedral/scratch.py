"""Private buffers and shadow copies of overlapped time tiles (`overlap-tile`), code side.

Tiles of one time tile run at once and recompute each other's halos, so they must not share
the arrays they write: a tile that overwrites an element its neighbour still has to read (the
`A[(t+1)%2]` form writes over the state two steps back) gives wrong results. So:

- every written array X has one *shadow* for the whole call (malloc'ed with the byte layout of
  X's accessed box, addressed like X through a moved base); time tile n reads its input state
  from `src` and writes its output state to `dst`: (X, shadow) for even n, (shadow, X) for odd
  n; if the last time tile wrote the shadow, it is copied back (`BACK_X` statements);
- each tile copies the box of its footprint of X from `src` into a *private* buffer
  (`COPYIN_X`), runs its instances with every access to X redirected to the private buffer
  (`P[e - lo]`, from the access's affine subscripts), and copies the elements it owns from the
  private buffer to `dst` (`COPYOUT_X`); private buffers are malloc'ed once per function that
  runs tiles (the outlined parallel body: once per chunk of tiles, per thread) and freed on
  return.

Why the values are bit-identical: a tile runs its instances in the original order, and every
value an instance reads comes either from an instance of the same time tile, which the tile
runs too (closure, checked with isl) and nothing the tile runs writes the element in between
(the original order has no write in between), or from before the time tile, which the private
buffer holds from the copy-in until the tile writes the element (no write before the read in
the original order). The last write of each owned element is the tile's (coverage), and
elements the time tile does not write keep their copied-in value: `dst` gets the complete state
after the time tile.

`PYCC_POISON_SCRATCH=1` when the code is generated fills shadows and private buffers with NaN
bytes (0xff) at allocation, so a value read without having been copied in shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl
from llvmlite import ir

from ..ir_passes.core.affine import size_of
from ..ir_passes.core.rewrite import remap_operands
from .codegen import I64, TwoLevel, allocate, release
from .scop import Array

_I8 = ir.IntType(8)
_KINDS = ("COPYIN", "COPYOUT", "BACK")


@dataclass(eq=False)
class Buffer:
    """The private box of one written array: dimension k starts at lo_k = scale * tile_d +
    constant (`lows[k] = (d, scale, constant)`, d None: a constant start) and spans
    `extents[k]` elements; `cells` is the box of the array's accessed elements."""

    array: Array
    lows: list[tuple[int | None, int, int]]
    extents: list[int]
    cells: isl.Set

    @property
    def owners(self) -> list[int | None]:
        return [d for d, _, _ in self.lows]

    def box_text(self, tiles: list[str]) -> str:
        """isl constraints on e0..: inside the box of the tile with coordinates `tiles`."""
        parts = []
        for k, ((d, scale, constant), extent) in enumerate(zip(self.lows, self.extents)):
            low = f"{scale}*{tiles[d]} + {constant}" if d else str(constant)
            parts.append(f"{low} <= _e{k} < {low} + {extent}")
        return " and ".join(parts)

    @property
    def bytes(self) -> int:
        total = size_of(self.array.element)
        for extent in self.extents:
            total *= extent
        return total


@dataclass
class ScratchPlan:
    """What the code of overlapped tiles needs besides the schedules: the buffers, the
    subscripts of the accesses to redirect (by id of the load/store), the tile parameters
    (the first counts time tiles), and, while generating, the shadows' IR values."""

    buffers: list[Buffer]
    subscripts: dict[int, tuple[str, list[isl.AstExpr]]]
    tiles: list[str]
    shadows: dict[str, tuple[ir.Value, ir.Value]] = field(default_factory=dict)
    first_block: ir.Block | None = None

    # -- the generator's hooks ---------------------------------------------------------------

    def open(self, gen, build: isl.AstBuild) -> None:
        """At the start of the tiled code: allocate the shadows; private buffers of tiles the
        function runs itself are allocated here too (lazily, in the same block)."""
        b = gen.builder
        for buf in self.buffers:
            first, last = self._span(gen, buf, build)
            memory = allocate(b, b.sub(last, first))
            moved = b.gep(memory, [b.sub(b.ptrtoint(buf.array.base, I64), first)], source_etype=_I8)
            self.shadows[buf.array.name] = (memory, moved)
        self.enter(gen, b)
        gen.builder = ir.IRBuilder(gen.function.append_basic_block("poly.tiles"))
        self.first_block = gen.builder.block

    def close(self, gen) -> None:
        """After the tiled code: free everything `open` and the tiles allocated."""
        self.leave(gen)
        for memory, _ in self.shadows.values():
            release(gen.builder, memory)
        gen.frame.builder.branch(self.first_block)
        gen.frame = None

    def enter(self, gen, builder: ir.IRBuilder) -> None:
        """`gen` allocates its private buffers with `builder` (a block before all its code)."""
        gen.frame = _Frame(builder)

    def leave(self, gen) -> None:
        for memory in gen.frame.buffers.values():
            release(gen.builder, memory)

    def emits(self, name: str) -> bool:
        kind, _, array = name.partition("_")
        return kind in _KINDS and any(buf.array.name == array for buf in self.buffers)

    def emit(self, gen, name: str, args: list[ir.Value]) -> None:
        """A copy statement: COPYIN_X[e] (src -> private), COPYOUT_X[e] (private -> dst),
        BACK_X[e] (shadow -> X)."""
        kind, _, array = name.partition("_")
        buf = self._buffer(array)
        b = gen.builder
        caller = gen.external(buf.array.base)
        shadow = gen.external(self.shadows[array][1])
        if kind == "BACK":
            source = self._element(gen, buf, shadow, args)
            _move(b, buf, source, self._element(gen, buf, caller, args))
            return
        phase = b.and_(gen.ids[self.tiles[0]], ir.Constant(I64, 1))
        even = b.icmp_signed("==", phase, ir.Constant(I64, 0))
        private = self._private(gen, buf, args)
        if kind == "COPYIN":
            src = b.select(even, caller, shadow)
            _move(b, buf, self._element(gen, buf, src, args), private)
        else:
            dst = b.select(even, shadow, caller)
            _move(b, buf, private, self._element(gen, buf, dst, args))

    def redirect(self, gen, instr: ir.Instruction, clone: ir.Instruction) -> None:
        """Make `clone` (a copy of the access `instr`) use the tile's private buffer."""
        access = self.subscripts.get(id(instr))
        if access is None:
            return
        array, exprs = access
        gen.builder.position_before(clone)
        pointer = self._private(gen, self._buffer(array), [gen.expr(e) for e in exprs])
        old = clone.operands[0] if clone.opname == "load" else clone.operands[1]
        remap_operands(clone, lambda v: pointer if v is old else v)

    # -- addresses ---------------------------------------------------------------------------

    def _buffer(self, array: str) -> Buffer:
        return next(buf for buf in self.buffers if buf.array.name == array)

    def _element(self, gen, buf: Buffer, base: ir.Value, es: list[ir.Value]) -> ir.Value:
        """&X[e] for an array laid out like X at `base`."""
        b = gen.builder
        flat = es[0]
        for size, e in zip(reversed(buf.array.sizes), es[1:]):  # sizes: innermost first
            flat = b.add(b.mul(flat, gen.extent(size), flags=["nsw"]), e, flags=["nsw"])
        return b.gep(base, [flat], source_etype=buf.array.element)

    def _span(self, gen, buf: Buffer, build: isl.AstBuild) -> tuple[ir.Value, ir.Value]:
        """[first byte, one past the last byte] of the array's accessed box, as i64."""
        b = gen.builder
        corners = []
        for bound in (buf.cells.dim_min, buf.cells.dim_max):
            es = [gen.expr(build.expr_from_pw_aff(bound(k))) for k in range(buf.array.rank)]
            corners.append(b.ptrtoint(self._element(gen, buf, buf.array.base, es), I64))
        size = ir.Constant(I64, size_of(buf.array.element))
        return corners[0], b.add(corners[1], size)

    def _private(self, gen, buf: Buffer, es: list[ir.Value]) -> ir.Value:
        """&P[e - lo] in the private buffer of `buf` of the tile being run."""
        b = gen.builder
        flat = None
        for e, (d, scale, constant), extent in zip(es, buf.lows, buf.extents):
            low = ir.Constant(I64, constant)
            if d:
                tile = b.mul(gen.ids[self.tiles[d]], ir.Constant(I64, scale), flags=["nsw"])
                low = b.add(tile, low, flags=["nsw"])
            offset = b.sub(e, low, flags=["nsw"])
            if flat is not None:
                scaled = b.mul(flat, ir.Constant(I64, extent), flags=["nsw"])
                offset = b.add(scaled, offset, flags=["nsw"])
            flat = offset
        frame = gen.frame
        if buf.array.name not in frame.buffers:
            size = ir.Constant(I64, buf.bytes)
            frame.buffers[buf.array.name] = allocate(frame.builder, size)
        return b.gep(frame.buffers[buf.array.name], [flat], source_etype=buf.array.element)


@dataclass
class Overlapped(TwoLevel):
    """A TwoLevel program whose tiles run on private buffers (see the module docstring)."""

    plan: ScratchPlan | None = None


class _Frame:
    """Where one generated function allocates its private buffers, and which it has."""

    def __init__(self, builder: ir.IRBuilder):
        self.builder = builder
        self.buffers: dict[str, ir.Value] = {}


def _move(b: ir.IRBuilder, buf: Buffer, source: ir.Value, target: ir.Value) -> None:
    b.store(b.load(source, typ=buf.array.element), target)
