"""isl AST -> LLVM IR: replace a SCoP's loop nests by the code of a new schedule.

isl generates the loop structure (`AstBuild.node_from_schedule`); this module walks that AST
and builds IR: 64-bit counted loops for `for` nodes, branches for `if` nodes, and for each
`user` node S(e1, ..., ek) a copy of statement S's block with its induction variables replaced
by the values of e1..ek. Values a statement takes from outside its block are either defined
before the SCoP (used as they are) or pure arithmetic on induction variables and parameters
inside the loop headers (recomputed next to the copy).

The new code is versioned: a run-time check before it compares the byte ranges every array of
the SCoP covers (from isl: the minimum and maximum of each subscript over the domain), and when
two pointer arguments overlap where one is written the original nests run instead, because the
polyhedral model treats distinct pointers as distinct arrays and C without `restrict` does not
promise that.

A `for` node under a mark named `PARALLEL_MARK` is outlined into a function
`void body(ptr ctx, i64 lo, i64 hi)` that runs iterations [lo, hi); values it needs from the
enclosing function travel in `ctx` (a record of them), and the loop is handed to the
parallel runtime the caller names (polyhedral/parallel.py: serial, OpenMP or the JIT's pool),
which may run the iterations on several threads and in any order. The serial runtime calls the
body once, so the code of a tiled schedule is the same in every build but for that call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import islpy as isl
from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.affine import size_of
from ..ir_passes.core.analyses import invalidate
from ..ir_passes.core.facts import facts_of
from ..ir_passes.core.machine_model import SERIAL
from ..ir_passes.core.rewrite import (
    branch_to,
    copy_instruction,
    remap_operands,
    used_values,
    users_of,
)
from .parallel import context_value, emit_parallel_call, pack_context
from .scop import Array, Scop, Statement, opaque_base

PARALLEL_MARK = "pycc.parallel"
#: set (when the code is generated) to fill scratch buffers with NaNs: a value a tile reads
#: but did not compute shows in the output (the tests' proof that tiles are closed)
POISON_SCRATCH = "PYCC_POISON_SCRATCH"
_FALSE = ir.Constant(ir.IntType(1), 0)
I64 = ir.IntType(64)
#: the largest magnitude of a parameter the new code runs for: the tile loops' bounds are sums
#: of parameters times coefficients (skews, tile sizes below 2^20), which stay far from i64's
#: limits; beyond it (a time loop of 2^62 steps, which cc's build runs "forever") the
#: original loops run
PARAMETER_LIMIT = 1 << 40
_OP = isl.ast_expr_op_type


@dataclass
class Contraction:
    """A local array contracted to a buffer per tile: the tile touches `rows` consecutive
    outermost indices of it from `first_row` (over the parameters and the tile coordinates)
    on, so its accesses go to a buffer of `rows` rows, malloc'ed for the tile."""

    array: Array
    first_row: isl.PwAff
    rows: int


@dataclass
class TwoLevel:
    """A program in two levels: `outer` runs `TILE[t0..td]` instances; each runs the AST of
    `inner`, whose parameters `tile_params` take the instance's coordinates, with the arrays
    of `contracted` in buffers of its own."""

    outer: isl.Schedule
    inner: isl.Schedule
    tile_params: list[str]
    contracted: list[Contraction] = field(default_factory=list)
    #: parameter values (SCoP parameters and tile coordinates) of the full tiles, or None: for
    #: them `inner` is generated a second time under this context, where isl drops the
    #: bounds the tile's box implies (point loops with constant trip counts)
    full: isl.Set | None = None


def without_assumed(scop: Scop, schedule: isl.Schedule) -> isl.Schedule:
    """`schedule` without the constraints of what the model assumed of the parameters (`v7 =
    n`: a VLA's row length is the loop's bound): the entry condition checks them before the
    new code runs, and isl's AST generation spent up to a third of its time on them."""
    return schedule if scop.assumed is None else schedule.gist_domain_params(scop.assumed)


class CodegenError(Exception):
    """An AST construct the generator does not handle (a bug, not a user error)."""


