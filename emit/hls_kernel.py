"""The kernels of `--target hls`: a loop nest tiled with on-chip stencil caches, written as
HLS C (Vitis conventions) whose data movement is `ship` (runtime/hls/pycc_ship.h).

For a function that is one SCoP whose loops are perfect rectangular nests, alone or in
loops kept around them (a time loop: `polyhedral.hls_buffers.nest_tree`), the writer
replaces the function's body by the loops kept and, for each nest, the shape of Fig. 5 of
the IMPACT'24 paper:

- the tile loops, in the original loop order, start at each loop's lower bound (the outer
  shift δᵒ = −lb: no `max`) and step by the tile size;
- each buffer is `static`, completely partitioned (`ARRAY_PARTITION ... complete dim=0`);
  a full buffer is filled before the tile and flushed after it, a chunk (or line) buffer is
  filled but for its last slice before the outermost intra-tile loop, gets its last slice at
  the start of each of its iterations, and at the end flushes its first slice (if written)
  and shifts the others down; ships are clamped to the elements the nest reads, flushes to
  those it writes;
- the intra-tile loops run in the plan's order from 0 (the inner shift δⁱ = −ti), the outer
  ones to the tile's extent (`min`), the innermost to the tile size, padded: a constant trip
  count the HLS tool unrolls inside the loop around it, which is `PIPELINE II=1`;
- the statements read and write the buffers at the array subscript minus the box's corner
  (plus the left halo in the rows); nc accesses use memory directly. A padded iteration
  computes what it computes but writes nothing and reads no memory (every write, and every
  nc read, is guarded by `pycc_inside`): the paper only trims the flush, which is not enough
  when a padded write lands in a slot a later valid iteration reads.

A buffer whose group writes is filled before it is used unless the group is one write that
is a translation of the iteration space (it writes every element of its box the tile owns,
so its flush, trimmed to the written elements, never writes back a slot it did not set).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl
from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.affine import size_of
from ..ir_passes.core.analyses import loops_of
from ..polyhedral.hls_buffers import (
    Buffer,
    Nest,
    NotPlannable,
    OuterLoop,
    Placement,
    Plan,
    choose_order,
    leaf_domain,
    nest_tree,
    placements,
)
from ..polyhedral.scop import extract_scops
from . import c_expressions as cx
from .c_expressions import Expr, atom
from .c_function import FunctionWriter
from .c_types import TypeTable

_INDENT = "    "
#: the paper's large tiles (its §4, Step 1), by the nest's depth
DEFAULT_SIZES = {1: (1024,), 2: (128, 128), 3: (32, 32, 32), 4: (16, 16, 16, 16)}
#: integer divisions, which trap on a zero a padded iteration may read
_DIVISIONS = frozenset(("sdiv", "udiv", "srem", "urem"))
#: calls a statement may contain that do not write memory
_PURE = re.compile(r"llvm\.")


@dataclass(frozen=True)
class HlsOptions:
    """What `--target hls:...` asks of every kernel (None: chosen by the analysis). Tile
    sizes and an order are for nests of their length; a shallower nest takes the innermost
    sizes, another order is ignored for it."""

    sizes: tuple[int, ...] | None = None
    order: tuple[int, ...] | None = None
    burst: int = 1
    padding: bool = True
    fusion: bool = True


@dataclass(frozen=True)
class TiledNest:
    """One nest of a kernel with its buffers."""

    nest: Nest
    plan: Plan
    placements: list[Placement | None]


@dataclass(frozen=True)
class HlsKernel:
    """A function's loops kept (`OuterLoop`s, their bodies of the same kinds) and tiled
    nests, in order."""

    body: tuple[OuterLoop | TiledNest, ...]
    options: HlsOptions

    def nests(self) -> list[TiledNest]:
        found: list[TiledNest] = []

        def walk(items) -> None:
            for item in items:
                if isinstance(item, OuterLoop):
                    walk(item.body)
                else:
                    found.append(item)

        walk(self.body)
        return found


def hls_kernel(function: ir.Function, options: HlsOptions) -> HlsKernel:
    """The function's nests and buffer plans, or NotPlannable saying why it has none."""
    scops, rejected = extract_scops(function)
    if rejected:
        raise NotPlannable(f"a loop nest is not a SCoP: {rejected[0].reason}")
    if len(scops) != 1:
        raise NotPlannable(f"{len(scops)} runs of loop nests (one is planned)")
    scop = scops[0]
    if scop.assumed is not None:
        text = str(scop.assumed)
        condition = text[text.index(":") + 1 : text.rindex("}")].strip() if ":" in text else text
        raise NotPlannable(
            f"the model of its subscripts holds only when {condition} (a run-time assumption)"
        )
    _check_surroundings(function, scop)
    return HlsKernel(tuple(_planned(item, options) for item in nest_tree(scop)), options)


