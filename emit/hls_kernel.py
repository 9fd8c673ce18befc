"""The kernels of `--target hls`: a loop nest tiled with on-chip stencil caches, written as
HLS C (Vitis conventions) whose data movement is `ship` (runtime/hls/pycc_ship.h).

For a function that is one perfect rectangular SCoP (`polyhedral.hls_buffers`), the writer
replaces the function's body by the shape of Fig. 5 of the IMPACT'24 paper:

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

from ..ir_passes.core.analyses import loops_of
from ..polyhedral.hls_buffers import (
    Buffer,
    Nest,
    NotPlannable,
    Placement,
    Plan,
    choose_order,
    hls_nest,
    placements,
)
from ..polyhedral.scop import extract_scops
from . import c_expressions as cx
from .c_expressions import Expr, atom
from .c_function import FunctionWriter

_INDENT = "    "
#: the paper's large tiles (its §4, Step 1), by the nest's depth
DEFAULT_SIZES = {1: (1024,), 2: (128, 128), 3: (32, 32, 32), 4: (16, 16, 16, 16)}
#: calls a statement may contain that do not write memory
_PURE = re.compile(r"llvm\.")


@dataclass(frozen=True)
class HlsOptions:
    """What `--target hls:...` asks of every kernel (None: chosen by the analysis)."""

    sizes: tuple[int, ...] | None = None
    order: tuple[int, ...] | None = None
    burst: int = 1
    padding: bool = True
    fusion: bool = True


@dataclass(frozen=True)
class HlsKernel:
    nest: Nest
    plan: Plan
    placements: list[Placement | None]
    options: HlsOptions


def hls_kernel(function: ir.Function, options: HlsOptions) -> HlsKernel:
    """The function's nest and buffer plan, or NotPlannable saying why it has none."""
    scops, rejected = extract_scops(function, merge=False)
    if rejected:
        raise NotPlannable(f"a loop nest is not a SCoP: {rejected[0].reason}")
    if len(scops) != 1:
        raise NotPlannable(f"{len(scops)} loop nests (one is tiled)")
    scop = scops[0]
    if scop.assumed is not None:
        raise NotPlannable("the model of its subscripts holds only under a run-time assumption")
    _check_surroundings(function, scop)
    nest = hls_nest(scop)
    sizes = options.sizes or DEFAULT_SIZES[nest.depth]
    if len(sizes) != nest.depth:
        raise NotPlannable(f"{len(sizes)} tile sizes for {nest.depth} loops")
    best, plans = choose_order(nest, sizes, options.burst, options.fusion)
    if options.order is not None:
        if sorted(options.order) != list(range(nest.depth)):
            raise NotPlannable(f"order {options.order} is not an order of {nest.depth} loops")
        best = next(p for p in plans if p.order == options.order)
    for buffer in best.buffers:
        if len(buffer.extent) > 8:
            raise NotPlannable(f"{buffer.array} has more than 8 dimensions")
    return HlsKernel(nest, best, placements(nest, best), options)


def _check_surroundings(function: ir.Function, scop) -> None:
    """The function is a straight run of side-effect-free code into the nest, and returns
    after it: the kernel is the nest."""
    nest_blocks = {b for loop in loops_of(function).loops for b in loop.blocks}
    for block in function.blocks:
        if block in nest_blocks or block is scop.entry:
            continue
        for instr in block.instructions:
            if isinstance(instr, ins.StoreInstr) or (
                isinstance(instr, ins.CallInstr) and not _PURE.match(instr.callee.name)
            ):
                raise NotPlannable("the function does more than the loop nest")
        terminator = block.terminator
        if isinstance(terminator, ins.Ret) and terminator.operands:
            raise NotPlannable("the function returns a value")
        if not isinstance(terminator, ins.Ret) and (
            not isinstance(terminator, ins.Branch) or len(terminator.operands) != 1
        ):
            raise NotPlannable("the function branches outside the loop nest")


# ------------------------------------------------------------------------------ the writer