def generate(
    scop: Scop,
    program: isl.Schedule | TwoLevel,
    min_bytes: int = 0,
    runtime: str = SERIAL,
    team: int = 0,
    by_cells: bool = False,
) -> None:
    """Rewrite `scop.function` so the SCoP runs in the order of `program` (when its pointer
    arguments do not overlap and, if `min_bytes`, they span at least that many bytes: locality
    transformations only pay when the data do not fit in a cache; with `by_cells`, when the
    boxes of the cells the SCoP touches hold that many: a strip of a wide image spans its
    rows' whole width), its parallel loops on `runtime` (`target.PARALLEL_RUNTIMES`; OpenMP
    teams of `team` threads, 0: the default)."""
    function = scop.function
    build = isl.AstBuild.from_context(scop.context())
    inner = None
    scratch = getattr(program, "plan", None)  # overlapped tiles' buffers (scratch.py)
    if isinstance(program, TwoLevel):
        names = ", ".join([*scop.params, *program.tile_params])
        inner_build = isl.AstBuild.from_context(isl.Set(f"[{names}] -> {{ : }}"))
        tile_schedule = without_assumed(scop, program.inner)
        inner = _Inner(
            inner_build.node_from_schedule(tile_schedule),
            program.tile_params,
            program.contracted,
            inner_build,
        )
        if program.full is not None and not program.full.is_empty():
            inner.condition = inner_build.expr_from_set(program.full)
            inner.full = isl.AstBuild.from_context(program.full).node_from_schedule(tile_schedule)
        program = program.outer
    ast = build.node_from_schedule(without_assumed(scop, program))
    entry = scop.entry
    before = _single_predecessor(function, entry)
    check = function.append_basic_block("poly.check")
    start = function.append_basic_block("poly.start")
    _redirect(before, entry, check)
    builder = ir.IRBuilder(check)
    region = _region_blocks(scop)
    params = {}
    users = users_of(function)
    for name, original in scop.params.items():
        value = _before_the_loops(original, builder, region)
        if value.type.width < 64:
            unsigned = _read_unsigned(original, users)
            value = (builder.zext if unsigned else builder.sext)(value, I64)
        params[name] = value
    gen = _Generator(
        function,
        scop,
        region,
        dict(params),
        external=lambda v: v,
        inner=inner,
        scratch=scratch,
        runtime=runtime,
        team=team,
    )
    builder.cbranch(gen.entry_condition(builder, build, min_bytes, by_cells), start, entry)
    gen.builder = ir.IRBuilder(start)
    if scratch is not None:
        scratch.open(gen, build)
    gen.node(ast)
    if scratch is not None:
        scratch.close(gen)
    branch_to(gen.builder.block, scop.exit)
    invalidate(function)


@dataclass
class _Inner:
    """What a TILE instance runs: its AST, the tile parameters, its contracted arrays, and the
    build the AST was generated with (for expressions over the tile parameters)."""

    ast: isl.AstNode
    params: list[str]
    contracted: list[Contraction]
    build: isl.AstBuild
    #: for full tiles (where `condition` holds): the AST generated under TwoLevel.full
    full: isl.AstNode | None = None
    condition: isl.AstExpr | None = None


def _read_unsigned(value: ir.Value, users: dict) -> bool:
    """Does C read the narrow parameter `value` as unsigned (an `unsigned char` or `unsigned
    short` argument, passed `zeroext`; a value the function only ever zero-extends)? The
    model looks through those `zext`s, so the parameter must be extended as they extend it."""
    if isinstance(value, ir.Argument) and "zeroext" in value.attributes:
        return True
    casts = {u.opname for u in users.get(value, []) if u.opname in ("sext", "zext")}
    return casts == {"zext"}


def _single_predecessor(function: ir.Function, block: ir.Block) -> ir.Block:
    preds = [b for b in function.blocks if block in _targets(b)]
    if len(preds) != 1:
        raise CodegenError(f"{block.name} has {len(preds)} predecessors")
    return preds[0]


#: the fact of an outlined parallel loop's function: (the function it was outlined from, the
#: values of that function it reads, each with the value that holds it in the outlined one)
OUTLINED_FROM = "outlined from"


def values_in(function: ir.Function, values: set[ir.Value]) -> set[ir.Value]:
    """What holds `values` (of the function a nest was generated in) in `function`: the
    values themselves, or in a function outlined from it (at any depth) what was captured
    for them (a global is itself everywhere)."""
    origin = facts_of(function).get(OUTLINED_FROM)
    if origin is None:
        return set(values)
    parent, captured = origin  # type: ignore[misc]
    outer = values_in(parent, values)
    shared = {v for v in outer if not isinstance(v, (ir.Instruction, ir.Argument))}  # globals
    return shared | {slot for value, slot in captured if value in outer}


def _redirect(block: ir.Block, old: ir.Block, new: ir.Block) -> None:
    """Make `block`'s edge to `old` go to `new`; its other edges stay (an earlier pass's
    check enters the nest when its own code does not run)."""
    term = block.terminator
    term.operands = [new if o is old else o for o in term.operands]
    term._clear_string_cache()


def _targets(block: ir.Block) -> list[ir.Block]:
    term = block.terminator
    return [op for op in (term.operands if term else []) if isinstance(op, ir.Block)]


def _region_blocks(scop: Scop) -> set[ir.Block]:
    return {b for nest in scop.nests for lp in nest.loop.descendants() for b in lp.blocks}