def _planned(item: OuterLoop | Nest, options: HlsOptions) -> OuterLoop | TiledNest:
    if isinstance(item, OuterLoop):
        body = tuple(_planned(child, options) for child in item.body)
        return OuterLoop(item.iterator, item.position, body)  # type: ignore[arg-type]
    nest = item
    if options.padding:
        for statement in nest.statements:
            for instr in value_slice(statement.block):
                if instr.opname in _DIVISIONS and not isinstance(instr.operands[1], ir.Constant):
                    raise NotPlannable(
                        "an integer division or remainder by a variable in the body: a padded "
                        "iteration could divide by zero (padding=off keeps the bounds)"
                    )
    sizes = options.sizes or DEFAULT_SIZES[nest.depth]
    if len(sizes) < nest.depth:
        raise NotPlannable(f"{len(sizes)} tile sizes for {nest.depth} loops")
    sizes = sizes[len(sizes) - nest.depth :]
    best, plans = choose_order(nest, sizes, options.burst, options.fusion)
    if options.order is not None and len(options.order) == nest.depth:
        if sorted(options.order) != list(range(nest.depth)):
            raise NotPlannable(f"order {options.order} is not an order of {nest.depth} loops")
        best = next(p for p in plans if p.order == options.order)
    for buffer in best.buffers:
        if len(buffer.extent) > 8:
            raise NotPlannable(f"{buffer.array} has more than 8 dimensions")
    return TiledNest(nest, best, placements(nest, best))


def _check_surroundings(function: ir.Function, scop) -> None:
    """The function is a straight run of side-effect-free code into the nests, and returns
    after them: the kernel is the nests."""
    nest_blocks = {b for loop in loops_of(function).loops for b in loop.blocks}
    for block in function.blocks:
        if block in nest_blocks or block is scop.entry:
            continue
        for instr in block.instructions:
            if isinstance(instr, ins.StoreInstr) or (
                isinstance(instr, ins.CallInstr) and not _PURE.match(instr.callee.name)
            ):
                raise NotPlannable("the function does more than the loop nests")
        terminator = block.terminator
        if isinstance(terminator, ins.Ret) and terminator.operands:
            raise NotPlannable("the function returns a value")
        if not isinstance(terminator, ins.Ret) and (
            not isinstance(terminator, ins.Branch) or len(terminator.operands) != 1
        ):
            raise NotPlannable("the function branches outside the loop nests")


# ------------------------------------------------------------------------------ the writer