class HlsKernelWriter(FunctionWriter):
    """The function's C with its nest replaced by the tiled, buffered HLS form."""

    def __init__(self, *args, kernel: HlsKernel, **kwargs):
        super().__init__(*args, **kwargs)
        self.kernel = kernel
        nest = kernel.nest
        self.depth = nest.depth
        self.redirect: dict[ins.Instruction, int] = {
            item.access.instruction: k for k, item in enumerate(nest.accesses)
        }
        self.buffer_of = {k: b for b in kernel.plan.buffers for k in b.accesses}
        loops = nest.scop.statements[0].loops
        for x, loop in enumerate(loops):
            self.names[loop.trip_count_iv.phi] = (
                f"(({self.types.name(loop.trip_count_iv.phi.type)})({self._index(x)}))"
            )
        self.isl_names = {name: self.expr(value).text for name, value in nest.scop.params.items()}
        tiles = [f"__tile{x}" for x in range(self.depth)]
        locals_ = [f"__local{x}" for x in range(self.depth)]
        self.isl_names.update({t: f"pycc_t{x}" for x, t in enumerate(tiles)})
        self.isl_names.update({t: f"pycc_l{x}" for x, t in enumerate(locals_)})
        self.isl_names["__step"] = f"pycc_l{kernel.plan.order[0]}"
        self.isl_prefix = f"[{', '.join([*nest.scop.params, *tiles, *locals_, '__step'])}] -> "
        self.build = isl.AstBuild.from_context(isl.Set(self.isl_prefix + "{ : }"))
        self.global_index = {
            iterator: f"(__tile{x} + __local{x})" for x, iterator in enumerate(nest.iterators)
        }
        outermost = kernel.plan.order[0]  # a chunk's corner moves with its index, `__step`
        self.global_index[nest.iterators[outermost]] = f"(__tile{outermost} + __step)"
        self.used_inside = False

    def _index(self, x: int) -> str:
        return f"pycc_t{x} + pycc_l{x}"

    # -- isl expressions as C ---------------------------------------------------------------

    def c_of(self, value: isl.PwAff | isl.Aff, overrides: dict[str, str] | None = None) -> str:
        """C text of an isl expression in the parameters, iterators and tile origins (names
        in `overrides` stand for the C given there)."""
        if isinstance(value, isl.Aff):
            value = isl.PwAff.from_aff(value)
        text = self.build.expr_from_pw_aff(value.coalesce()).to_C_str()
        names = {**self.isl_names, **(overrides or {})}
        return re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: names.get(m.group(0), m.group(0)), text)

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

    # -- the statements ---------------------------------------------------------------------

    def load(self, instr: ins.LoadInstr) -> Expr:
        if instr not in self.redirect:
            return super().load(instr)
        index = self.redirect[instr]
        place = self.access_place(index)
        if self.buffer_of[index].kind == "nc" and self.padded:
            self.used_inside = True
            zero = "0" if isinstance(instr.type, ir.IntType) else "0.0"
            return cx.conditional(atom("pycc_inside"), place, atom(zero))
        return place

    def store(self, instr: ins.StoreInstr) -> str:
        if instr not in self.redirect:
            return super().store(instr)
        text = (
            f"{self.access_place(self.redirect[instr]).text} = {self.expr(instr.operands[0]).text};"
        )
        if not self.padded:
            return text
        self.used_inside = True
        return f"if (pycc_inside) {text}"

    @property
    def padded(self) -> bool:
        return self.kernel.options.padding

    def access_place(self, index: int) -> Expr:
        """The lvalue an access reads or writes: its buffer at the subscript minus the box's
        corner, or memory itself."""
        item = self.kernel.nest.accesses[index]
        buffer = self.buffer_of[index]
        subscripts = item.access.subscripts
        if buffer.kind == "nc":
            return atom(
                f"{self.ddr_name(item.access.array)}[{self.flat(item.access.array, subscripts)}]"
            )
        places = []
        for k, subscript in enumerate(subscripts):
            halo = buffer.left_halo if k == len(subscripts) - 1 else 0
            corner = isl.PwAff.from_aff(self._placement(buffer).corner[k])
            position = self.isl_of(f"({subscript}) + {halo}").sub(corner)
            places.append(f"[{self.c_of(position)}]")
        return atom(f"{self.buffer_name(buffer)}{''.join(places)}")

    def flat(self, array, subscripts: list[str]) -> str:
        text = self.c_text(subscripts[0])
        for size, subscript in zip(array.sizes, subscripts[1:]):
            text = f"({text}) * ({self.c_text(size)}) + ({self.c_text(subscript)})"
        return text

    def statement_lines(self) -> list[str]:
        lines = []
        for statement in self.kernel.nest.scop.statements:
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

    # -- buffers and ships ------------------------------------------------------------------

    def buffer_name(self, buffer: Buffer) -> str:
        return f"pycc_b{self.kernel.plan.buffers.index(buffer)}"

    def ddr_name(self, array) -> str:
        return f"pycc_{array.name}"

    def corner(self, buffer: Buffer, step: str | None = None) -> list[str]:
        """C text of the box's lowest element per dimension (a chunk's at `step` of the
        outermost intra-tile loop, its current iteration by default)."""
        placement = self.kernel.placements[self.kernel.plan.buffers.index(buffer)]
        overrides = {} if step is None else {"__step": step}
        return [self.c_of(aff, overrides) for aff in placement.corner]

    def ship(
        self, dst: str, dst_at: list[str], src: str, src_at: list[str], size: list
    ) -> list[str]:
        """One clamped box copy (`pycc_ship_box`)."""

        def values(items) -> str:
            return "{" + ", ".join(str(v) for v in items) + "}"

        rank = len(size)
        return [
            "{",
            f"{_INDENT}const long pycc_to[{rank}] = {values(dst_at)}, pycc_from[{rank}] = "
            f"{values(src_at)}, pycc_size[{rank}] = {values(size)};",
            f"{_INDENT}pycc_ship_box(&{dst}, pycc_to, &{src}, pycc_from, pycc_size);",
            "}",
        ]

    def at_memory(self, buffer: Buffer, corner: list[str], halo: bool) -> list[str]:
        """The array element of the buffer's first slot (with the left halo, or of the box's
        first element without it)."""
        at = list(corner)
        if halo and buffer.left_halo:
            at[-1] = f"{at[-1]} - {buffer.left_halo}"
        return at

    def fill(
        self, buffer: Buffer, step: str | None = None, first: int = 0, count: int | None = None
    ) -> list[str]:
        """Fill the buffer (a chunk: slices first..first+count-1 along its shift) from memory."""
        g = self.kernel.plan.buffers.index(buffer)
        corner = self.at_memory(buffer, self.corner(buffer, step), halo=True)
        size: list = list(buffer.extent)
        start = ["0"] * len(size)
        if count is not None:
            s = buffer.shift_dim
            corner[s] = f"{corner[s]} + {first}"
            start[s], size[s] = str(first), count
        return self.ship(f"pycc_buf{g}", start, f"pycc_in{g}", corner, size)

    def flush(self, buffer: Buffer, step: str | None = None, count: int | None = None) -> list[str]:
        """Write the box (not the halo) back, trimmed to the elements the nest writes (a
        chunk: its first `count` slices)."""
        g = self.kernel.plan.buffers.index(buffer)
        corner = self.corner(buffer, step)
        size: list = list(buffer.box)
        start = ["0"] * len(size)
        start[-1] = str(buffer.left_halo)
        if count is not None:
            size[buffer.shift_dim] = count
        return self.ship(f"pycc_out{g}", corner, f"pycc_buf{g}", start, size)

    def shift(self, buffer: Buffer) -> list[str]:
        """Slices 1.. of a chunk down to 0.. (on chip)."""
        g = self.kernel.plan.buffers.index(buffer)
        s = buffer.shift_dim
        size: list = list(buffer.extent)
        size[s] = size[s] - 1
        to, frm = ["0"] * len(size), ["0"] * len(size)
        frm[s] = "1"
        return self.ship(f"pycc_buf{g}", to, f"pycc_buf{g}", frm, size)

    # -- the function -----------------------------------------------------------------------

    def definition(self) -> str:
        kernel, plan = self.kernel, self.kernel.plan
        order, sizes = plan.order, plan.sizes
        statements = self.statement_lines()  # first: it decides whether pycc_inside is used
        cached = [b for b in plan.buffers if b.kind != "nc"]
        sliced = [b for b in cached if b.kind in ("chunk", "line")]
        domain = loop_bounds(kernel.nest)
        lines = self.prologue() + self.interfaces() + self.descriptors(domain)
        depth = self.depth
        for x in range(depth):
            low, high = (self.c_of(v) for v in domain[x])
            lines.append(
                f"{_INDENT * x}for (long pycc_t{x} = {low}; pycc_t{x} <= {high}; "
                f"pycc_t{x} += {sizes[x]}) {{"
            )
        body: list[str] = []
        for x in range(depth):
            high = self.c_of(domain[x][1])
            body.append(
                f"const long pycc_n{x} = {high} - pycc_t{x} + 1 < {sizes[x]} ? "
                f"{high} - pycc_t{x} + 1 : {sizes[x]};"
            )
        for buffer in cached:
            g = plan.buffers.index(buffer)
            element = self.types.name(self.array_of(buffer).element)
            extents = "".join(f"[{e}]" for e in buffer.extent)
            body += [
                f"static {element} pycc_b{g}{extents};",
                f"#pragma HLS ARRAY_PARTITION variable=pycc_b{g} complete dim=0",
                f"pycc_array pycc_buf{g} = pycc_array_of(pycc_b{g}, sizeof(pycc_b{g}"
                f"{'[0]' * len(buffer.extent)}), {len(buffer.extent)}, pycc_shape{g});",
            ]
        for buffer in cached:
            placement = self._placement(buffer)
            if placement.filled and buffer.kind == "full":
                body += self.fill(buffer)
            elif placement.filled and buffer.extent[buffer.shift_dim] > 1:
                body += self.fill(buffer, "0", 0, buffer.extent[buffer.shift_dim] - 1)
        body += self.intra_tile_loops(order, sizes, statements, sliced)
        for buffer in sliced:
            rest = buffer.extent[buffer.shift_dim] - 1
            if self._placement(buffer).write_window is not None and rest:
                body += self.flush(buffer, f"pycc_n{order[0]}", rest)
        for buffer in cached:
            if buffer.kind == "full" and self._placement(buffer).write_window is not None:
                body += self.flush(buffer)
        lines += [_INDENT * depth + line if line else "" for line in body]
        for x in reversed(range(depth)):
            lines.append(f"{_INDENT * x}}}")
        text = "\n".join(lines)
        used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        unused = [
            f"(void){self.names[a]};" for a in self.function.args if self.names[a] not in used
        ]
        return "\n".join(
            [
                self.prototype(),
                "{",
                *(_INDENT + u for u in unused),
                *(_INDENT + line if line else "" for line in lines),
                "}",
            ]
        )

    def _placement(self, buffer: Buffer) -> Placement:
        return self.kernel.placements[self.kernel.plan.buffers.index(buffer)]

    def array_of(self, buffer: Buffer):
        return self.kernel.nest.accesses[buffer.accesses[0]].access.array

    def intra_tile_loops(
        self, order, sizes, statements: list[str], sliced: list[Buffer]
    ) -> list[str]:
        """The intra-tile loops in `order` around the statements, the innermost padded, the
        one around it pipelined, a chunk's slices shipped around the outermost one's body."""
        depth = len(order)
        innermost = order[-1]
        inner = (
            [f"const int pycc_inside = pycc_l{innermost} < pycc_n{innermost};"]
            if self.used_inside
            else []
        ) + statements
        for level in reversed(range(depth)):
            x = order[level]
            bound = sizes[x] if level == depth - 1 and self.padded else f"pycc_n{x}"
            pipelined = level == depth - 2 or depth == 1
            head = ["#pragma HLS PIPELINE II=1"] if pipelined else []
            if level == 0 and sliced:
                before = [
                    line
                    for b in sliced
                    if self._placement(b).filled
                    for line in self.fill(b, None, b.extent[b.shift_dim] - 1, 1)
                ]
                after = []
                for b in sliced:
                    if self._placement(b).write_window is not None:
                        after += self.flush(b, None, 1)
                    if b.extent[b.shift_dim] > 1:
                        after += self.shift(b)
                inner = before + inner + after
            inner = [
                f"for (long pycc_l{x} = 0; pycc_l{x} < {bound}; pycc_l{x}++) {{",
                *(_INDENT + line if line else "" for line in head + inner),
                "}",
            ]
        return inner

    def prologue(self) -> list[str]:
        """The values the nest uses that the function computes before it, in order."""
        needed = _outside_values(self.kernel.nest)
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
        arrays = {id(a.base): a for a in self.kernel.nest.scop.arrays}
        bundle = 0
        for arg in self.function.args:
            if id(arg) in arrays:
                bits = 8 * self.element_bytes(arrays[id(arg)]) * self.kernel.options.burst
                lines.append(
                    f"#pragma HLS INTERFACE m_axi port={self.names[arg]} offset=slave "
                    f"bundle=gmem{bundle} max_widen_bitwidth={bits}"
                )
                bundle += 1
        return lines

    def element_bytes(self, array) -> int:
        from ..ir_passes.core.affine import size_of

        return size_of(array.element)

    def descriptors(self, domain) -> list[str]:
        """Each array as the C pointer the accesses use, and each buffer's memory side as
        the ship runtime sees it: its shape and the windows of elements read and written."""
        lines = []
        for array in self.kernel.nest.scop.arrays:
            element = self.types.name(array.element)
            base = self.expr(array.base).text
            lines.append(f"{element} *const {self.ddr_name(array)} = ({element} *)({base});")
        for buffer in self.kernel.plan.buffers:
            if buffer.kind == "nc":
                continue
            g = self.kernel.plan.buffers.index(buffer)
            array, placement = self.array_of(buffer), self._placement(buffer)
            rank = len(buffer.extent)
            lines.append(
                f"const long pycc_shape{g}[{rank}] = {{{', '.join(map(str, buffer.extent))}}};"
            )
            read = placement.read_window if placement.filled else None
            windows = [("in", read), ("out", placement.write_window)]
            for side, window in windows:
                if window is None:
                    continue
                lows = [self.c_of(low) for low, _ in window]
                highs = [self.c_of(high) for _, high in window]
                extents = [f"{highs[0]} + 1", *(self.c_text(size) for size in array.sizes)]
                element = self.types.name(array.element)
                lines += [
                    f"const long pycc_{side}_lo{g}[{rank}] = {{{', '.join(lows)}}}, "
                    f"pycc_{side}_hi{g}[{rank}] = {{{', '.join(highs)}}}, "
                    f"pycc_{side}_extent{g}[{rank}] = {{{', '.join(extents)}}};",
                    f"pycc_array pycc_{side}{g} = pycc_array_window(pycc_memory_of("
                    f"{self.ddr_name(array)}, sizeof({element}), {rank}, pycc_{side}_extent{g}), "
                    f"pycc_{side}_lo{g}, pycc_{side}_hi{g});",
                ]
        return lines


def loop_bounds(nest: Nest) -> list[tuple[isl.PwAff, isl.PwAff]]:
    """Each loop's first and last iteration (the domain is rectangular)."""
    statement = nest.scop.statements[0]
    constraints = " and ".join(statement.constraints) or "0 = 0"
    domain = isl.Set(
        f"{nest.scop.param_prefix}{{ [{', '.join(statement.iterators)}] : {constraints} }}"
    )
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
    phis = {s.phis[k] for s in nest.scop.statements for k in range(nest.depth)}
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