class _Generator:
    """Builds the IR of one AST (or, for an outlined parallel loop, of one subtree)."""

    def __init__(
        self,
        function,
        scop: Scop,
        region,
        ids: dict[str, ir.Value],
        external,
        inner=None,
        scratch=None,
        runtime: str = SERIAL,
        team: int = 0,
    ):
        self.function = function
        self.scop = scop
        self.region = region
        self.ids = ids  # isl identifier -> i64 value
        self.external = external  # a value of the original function -> the value to use here
        self.builder: ir.IRBuilder | None = None
        self.inner: _Inner | None = inner  # what each TILE instance runs
        self.rebased: dict[ir.Value, ir.Value] = {}  # a contracted array -> this tile's base
        self.unbounded: set[int] = set()  # ids of addresses derived from a rebased array
        self.scratch = scratch  # a ScratchPlan (private buffers of overlapped tiles) or None
        self.frame = None  # where this function allocates private buffers (scratch.py)
        self.runtime = runtime  # how parallel loops run (polyhedral/parallel.py)
        self.team = team  # and on how many threads (OpenMP; 0: the runtime's default)
        #: per array, the alias metadata of its accesses in the new code (`_alias_tags`)
        self.alias_tags = _alias_tags(function.module, scop)

    # -- nodes -------------------------------------------------------------------------------

    def node(self, node: isl.AstNode) -> None:
        kind = node.get_type()
        if kind == isl.ast_node_type.block:
            children = node.block_get_children()
            for k in range(children.n_ast_node()):
                self.node(children.get_at(k))
        elif kind == isl.ast_node_type.for_:
            self.for_loop(node)
        elif kind == isl.ast_node_type.if_:
            self.if_node(node)
        elif kind == isl.ast_node_type.user:
            self.user(node.user_get_expr())
        elif kind == isl.ast_node_type.mark:
            child = node.mark_get_node()
            if (
                node.mark_get_id().get_name() == PARALLEL_MARK
                and child.get_type() == isl.ast_node_type.for_
                and self.parallel_loop(child)
            ):
                return
            self.node(child)
        else:
            raise CodegenError(f"AST node type {kind}")

    def for_loop(self, node: isl.AstNode) -> None:
        """A counted loop. Its bound is computed before it (isl's bounds depend only on outer
        iterators and parameters), so the exit test compares the counter with an invariant;
        when the bound is the start plus a constant (the point loops of a full tile), the
        counter runs from 0 to that constant and the iterator is start + counter: a literal
        constant trip count, which `simd` and LLVM bind without remainder loops."""
        name = node.for_get_iterator().get_id().get_name()
        start = node.for_get_init()
        init = self.expr(start)
        step = self.expr(node.for_get_inc())
        body = node.for_get_body()
        cond = node.for_get_cond()
        bound = _upper_bound(cond, name)
        if bound is None:
            self.counted_loop(name, init, lambda _: self.expr(cond), step, body)
            return
        predicate, limit = bound
        span = _constant_difference(limit, start)
        high = self.expr(limit) if span is None else ir.Constant(I64, span)

        def test(counter: ir.Value) -> ir.Value:
            return self.builder.icmp_signed(predicate, counter, high)

        if span is None:
            self.counted_loop(name, init, test, step, body)
        else:
            self.counted_loop(name, ir.Constant(I64, 0), test, step, body, offset=init)

    def counted_loop(self, name, init, condition, step, body: isl.AstNode, offset=None) -> None:
        """A loop whose counter (a phi from `init` by `step`, tested by `condition(counter)`)
        is the iterator `name`, or with an `offset`, counts iterations of `name` = offset +
        counter."""
        b = self.builder
        pre = b.block
        header = self.function.append_basic_block(f"poly.{name}")
        loop_body = self.function.append_basic_block(f"poly.{name}.body")
        done = self.function.append_basic_block(f"poly.{name}.exit")
        b.branch(header)
        b.position_at_end(header)
        phi = b.phi(I64, name=name if offset is None else f"{name}.count")
        phi.add_incoming(init, pre)
        shadowed = self.ids.get(name)  # a TILE's point loops reuse the tile loops' names
        self.ids[name] = phi
        b.cbranch(condition(phi), loop_body, done)
        b.position_at_end(loop_body)
        if offset is not None:
            self.ids[name] = b.add(offset, phi, name=name, flags=["nsw"])
        self.node(body)
        b = self.builder
        b.position_at_end(b.block)
        nxt = b.add(phi, step, name=f"{phi.name}.next", flags=["nsw"])
        phi.add_incoming(nxt, b.block)
        b.branch(header)
        b.position_at_end(done)
        if shadowed is None:
            del self.ids[name]
        else:
            self.ids[name] = shadowed

    def if_node(self, node: isl.AstNode) -> None:
        other = node.if_get_else_node() if node.if_has_else_node() else None
        self.branch(self.expr(node.if_get_cond()), node.if_get_then_node(), other)

    def branch(self, cond: ir.Value, then: isl.AstNode, other: isl.AstNode | None) -> None:
        b = self.builder
        then_block = self.function.append_basic_block("poly.then")
        join = self.function.append_basic_block("poly.join")
        else_block = join if other is None else self.function.append_basic_block("poly.else")
        b.cbranch(cond, then_block, else_block)
        b.position_at_end(then_block)
        self.node(then)
        self.builder.branch(join)
        if other is not None:
            self.builder.position_at_end(else_block)
            self.node(other)
            self.builder.branch(join)
        self.builder.position_at_end(join)

    # -- statements --------------------------------------------------------------------------

    def user(self, call: isl.AstExpr) -> None:
        name = call.op_get_arg(0).get_id().get_name()
        args = [self.expr(call.op_get_arg(k + 1)) for k in range(call.op_get_n_arg() - 1)]
        if name == "TILE":
            self.tile(args)
            return
        if self.scratch is not None and self.scratch.emits(name):
            self.scratch.emit(self, name, args)
            return
        stmt = self.scop.statement(name)
        values: dict[ir.Value, ir.Value] = {}
        b = self.builder
        for phi, value in zip(stmt.phis, args):
            values[phi] = b.trunc(value, phi.type) if phi.type.width < 64 else value
        for instr in stmt.block.instructions:
            # sext(iv) is the 64-bit value itself (the counter fits its type): without the
            # trunc/sext pair LLVM's dependence analysis sees the affine subscripts
            if instr.opname == "sext" and instr.operands[0] in stmt.phis and instr.type == I64:
                values[instr] = args[stmt.phis.index(instr.operands[0])]
        if self.scratch is None:
            self.copy_statement(stmt, values)
            return
        # redirected subscripts are AST expressions in the statement's iterators
        hidden = {it: self.ids[it] for it in stmt.iterators if it in self.ids}
        self.ids.update(zip(stmt.iterators, args))
        self.copy_statement(stmt, values)
        for it in stmt.iterators:
            del self.ids[it]
        self.ids.update(hidden)

    def tile(self, args: list[ir.Value]) -> None:
        """One TILE instance: its coordinates bound, its scratch buffers allocated (each
        contracted array rebased so the rows the tile touches fall in its buffer), its AST."""
        inner = self.inner
        self.ids.update(zip(inner.params, args))
        b = self.builder
        buffers = []
        for window in inner.contracted:
            array = window.array
            row = ir.Constant(I64, size_of(array.element))
            for size in array.sizes:
                row = b.mul(row, self.extent(size), flags=["nsw"])
            memory = allocate(b, b.mul(row, ir.Constant(I64, window.rows), flags=["nsw"]))
            first = self.expr(inner.build.expr_from_pw_aff(window.first_row))
            shift = b.sub(ir.Constant(I64, 0), b.mul(first, row, flags=["nsw"]))
            self.rebased[array.base] = b.gep(memory, [shift], source_etype=ir.IntType(8))
            buffers.append(memory)
        if inner.full is None:
            self.node(inner.ast)
        else:
            self.branch(self.expr(inner.condition), inner.full, inner.ast)
        for memory in buffers:
            release(self.builder, memory)
        self.rebased.clear()
        for param in inner.params:
            del self.ids[param]

    def extent(self, size: str) -> ir.Value:
        """An array's inner extent: a parameter's value or a declared length (`17`)."""
        return ir.Constant(I64, int(size)) if size.isdigit() else self.ids[size]

    def copy_statement(self, stmt: Statement, values: dict) -> None:
        block = self.builder.block
        arrays = {id(a.instruction): a.array.name for a in stmt.accesses}
        for instr in stmt.block.instructions[:-1]:
            if instr in values:
                continue
            for op in used_values(instr):
                self.resolve(op, values, block)
            values[instr] = _clone(instr, block, values)
            for kind, node in self.alias_tags.get(arrays.get(id(instr), ""), {}).items():
                values[instr].set_metadata(kind, node)
            if instr.opname == "getelementptr" and id(values[instr].pointer) in self.unbounded:
                # the rebased address points before its buffer: no `inbounds` promise
                values[instr].inbounds = False
                self.unbounded.add(id(values[instr]))
            if self.scratch is not None:
                self.scratch.redirect(self, instr, values[instr])
        self.builder.position_at_end(block)

    def resolve(self, value: ir.Value, values: dict, block: ir.Block) -> None:
        """Make `values[value]` what a copy should use for `value` (an operand)."""
        if value in values or not isinstance(value, (ir.Instruction, ir.Argument)):
            return
        if value in self.rebased:
            values[value] = self.rebased[value]
            self.unbounded.add(id(values[value]))
            return
        if isinstance(value, ir.Argument) or value.parent not in self.region:
            values[value] = self.external(value)
            return
        if value.parent is not None and isinstance(value, ins.PhiInstr):
            raise CodegenError(f"induction variable {value.name} without a value")
        for op in used_values(value):  # pure arithmetic of the loop headers: recompute
            self.resolve(op, values, block)
        values[value] = _clone(value, block, values)

    # -- parallel loops ----------------------------------------------------------------------

    def parallel_loop(self, node: isl.AstNode) -> bool:
        """Outline a unit-step `for` with an upper bound `it <= e` / `it < e` and hand it to
        the parallel runtime; False (generate it serially) for any other shape."""
        inc = node.for_get_inc()
        cond = node.for_get_cond()
        name = node.for_get_iterator().get_id().get_name()
        if inc.get_type() != isl.ast_expr_type.int or inc.get_val().to_python() != 1:
            return False
        if cond.get_type() != isl.ast_expr_type.op or cond.op_get_type() not in (_OP.le, _OP.lt):
            return False
        left = cond.op_get_arg(0)
        if left.get_type() != isl.ast_expr_type.id or left.get_id().get_name() != name:
            return False
        lo = self.expr(node.for_get_init())
        hi = self.expr(cond.op_get_arg(1))
        if cond.op_get_type() == _OP.le:
            hi = self.builder.add(hi, ir.Constant(I64, 1), flags=["nsw"])
        body, captured = self.outline(name, node.for_get_body())
        ctx = pack_context(self.builder, captured)
        emit_parallel_call(self.builder, body, ctx, lo, hi, self.runtime, self.team)
        return True

    def outline(self, name: str, body: isl.AstNode) -> tuple[ir.Function, list[ir.Value]]:
        module = self.function.module
        ptr = ir.PointerType()
        fnty = ir.FunctionType(ir.VoidType(), [ptr, I64, I64])
        fn = ir.Function(module, fnty, module.get_unique_name(f"{self.function.name}.par"))
        fn.linkage = "internal"
        ctx, lo, hi = fn.args
        entry = fn.append_basic_block("entry")
        loads = ir.IRBuilder(entry)
        captured: list[ir.Value] = []
        slots: dict[int, ir.Value] = {}

        def capture(value: ir.Value) -> ir.Value:
            """The value of the enclosing function `value` stands for, read from ctx."""
            if id(value) not in slots:
                captured.append(value)
                slots[id(value)] = context_value(loads, ctx, [v.type for v in captured])
            return slots[id(value)]

        outer_ids = {key: capture(v) for key, v in self.ids.items()}
        inner = _Generator(
            fn,
            self.scop,
            self.region,
            outer_ids,
            external=lambda v: capture(self.external(v)),
            inner=self.inner,
            scratch=self.scratch,
            runtime=self.runtime,
            team=self.team,
        )
        start = fn.append_basic_block("body")
        inner.builder = ir.IRBuilder(start)
        if self.scratch is not None:  # private buffers: once per call (chunk of iterations)
            self.scratch.enter(inner, loads)
        inner.counted_loop(
            name,
            lo,
            lambda counter: inner.builder.icmp_signed("<", counter, hi),
            ir.Constant(I64, 1),
            body,
        )
        if self.scratch is not None:
            self.scratch.leave(inner)
        inner.builder.ret_void()
        loads.branch(start)
        facts_of(fn)[OUTLINED_FROM] = (self.function, [(v, slots[id(v)]) for v in captured])
        return fn, captured

    # -- run-time alias check ----------------------------------------------------------------

    def entry_condition(
        self, b: ir.IRBuilder, build: isl.AstBuild, min_bytes: int, by_cells: bool = False
    ) -> ir.Value:
        """i1: the parameters satisfy the SCoP's assumptions and stay within `PARAMETER_LIMIT`,
        no written array shares a byte
        with another array of the SCoP, and the byte ranges of the arrays outside the function
        (pointer arguments, globals) add up to at least `min_bytes`.

        A pointer argument may point into a global (or another argument's memory); two
        distinct globals never share a byte, and a local array shares none with anything."""
        self.builder = b
        scop = self.scop
        accessed = scop.reads().union(scop.writes()).range()
        written = {a.array.name for s in scop.statements for a in s.accesses if a.is_write}
        sets: list[isl.Set] = []
        accessed.foreach_set(sets.append)
        bounds, boxes = {}, {}
        for array in scop.arrays:
            if not _outside(array.base):
                continue
            cells = next((c for c in sets if c.get_tuple_name() == array.name), None)
            if cells is None or cells.is_empty():
                continue
            first, last, boxes[array.name] = self.byte_range(array, cells, build)
            bounds[array.name] = (first, last)
        result = ir.Constant(ir.IntType(1), 1)
        names = sorted(bounds)
        array_of = {array.name: array for array in scop.arrays}
        for x in range(len(names)):
            for y in range(x + 1, len(names)):
                pair = (names[x], names[y])
                if names[x] not in written and names[y] not in written:
                    continue
                if all(isinstance(array_of[n].base, ir.GlobalVariable) for n in pair):
                    continue
                (lo_a, hi_a), (lo_b, hi_b) = bounds[names[x]], bounds[names[y]]
                apart = b.or_(b.icmp_signed("<=", hi_a, lo_b), b.icmp_signed("<=", hi_b, lo_a))
                result = b.and_(result, apart)
        for name, original in scop.params.items():
            if original.type.width > 32:  # (a narrower one, widened, is always within it)
                value, limit = self.ids[name], ir.Constant(I64, PARAMETER_LIMIT)
                small = b.icmp_unsigned(
                    "<=", b.add(value, limit), ir.Constant(I64, 2 * PARAMETER_LIMIT)
                )
                result = b.and_(result, small)
        if scop.assumed is not None:  # what the model assumed of the parameters
            result = b.and_(result, self.expr(build.expr_from_set(scop.assumed)))
        if min_bytes:
            total = ir.Constant(I64, 0)
            for name, (first, last) in bounds.items():
                total = b.add(total, boxes[name] if by_cells else b.sub(last, first))
            large = b.icmp_signed(">=", total, ir.Constant(I64, min_bytes))
            result = b.and_(result, large)
        return result

    def byte_range(self, array, cells: isl.Set, build: isl.AstBuild):
        """[first byte, one past the last byte] of the cells, as i64 addresses, and the bytes
        of their bounding box (the product of its extents, each at least 1)."""
        b = self.builder
        one = ir.Constant(I64, 1)
        strides = [one]
        for size in array.sizes:  # innermost extent first (scop.py)
            strides.insert(0, b.mul(strides[0], self.extent(size), flags=["nsw"]))
        lo = hi = ir.Constant(I64, 0)
        size = ir.Constant(I64, size_of(array.element))
        box = size
        for k in range(array.rank):
            low = self.expr(build.expr_from_pw_aff(cells.dim_min(k)))
            high = self.expr(build.expr_from_pw_aff(cells.dim_max(k)))
            lo = b.add(lo, b.mul(low, strides[k]))
            hi = b.add(hi, b.mul(high, strides[k]))
            extent = b.add(b.sub(high, low), one)
            box = b.mul(box, b.select(b.icmp_signed("<", extent, one), one, extent))
        base = b.ptrtoint(array.base, I64)
        first = b.add(base, b.mul(lo, size))
        last = b.add(base, b.mul(b.add(hi, one), size))
        return first, last, box

    # -- expressions -------------------------------------------------------------------------

    def expr(self, e: isl.AstExpr) -> ir.Value:
        kind = e.get_type()
        if kind == isl.ast_expr_type.int:
            return ir.Constant(I64, e.get_val().to_python())
        if kind == isl.ast_expr_type.id:
            return self.ids[e.get_id().get_name()]
        if kind != isl.ast_expr_type.op:
            raise CodegenError(f"AST expression {e.to_C_str()}")
        op = e.op_get_type()
        args = [self.expr(e.op_get_arg(k)) for k in range(e.op_get_n_arg())]
        b = self.builder
        if op == _OP.add:
            return b.add(args[0], args[1], flags=["nsw"])
        if op == _OP.sub:
            return b.sub(args[0], args[1], flags=["nsw"])
        if op == _OP.mul:
            return b.mul(args[0], args[1], flags=["nsw"])
        if op == _OP.minus:
            return b.sub(ir.Constant(I64, 0), args[0], flags=["nsw"])
        if op in (_OP.div, _OP.pdiv_q):
            return b.sdiv(args[0], args[1])
        if op in (_OP.pdiv_r, _OP.zdiv_r):
            return b.srem(args[0], args[1])
        if op == _OP.fdiv_q:  # floor division by a positive constant
            negative = b.icmp_signed("<", args[0], ir.Constant(I64, 0))
            adjust = b.select(negative, b.sub(args[1], ir.Constant(I64, 1)), ir.Constant(I64, 0))
            return b.sdiv(b.sub(args[0], adjust), args[1])
        if op in (_OP.min, _OP.max):
            pred = "<" if op == _OP.min else ">"
            value = args[0]
            for other in args[1:]:
                value = b.select(b.icmp_signed(pred, value, other), value, other)
            return value
        if op in (_OP.cond, _OP.select):
            return b.select(args[0], args[1], args[2])
        compare = {_OP.eq: "==", _OP.le: "<=", _OP.lt: "<", _OP.ge: ">=", _OP.gt: ">"}
        if op in compare:
            return b.icmp_signed(compare[op], args[0], args[1])
        if op in (_OP.and_, _OP.and_then, _OP.or_, _OP.or_else):
            # isl may write a condition that always holds as the integer 1
            args = [
                b.icmp_signed("!=", x, ir.Constant(I64, 0)) if x.type == I64 else x for x in args
            ]
            if op in (_OP.and_, _OP.and_then):
                return b.and_(args[0], args[1])
            return b.or_(args[0], args[1])
        raise CodegenError(f"AST operator in {e.to_C_str()}")