class HlsKernelWriter(FunctionWriter):
    """The function's C with its nests replaced by the tiled, buffered HLS form."""

    def __init__(self, *args, kernel: HlsKernel, **kwargs):
        super().__init__(*args, **kwargs)
        self.kernel = kernel
        scop = kernel.nests()[0].nest.scop
        self.scop = scop
        self.param_names = {name: self.expr(value).text for name, value in scop.params.items()}
        outer = _outer_iterators(kernel.body)
        self.outer_names = {name: f"pycc_o{k}" for k, name in enumerate(outer)}
        statement = scop.statements[0]
        for position in outer.values():
            phi = statement.phis[position]
            self.names[phi] = f"(({self.types.name(phi.type)})pycc_o{position})"
        single = len(kernel.nests()) == 1
        self.writers = [
            _NestWriter(self, tiled, "" if single else f"{q}_")
            for q, tiled in enumerate(kernel.nests())
        ]
        self.owner: dict[ins.Instruction, tuple[_NestWriter, int]] = {}
        for nest_writer in self.writers:
            for k, item in enumerate(nest_writer.nest.accesses):
                self.owner[item.access.instruction] = (nest_writer, k)

    def load(self, instr: ins.LoadInstr) -> Expr:
        if instr not in self.owner:
            return super().load(instr)
        writer, index = self.owner[instr]
        return writer.read(index, instr.type)

    def store(self, instr: ins.StoreInstr) -> str:
        if instr not in self.owner:
            return super().store(instr)
        writer, index = self.owner[instr]
        return writer.write(index, self.expr(instr.operands[0]).text)

    def statement_lines(self, nest: Nest) -> list[str]:
        lines = []
        for statement in nest.statements:
            needed = value_slice(statement.block)
            for instr in statement.block.instructions:
                if instr not in needed or instr in self.inline:
                    continue
                if isinstance(instr, ins.StoreInstr):
                    lines.append(self.store(instr))
                elif instr in self.names:
                    expr = self.instruction(instr)
                    lines.append(f"{self.declared_type(instr)} {self.names[instr]} = {expr.text};")
        return lines

    def definition(self) -> str:
        lines = self.prologue() + self.interfaces()
        for array in self.scop.arrays:
            element = self.types.name(array.element)
            base = self.expr(array.base).text
            lines.append(f"{element} *const pycc_{array.name} = ({element} *)({base});")
        for nest_writer in self.writers:
            lines += nest_writer.descriptors()
        lines += self.items(self.kernel.body, outer=[])
        text = "\n".join(lines)
        used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        unused = [
            f"(void){self.names[a]};" for a in self.function.args if self.names[a] not in used
        ]
        body = [*unused, *lines]
        return "\n".join([self.prototype(), "{", *(_INDENT + x if x else "" for x in body), "}"])

    def items(self, items, outer: list[str]) -> list[str]:
        """The loops kept, around the tiled nests."""
        lines: list[str] = []
        for item in items:
            if isinstance(item, OuterLoop):
                low, high = self.outer_bounds(item, outer)
                name = f"pycc_o{item.position}"
                lines.append(f"for (long {name} = {low}; {name} <= {high}; {name}++) {{")
                inner = self.items(item.body, [*outer, item.iterator])
                lines += [_INDENT + x if x else "" for x in inner]
                lines.append("}")
            else:
                lines += next(w for w in self.writers if w.tiled is item).code()
        return lines

    def outer_bounds(self, loop: OuterLoop, outer: list[str]) -> tuple[str, str]:
        """The first and last iteration of a loop kept, in the parameters and the loops
        around it, over the points of the statements it runs."""
        statements = [
            s
            for w in self.writers
            for s in w.nest.statements
            if w.nest.outer[: len(outer) + 1] == (*outer, loop.iterator)
        ]
        prefix = f"[{', '.join([*self.scop.params, *outer])}] -> "
        domain = None
        for statement in statements:
            part = leaf_domain(self.scop, tuple(outer), statement)
            part = part.project_out(isl.dim_type.set, 1, part.dim(isl.dim_type.set) - 1)
            domain = part if domain is None else domain.union(part)
        build = isl.AstBuild.from_context(isl.Set(prefix + "{ : }"))
        names = {**self.param_names, **self.outer_names}
        return tuple(
            _c(build, bound.coalesce(), names) for bound in (domain.dim_min(0), domain.dim_max(0))
        )  # type: ignore[return-value]

    def prologue(self) -> list[str]:
        """The values the nests use that the function computes before them, in order."""
        needed: set[ins.Instruction] = set()
        for nest_writer in self.writers:
            needed |= _outside_values(nest_writer.nest)
        lines = []
        for block in self.function.blocks:
            for instr in block.instructions:
                if instr in needed and instr in self.names and instr not in self.inline:
                    expr = self.instruction(instr)
                    lines.append(f"{self.declared_type(instr)} {self.names[instr]} = {expr.text};")
        return lines

    def interfaces(self) -> list[str]:
        """An AXI master port per array argument, widened to the burst."""
        lines = []
        arrays = {id(a.base): a for a in self.scop.arrays}
        bundle = 0
        for arg in self.function.args:
            if id(arg) in arrays:
                bits = 8 * size_of(arrays[id(arg)].element) * self.kernel.options.burst
                lines.append(
                    f"#pragma HLS INTERFACE m_axi port={self.names[arg]} offset=slave "
                    f"bundle=gmem{bundle} max_widen_bitwidth={bits}"
                )
                bundle += 1
        return lines


def _outer_iterators(items) -> dict[str, int]:
    """The iterators of the loops kept, by their position among a statement's iterators."""
    found: dict[str, int] = {}
    for item in items:
        if isinstance(item, OuterLoop):
            found[item.iterator] = item.position
            found.update(_outer_iterators(item.body))
    return found


def _c(build: isl.AstBuild, value: isl.PwAff, names: dict[str, str]) -> str:
    """C text of an isl expression (in some of the build's parameters), its names replaced
    by the C of `names`."""
    value = value.align_params(build.get_schedule_space())
    text = build.expr_from_pw_aff(value).to_C_str()
    text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: names.get(m.group(0), m.group(0)), text)
    # a piecewise value (`N >= 3 ? N - 2 : 0`) is an operand of the `+ 1`s written after it
    return f"({text})" if re.search(r"[?<>=&|]", text) else text


class _NestWriter:
    """The C of one tiled nest: its tile loops, buffers, ships and statements. Its names
    carry `tag` when the kernel has several nests."""

    def __init__(self, function: HlsKernelWriter, tiled: TiledNest, tag: str):
        self.function, self.tiled, self.tag = function, tiled, tag
        self.nest, self.plan = tiled.nest, tiled.plan
        self.types: TypeTable = function.types
        self.depth = self.nest.depth
        self.padded = function.kernel.options.padding
        self.buffer_of = {k: b for b in self.plan.buffers for k in b.accesses}
        statement = self.nest.statements[0]
        outer = len(self.nest.outer)
        for x in range(self.depth):
            phi = statement.phis[outer + x]
            function.names[phi] = f"(({self.types.name(phi.type)})({self.t(x)} + {self.l(x)}))"
        tiles = [f"__tile{x}" for x in range(self.depth)]
        locals_ = [f"__local{x}" for x in range(self.depth)]
        self.isl_names = {**function.param_names, **function.outer_names}
        self.isl_names.update({t: self.t(x) for x, t in enumerate(tiles)})
        self.isl_names.update({t: self.l(x) for x, t in enumerate(locals_)})
        self.isl_names["__step"] = self.l(self.plan.order[0])
        self.isl_prefix = f"[{', '.join([*self.nest.params, *tiles, *locals_, '__step'])}] -> "
        self.build = isl.AstBuild.from_context(isl.Set(self.isl_prefix + "{ : }"))
        self.global_index = {
            iterator: f"(__tile{x} + __local{x})" for x, iterator in enumerate(self.nest.iterators)
        }
        outermost = self.plan.order[0]  # a chunk's corner moves with its index, `__step`
        self.global_index[self.nest.iterators[outermost]] = f"(__tile{outermost} + __step)"
        self.used_inside = False

    # -- names ------------------------------------------------------------------------------

    def t(self, x: int) -> str:
        return f"pycc_t{self.tag}{x}"

    def l(self, x: int) -> str:  # noqa: E743 - the paper's l_1 .. l_d
        return f"pycc_l{self.tag}{x}"

    def n(self, x: int) -> str:
        return f"pycc_n{self.tag}{x}"

    def name(self, kind: str, buffer: Buffer) -> str:
        return f"pycc_{kind}{self.tag}{self.plan.buffers.index(buffer)}"

    # -- isl expressions as C ---------------------------------------------------------------

    def c_of(self, value: isl.PwAff | isl.Aff, overrides: dict[str, str] | None = None) -> str:
        """C text of an isl expression in the parameters, tile origins and indices (names
        in `overrides` stand for the C given there)."""
        if isinstance(value, isl.Aff):
            value = isl.PwAff.from_aff(value)
        return _c(self.build, value.coalesce(), {**self.isl_names, **(overrides or {})})

    def isl_of(self, expression: str) -> isl.PwAff:
        """An isl expression (text) in the parameters, tile origins and iterators, each
        iterator as its tile's origin plus the index within the tile."""
        expression = re.sub(
            r"[A-Za-z_][A-Za-z0-9_]*",
            lambda m: self.global_index.get(m.group(0), m.group(0)),
            expression,
        )
        return isl.PwAff(f"{self.isl_prefix}{{ [({expression})] }}")

    def c_text(self, expression: str) -> str:
        return self.c_of(self.isl_of(expression))

    # -- the statements' accesses -----------------------------------------------------------

    def read(self, index: int, t: ir.Type) -> Expr:
        place = self.place(index)
        if self.buffer_of[index].kind == "nc" and self.padded:
            self.used_inside = True
            zero = f"({self.types.name(t)})0"  # (a double 0.0 would widen a float sum)
            return cx.conditional(atom("pycc_inside"), place, atom(zero))
        return place

    def write(self, index: int, value: str) -> str:
        text = f"{self.place(index).text} = {value};"
        if not self.padded:
            return text
        self.used_inside = True
        return f"if (pycc_inside) {text}"

    def place(self, index: int) -> Expr:
        """The lvalue an access reads or writes: its buffer at the subscript minus the box's
        corner, or memory itself."""
        item = self.nest.accesses[index]
        buffer = self.buffer_of[index]
        subscripts = item.access.subscripts
        if buffer.kind == "nc":
            return atom(
                f"{self.memory(item.access.array)}[{self.flat(item.access.array, subscripts)}]"
            )
        places = []
        for k, subscript in enumerate(subscripts):
            halo = buffer.left_halo if k == len(subscripts) - 1 else 0
            corner = isl.PwAff.from_aff(self.placement(buffer).corner[k])
            position = self.isl_of(f"({subscript}) + {halo}").sub(corner)
            places.append(f"[{self.c_of(position)}]")
        return atom(f"{self.name('b', buffer)}{''.join(places)}")

    def flat(self, array, subscripts: list[str]) -> str:
        text = self.c_text(subscripts[0])
        for size, subscript in zip(reversed(array.sizes), subscripts[1:]):
            text = f"({text}) * ({self.c_text(size)}) + ({self.c_text(subscript)})"
        return text

    def memory(self, array) -> str:
        return f"pycc_{array.name}"

    def placement(self, buffer: Buffer) -> Placement:
        return self.tiled.placements[self.plan.buffers.index(buffer)]

    def array_of(self, buffer: Buffer):
        return self.nest.accesses[buffer.accesses[0]].access.array

    # -- ships ------------------------------------------------------------------------------

    def corner(self, buffer: Buffer, step: str | None = None) -> list[str]:
        """C text of the box's lowest element per dimension (a chunk's at `step` of the
        outermost intra-tile loop, its current iteration by default)."""
        overrides = {} if step is None else {"__step": step}
        return [self.c_of(aff, overrides) for aff in self.placement(buffer).corner]

    def ship(
        self, kind: str, buffer: Buffer, dst_at: list[str], src_at: list[str], size: list
    ) -> list[str]:
        """One clamped box copy of `buffer`: a "fill" from memory, a "flush" to it, a
        "shift" within the buffer. Vitis synthesizes (`__SYNTHESIS__`) typed loops over the
        buffer and the array (its bursts inferred from them); the C simulation calls
        `pycc_ship_box` (whose w-wide form moves ap_uint words)."""

        def values(items) -> str:
            return "{" + ", ".join(str(v) for v in items) + "}"

        names = {"fill": ("buf", "in"), "flush": ("out", "buf"), "shift": ("buf", "buf")}[kind]
        dst, src = (self.name(n, buffer) for n in names)
        rank = len(size)
        return [
            "#ifdef __SYNTHESIS__",
            *self.typed_ship(kind, buffer, dst_at, src_at, size),
            "#else",
            "{",
            f"{_INDENT}const long pycc_to[{rank}] = {values(dst_at)}, pycc_from[{rank}] = "
            f"{values(src_at)}, pycc_size[{rank}] = {values(size)};",
            f"{_INDENT}pycc_ship_box(&{dst}, pycc_to, &{src}, pycc_from, pycc_size);",
            "}",
            "#endif",
        ]

    def typed_ship(
        self, kind: str, buffer: Buffer, dst_at: list[str], src_at: list[str], size: list
    ) -> list[str]:
        """The ship as loops of constant trip counts over the box (unrolled where a
        pipelined loop holds them, pipelined by the tool where not), each element copied if
        it lies in the array's window."""
        rank, b = len(size), self.name("b", buffer)
        steps = [f"pycc_s{k}" for k in range(rank)]
        lines = [
            f"{_INDENT * k}for (long {step} = 0; {step} < {size[k]}; {step}++) {{"
            for k, step in enumerate(steps)
        ]

        def in_buffer(at: list[str]) -> str:
            return b + "".join(f"[{a} + {step}]" for a, step in zip(at, steps))

        inner = _INDENT * rank
        if kind == "shift":
            lines.append(f"{inner}{in_buffer(dst_at)} = {in_buffer(src_at)};")
        else:
            window = self.name("in" if kind == "fill" else "out", buffer)
            memory_at = src_at if kind == "fill" else dst_at
            inside = " && ".join(
                f"pycc_within({memory_at[k]} + {step}, {window}_lo[{k}], {window}_hi[{k}])"
                for k, step in enumerate(steps)
            )
            flat = f"{memory_at[0]} + {steps[0]}"
            for k in range(1, rank):
                flat = f"({flat}) * {window}_extent[{k}] + {memory_at[k]} + {steps[k]}"
            in_memory = f"{self.memory(self.array_of(buffer))}[{flat}]"
            target, value = (
                (in_buffer(dst_at), in_memory) if kind == "fill" else (in_memory, in_buffer(src_at))
            )
            lines.append(f"{inner}if ({inside}) {target} = {value};")
        lines += [f"{_INDENT * k}}}" for k in reversed(range(rank))]
        return lines

    def fill(
        self,
        buffer: Buffer,
        step: str | None = None,
        ranges: dict[int, tuple[str, int]] | None = None,
    ) -> list[str]:
        """Fill the buffer from memory: all of it, or per dimension in `ranges` the `count`
        slices from `first` on (a chunk's next slice; one row of it)."""
        corner = self.corner(buffer, step)
        if buffer.left_halo:
            corner[-1] = f"{corner[-1]} - {buffer.left_halo}"
        size: list = list(buffer.extent)
        start = ["0"] * len(size)
        for dim, (first, count) in (ranges or {}).items():
            if first != "0":
                corner[dim] = f"{corner[dim]} + {first}"
            start[dim], size[dim] = first, count
        return self.ship("fill", buffer, start, corner, size)

    def flush(self, buffer: Buffer, step: str | None = None, count: int | None = None) -> list[str]:
        """Write the box (not the halo) back, trimmed to the elements the nest writes (a
        chunk: its first `count` slices)."""
        corner = self.corner(buffer, step)
        size: list = list(buffer.box)
        start = ["0"] * len(size)
        start[-1] = str(buffer.left_halo)
        if count is not None:
            size[buffer.shift_dim] = count
        return self.ship("flush", buffer, corner, start, size)

    def shift(self, buffer: Buffer) -> list[str]:
        """Slices 1.. of a chunk down to 0.. (on chip)."""
        s = buffer.shift_dim
        size: list = list(buffer.extent)
        size[s] = size[s] - 1
        to, frm = ["0"] * len(size), ["0"] * len(size)
        frm[s] = "1"
        return self.ship("shift", buffer, to, frm, size)

    # -- the nest ---------------------------------------------------------------------------

    def code(self) -> list[str]:
        plan = self.plan
        order, sizes = plan.order, plan.sizes
        statements = self.function.statement_lines(self.nest)  # decides on pycc_inside
        cached = [b for b in plan.buffers if b.kind != "nc"]
        sliced = [b for b in cached if b.kind in ("chunk", "line")]
        domain = loop_bounds(self.nest)
        depth = self.depth
        lines = []
        for x in range(depth):
            low, high = (self.c_of(v) for v in domain[x])
            t = self.t(x)
            lines.append(
                f"{_INDENT * x}for (long {t} = {low}; {t} <= {high}; {t} += {sizes[x]}) {{"
            )
        body: list[str] = []
        for x in range(depth):
            high = self.c_of(domain[x][1])
            rest = f"{high} - {self.t(x)} + 1"
            body.append(f"const long {self.n(x)} = {rest} < {sizes[x]} ? {rest} : {sizes[x]};")
        for buffer in cached:
            element = self.types.name(self.array_of(buffer).element)
            extents = "".join(f"[{e}]" for e in buffer.extent)
            b, rank = self.name("b", buffer), len(buffer.extent)
            body += [
                f"static {element} {b}{extents};",
                f"#pragma HLS ARRAY_PARTITION variable={b} complete dim=0",
                "#ifndef __SYNTHESIS__",
                f"pycc_array {self.name('buf', buffer)} = pycc_array_of({b}, sizeof({b}"
                f"{'[0]' * rank}), {rank}, {self.name('shape', buffer)});",
                "#endif",
            ]
        for buffer in cached:
            placement = self.placement(buffer)
            if placement.filled and buffer.kind == "full":
                body += self.fill(buffer)
            elif placement.filled and buffer.extent[buffer.shift_dim] > 1:
                rest = buffer.extent[buffer.shift_dim] - 1
                body += self.fill(buffer, "0", {buffer.shift_dim: ("0", rest)})
        body += self.intra_tile_loops(statements, sliced)
        for buffer in sliced:
            rest = buffer.extent[buffer.shift_dim] - 1
            if self.placement(buffer).write_window is not None and rest:
                body += self.flush(buffer, self.n(order[0]), rest)
        for buffer in cached:
            if buffer.kind == "full" and self.placement(buffer).write_window is not None:
                body += self.flush(buffer)
        lines += [_INDENT * depth + line if line else "" for line in body]
        for x in reversed(range(depth)):
            lines.append(f"{_INDENT * x}}}")
        return lines

    def intra_tile_loops(self, statements: list[str], sliced: list[Buffer]) -> list[str]:
        """The intra-tile loops in the plan's order around the statements, the innermost
        padded, the one around it pipelined; a chunk's next slice shipped at the start of
        each iteration of the outermost one (row by row in the second one's iterations,
        where that loop walks its rows: Fig. 5), its first slice flushed and the others
        shifted at the end."""
        order, sizes = self.plan.order, self.plan.sizes
        depth = len(order)
        innermost = order[-1]
        inside = f"const int pycc_inside = {self.l(innermost)} < {self.n(innermost)};"
        inner = ([inside] if self.used_inside else []) + statements
        for level in reversed(range(depth)):
            x = order[level]
            bound = sizes[x] if level == depth - 1 and self.padded else self.n(x)
            pipelined = level == depth - 2 or depth == 1
            head = ["#pragma HLS PIPELINE II=1"] if pipelined else []
            if level == 1:
                head += [line for b in sliced for line in self.next_slice(b, by_row=True)]
            if level == 0 and sliced:
                before = [line for b in sliced for line in self.next_slice(b, by_row=False)]
                after = []
                for b in sliced:
                    if self.placement(b).write_window is not None:
                        after += self.flush(b, None, 1)
                    if b.extent[b.shift_dim] > 1:
                        after += self.shift(b)
                inner = before + inner + after
            index = self.l(x)
            inner = [
                f"for (long {index} = 0; {index} < {bound}; {index}++) {{",
                *(_INDENT + line if line else "" for line in head + inner),
                "}",
            ]
        return inner

    def next_slice(self, buffer: Buffer, by_row: bool) -> list[str]:
        """The ships of a chunk's next slice: at the outermost loop's level, the whole slice
        or the rows it needs before the second loop starts; at the second loop's, one row."""
        placement = self.placement(buffer)
        if not placement.filled:
            return []
        s = buffer.shift_dim
        last = {s: (str(buffer.extent[s] - 1), 1)}
        row, ahead = placement.row_dim, placement.rows_ahead
        if row is None:
            return [] if by_row else self.fill(buffer, None, last)
        if by_row:
            step = self.l(self.plan.order[1])
            return self.fill(buffer, None, {**last, row: (f"{step} + {ahead}", 1)})
        return self.fill(buffer, None, {**last, row: ("0", ahead)}) if ahead else []

    def descriptors(self) -> list[str]:
        """Each array as the C pointer the accesses use, and each buffer's memory side as
        the ship runtime sees it: its shape and the windows of elements read and written."""
        lines = []
        for buffer in self.plan.buffers:
            if buffer.kind == "nc":
                continue
            array, placement = self.array_of(buffer), self.placement(buffer)
            rank = len(buffer.extent)
            shape = ", ".join(map(str, buffer.extent))
            lines += [
                "#ifndef __SYNTHESIS__",
                f"const long {self.name('shape', buffer)}[{rank}] = {{{shape}}};",
                "#endif",
            ]
            read = placement.read_window if placement.filled else None
            for side, window in (("in", read), ("out", placement.write_window)):
                if window is None:
                    continue
                lows = [self.c_of(low) for low, _ in window]
                highs = [self.c_of(high) for _, high in window]
                pitches = (self.c_text(size) for size in reversed(array.sizes))
                extents = [f"{highs[0]} + 1", *pitches]
                element = self.types.name(array.element)
                name = self.name(side, buffer)
                extent = f"const long {name}_extent[{rank}] = {{{', '.join(extents)}}};"
                lines += [
                    f"const long {name}_lo[{rank}] = {{{', '.join(lows)}}}, "
                    f"{name}_hi[{rank}] = {{{', '.join(highs)}}};",
                    *([extent] if rank > 1 else []),  # (a row has no pitch to find)
                    "#ifndef __SYNTHESIS__",
                    *([extent] if rank == 1 else []),
                    f"pycc_array {name} = pycc_array_window(pycc_memory_of("
                    f"{self.memory(array)}, sizeof({element}), {rank}, {name}_extent), "
                    f"{name}_lo, {name}_hi);",
                    "#endif",
                ]
        return lines