def allocate(builder: ir.IRBuilder, size: ir.Value) -> ir.Value:
    """`malloc(size)`; filled with NaNs (all bits set) when POISON_SCRATCH is set while the
    code is generated."""
    memory = builder.call(_libc(builder.module, "malloc"), [size])
    if os.environ.get(POISON_SCRATCH):
        memset = builder.module.declare_intrinsic("llvm.memset", [ir.PointerType(), I64])
        builder.call(memset, [memory, ir.Constant(ir.IntType(8), 255), size, _FALSE])
    return memory


def release(builder: ir.IRBuilder, memory: ir.Value) -> None:
    """`free(memory)`."""
    builder.call(_libc(builder.module, "free"), [memory])


_LIBC = {
    "malloc": ir.FunctionType(ir.PointerType(), [I64]),
    "free": ir.FunctionType(ir.VoidType(), [ir.PointerType()]),
}


def _libc(module: ir.Module, name: str) -> ir.Function:
    existing = module.globals.get(name)
    return existing if isinstance(existing, ir.Function) else ir.Function(module, _LIBC[name], name)


def _upper_bound(cond: isl.AstExpr, name: str) -> tuple[str, isl.AstExpr] | None:
    """("<=" or "<", e) for a loop condition `name <= e` / `name < e` with `e` free of
    `name`, else None."""
    if cond.get_type() != isl.ast_expr_type.op:
        return None
    predicate = {_OP.le: "<=", _OP.lt: "<"}.get(cond.op_get_type())
    left, right = cond.op_get_arg(0), cond.op_get_arg(1)
    if predicate is None or left.get_type() != isl.ast_expr_type.id:
        return None
    if left.get_id().get_name() != name or name in _identifiers(right):
        return None
    return predicate, right