def loop_bounds(nest: Nest) -> list[tuple[isl.PwAff, isl.PwAff]]:
    """Each loop's first and last iteration, in the parameters and the loops around the
    nest (the domain is rectangular)."""
    domain = leaf_domain(nest.scop, nest.outer, nest.statements[0])
    return [(domain.dim_min(x).coalesce(), domain.dim_max(x).coalesce()) for x in range(nest.depth)]


def value_slice(block: ir.Block) -> set[ins.Instruction]:
    """The instructions of a statement that compute what it stores (not its addresses)."""
    needed: set[ins.Instruction] = set()
    work = [i for i in block.instructions if isinstance(i, ins.StoreInstr)]
    while work:
        instr = work.pop()
        if instr in needed or instr.parent is not block:
            continue
        needed.add(instr)
        if isinstance(instr, ins.StoreInstr):
            operands = [instr.operands[0]]
        elif isinstance(instr, ins.LoadInstr):
            operands = []
        else:
            operands = list(instr.operands)
        work += [op for op in operands if isinstance(op, ins.Instruction)]
    return needed


def _outside_values(nest: Nest) -> set[ins.Instruction]:
    """The instructions before the nest that its statements and parameters use."""
    blocks = {s.block for s in nest.scop.statements}
    phis = {phi for s in nest.scop.statements for phi in s.phis}
    work = [v for v in nest.scop.params.values() if isinstance(v, ins.Instruction)]
    for statement in nest.scop.statements:
        for instr in value_slice(statement.block):
            if not isinstance(instr, ins.LoadInstr):
                work += [op for op in instr.operands if isinstance(op, ins.Instruction)]
    for array in nest.scop.arrays:
        if isinstance(array.base, ins.Instruction):
            work.append(array.base)
    found: set[ins.Instruction] = set()
    while work:
        instr = work.pop()
        if instr in found or instr.parent in blocks or instr in phis:
            continue
        found.add(instr)
        work += [op for op in instr.operands if isinstance(op, ins.Instruction)]
    return found