def _identifiers(e: isl.AstExpr) -> set[str]:
    kind = e.get_type()
    if kind == isl.ast_expr_type.id:
        return {e.get_id().get_name()}
    if kind != isl.ast_expr_type.op:
        return set()
    return set().union(*(_identifiers(e.op_get_arg(k)) for k in range(e.op_get_n_arg())))


def _constant_difference(a: isl.AstExpr, b: isl.AstExpr) -> int | None:
    """a - b if it is a constant (both affine in the same identifiers), else None."""
    left, right = _linear(a), _linear(b)
    if left is None or right is None:
        return None
    difference = {k: left.get(k, 0) - right.get(k, 0) for k in left.keys() | right.keys()}
    if any(c for k, c in difference.items() if k):
        return None
    return difference.get("", 0)


def _linear(e: isl.AstExpr) -> dict[str, int] | None:
    """`e` as {identifier: coefficient, "": constant term}, or None if it is not affine
    (divisions, min/max, conditions)."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return {"": e.get_val().to_python()}
    if kind == isl.ast_expr_type.id:
        return {e.get_id().get_name(): 1}
    if kind != isl.ast_expr_type.op:
        return None
    op = e.op_get_type()
    args = [_linear(e.op_get_arg(k)) for k in range(e.op_get_n_arg())]
    if any(a is None for a in args):
        return None
    if op == _OP.minus:
        return {k: -c for k, c in args[0].items()}
    if op in (_OP.add, _OP.sub):
        sign = 1 if op == _OP.add else -1
        out = dict(args[0])
        for k, c in args[1].items():
            out[k] = out.get(k, 0) + sign * c
        return out
    if op == _OP.mul:
        factor, other = (args[0], args[1]) if set(args[0]) <= {""} else (args[1], args[0])
        if not set(factor) <= {""}:
            return None
        return {k: c * factor.get("", 0) for k, c in other.items()}
    return None


def _alias_tags(module: ir.Module, scop: Scop) -> dict[str, dict[str, ir.MDValue]]:
    """For each array of `scop`, the `!alias.scope` (its own scope) and `!noalias` (every
    other array's) of its loads and stores in the generated code. The new code runs only
    when `entry_condition` holds: no written array shares a byte with another (two loads may
    meet, which no transformation cares about), so LLVM need not version every vectorized
    loop of a tile with run-time overlap checks of its own. Scopes are named after the
    function and the nest, unique in the module."""
    names = sorted({a.name for a in scop.arrays})
    if len(names) < 2:
        return {}
    where = f"pycc.{scop.function.name}.{scop.entry.name}"
    domain = module.add_metadata([ir.MetaDataString(module, where)])
    scopes = {
        name: module.add_metadata([ir.MetaDataString(module, f"{where}.{name}"), domain])
        for name in names
    }
    return {
        name: {
            "alias.scope": module.add_metadata([scopes[name]]),
            "noalias": module.add_metadata([scopes[other] for other in names if other != name]),
        }
        for name in names
    }


def _before_the_loops(value: ir.Value, builder: ir.IRBuilder, region: set[ir.Block]) -> ir.Value:
    """`value`, or if the SCoP computes it inside its loops from values before them (a
    parameter such as the row length of `u[i*(ny + 2) + j]`), a copy of that arithmetic
    inserted at `builder`, before the loops."""
    if not (isinstance(value, ir.Instruction) and value.parent in region):
        return value
    new = copy_instruction(value, builder.block)
    remap_operands(new, lambda operand: _before_the_loops(operand, builder, region))
    builder._insert(new)
    return new


def _clone(instr: ir.Instruction, block: ir.Block, values: dict) -> ir.Instruction:
    """A copy of `instr` appended to `block`, every operand (arguments too) mapped by
    `values`."""
    new = copy_instruction(instr, block)
    remap_operands(new, lambda v: values.get(v, v))
    block.instructions.append(new)
    return new


def constant_footprint(scop: Scop) -> int | None:
    """The bytes of the caller's arrays the SCoP touches, as `entry_condition` adds them up
    at run time, when they are known before it runs (no parameter in its bounds)."""
    if scop.params:
        return None
    accessed = scop.reads().union(scop.writes()).range()
    sets: list[isl.Set] = []
    accessed.foreach_set(sets.append)
    total = 0
    for array in scop.arrays:
        cells = next((c for c in sets if c.get_tuple_name() == array.name), None)
        if not _outside(array.base) or cells is None or cells.is_empty():
            continue
        if not all(size.isdigit() for size in array.sizes):
            return None
        strides = [1]
        for size in array.sizes:  # innermost extent first (scop.py)
            strides.insert(0, strides[0] * int(size))
        low = [cells.dim_min_val(k) for k in range(array.rank)]
        high = [cells.dim_max_val(k) for k in range(array.rank)]
        if any(v.is_infty() or v.is_neginfty() or not v.is_int() for v in low + high):
            return None
        first = sum(v.to_python() * stride for v, stride in zip(low, strides))
        last = sum(v.to_python() * stride for v, stride in zip(high, strides))
        total += (last + 1 - first) * size_of(array.element)
    return total


def constant_touched(scop: Scop) -> int | None:
    """At most the bytes of the distinct elements the SCoP reads or writes, when that is known
    before it runs. Elements, not the span between them: a short nest striding through a
    large array (`A[i * 100000]`, four steps) spans megabytes and touches a few cache lines.
    Without parameters, isl counts them (without enumerating); with parameters only in the
    subscripts (`a[i + k]`, loops of constant bounds), each statement's points times its
    distinct accesses' elements bound them."""
    sizes = {array.name: size_of(array.element) for array in scop.arrays}
    if not scop.params:
        sets: list[isl.Set] = []
        scop.reads().union(scop.writes()).range().foreach_set(sets.append)
        return sum(c.count_val().to_python() * sizes[c.get_tuple_name()] for c in sets)
    total = 0
    for statement in scop.statements:
        constraints = " and ".join(statement.constraints) or "0 = 0"
        domain = isl.Set(f"{scop.param_prefix}{{ {statement.tuple_text()} : {constraints} }}")
        # its points for any values of the parameters: unbounded when they bound a loop (isl
        # counts an unbounded set as 0)
        domain = domain.project_out(isl.dim_type.param, 0, len(scop.params))
        if not domain.is_bounded():
            return None
        points = domain.count_val()
        accesses = {(a.array.name, tuple(a.subscripts)) for a in statement.accesses}
        total += points.to_python() * sum(sizes[name] for name, _ in accesses)
    return total


def _outside(base: ir.Value) -> bool:
    """Is the array's memory the caller's: a pointer argument, a pointer loaded or computed
    before the loops (`field->data`, a `malloc`'s result), or a mutable global (a constant
    table is the module's own, read-only)?"""
    if isinstance(base, ir.GlobalVariable):
        return not base.global_constant
    return isinstance(base, ir.Argument) or opaque_base(base)
