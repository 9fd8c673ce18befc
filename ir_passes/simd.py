"""`simd(W)`: SIMD binding (Algorithm 3 of the C66x dissertation, any width W).

The innermost loop is unrolled by the vector width (or was unrolled by a multiple of it by an
earlier `unroll(U)`), and the U homologous copies of each instruction are bound, W at a time,
into one LLVM vector instruction:

- loads/stores whose address advances by one element per iteration become one vector
  load/store (a descending address: a reversed vector); addresses that do not move become one
  scalar load broadcast to all lanes; any other affine address is gathered/scattered lane by
  lane, in lane order;
- arithmetic, conversions, comparisons, selects and the exact math intrinsics (sqrt, fabs,
  floor, fma, abs, min/max, ...) become their vector forms with the same flags; libm calls are
  made once per lane; loop invariants and constants become splats; the induction variable
  becomes `splat(iv) + <0, s, 2s, ...>`;
- address arithmetic stays scalar (lane 0, or every lane for a gather).

Every lane computes exactly what its scalar iteration computed, in the same order (a window
reduction `sum += w[k] * in[x + k]` accumulates per lane), so results are bit-identical to the
scalar loop. The only reordering is between lanes of one vector: memory accesses of lanes
0..W-1 of an instruction all happen before the next instruction's. That is legal unless a store
of one lane meets an access of another lane in the other order; the pass proves this from the
affine addresses when their distance is constant, and otherwise checks at run time, before the
loop where it can (accesses of one constant stride: their distance; of different constant
strides: the byte ranges they touch over the whole loop), else at each vector iteration (the
byte ranges its U lanes touch), that they do not overlap; when they do, the scalar remainder
loop finishes the loop. Iterations left over (T mod U) run in the original
scalar loop.

Integer reductions `s = s op x` (add, mul, and, or, xor: exact in any order with wrapping
arithmetic) keep one vector accumulator per group and are reduced after the vector loop. Loops
with early exits, floating-point reductions across iterations (vectorizing them would
reassociate), recurrences, or unsupported instructions stay scalar with a
`-Rpass-missed=simd` remark saying why. `simd` without a width binds the lanes the module's
Target gives for the widest element the loop loads or stores (`Target.simd_lanes`: a vector
register of them).
Neighbours `x-1, x, x+1` of a row are read by one unaligned load each, or (`simd(W,shuffle)`,
or `auto` where the target's costs favour it) by shuffles of the row's vectors loaded once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.affine import address_of, size_of
from .core.alignment import row_alignment
from .core.analyses import invalidate, loops_of
from .core.debuginfo import describe
from .core.libm import LIBM_FUNCTIONS
from .core.loops import InductionVariable, Loop
from .core.memory import disjoint
from .core.rewrite import copy_blocks, copy_instruction, remap_operands
from .core.symbolic import Expr
from .ifconvert import if_convert, intrinsic_stem
from .peel import Stream, peel_before, peel_count
from .registry import PassContext, bounded_int, register
from .unroll import (
    Decline,
    UnrolledLoop,
    build_guard,
    exit_test,
    is_remainder,
    is_slice_of,
    unroll_loop,
    unrolled_loops,
)

_BINARY = frozenset(
    "add sub mul sdiv udiv srem urem shl lshr ashr and or xor fadd fsub fmul fdiv frem".split()
)
_CASTS = frozenset("sext zext trunc fpext fptrunc sitofp uitofp fptosi fptoui bitcast".split())


#: the base pointers of the arrays whose unit-stride stores `_bind_loop` makes non-temporal
#: (arrays the nest does not read again)
Streamed = Collection[ir.Value]


def _element(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntType, ir.FloatType, ir.DoubleType))


def _callee_name(call: ir.Instruction) -> str:
    return getattr(call.callee, "name", "")


@dataclass(eq=False)
class _Access:
    """A load or store of the loop body and how its address moves from lane to lane."""

    instruction: ir.Instruction
    is_store: bool
    size: int
    base: ir.Value
    offset: Expr
    #: bytes the address advances per iteration: an int, a Expr (symbolic), or None
    #: when the address is not affine in the induction variables
    stride: int | Expr | None


@dataclass(eq=False)
class _Row:
    """Unit-stride loads of one array at constant element offsets dx of each other (the
    `x-1, x, x+1` neighbours of a stencil row): `anchor` is the one at the lowest offset
    `low`; the row's vectors V_0 .. V_{vectors-1} are W consecutive elements each from the
    anchor's address in lane 0, W, 2W, ... and never reach past what the lanes read.

    A `carried` row is read instead as U_g, W elements from the highest offset's address
    (`top`, offset `high`) in lane g*W, one per group, and U_-1, the previous iteration's
    last U kept in a register: every member is then U_g or one shuffle of U_g-1 and U_g,
    one load per group, where V_m+1 would read past the lanes (`_carry_rows`)."""

    anchor: _Access
    low: int
    vectors: int
    top: _Access | None = None
    high: int = 0
    carried: bool = False


@dataclass(eq=False)
class _Plan:
    """The facts about the original (scalar) loop that binding needs."""

    loop: Loop
    ivs: dict[ins.PhiInstr, InductionVariable]
    body: list[ir.Instruction]  # header instructions, then the body blocks', in order
    accesses: list[_Access]
    element_size: int  # the widest element loaded or stored
    #: pairs whose lanes may overlap at run time: the vector iteration checks them
    runtime_checks: list[tuple[_Access, _Access]] = field(default_factory=list)
    #: integer reductions `phi = phi op x`: phi -> the update instruction
    reductions: dict[ins.PhiInstr, ir.Instruction] = field(default_factory=dict)
    #: loads read through shuffles of their row's vectors: access -> (row, offset dx)
    neighbours: dict[_Access, tuple[_Row, int]] = field(default_factory=dict)


def _body_chain(loop: Loop) -> list[ir.Block]:
    """The body blocks from the header's in-loop successor to the latch, if straight-line."""
    term = loop.header.terminator
    if not isinstance(term, ins.ConditionalBranch):
        raise Decline("the header does not end in a conditional branch")
    inside = [t for t in term.operands[1:] if t in loop]
    if len(inside) != 1 or inside[0] is loop.header:
        raise Decline("the exit test is not in the header")
    chain, block = [], inside[0]
    while block is not loop.header:
        if block in chain:
            raise Decline("control flow inside the loop body")
        chain.append(block)
        term = block.terminator
        if not isinstance(term, ins.Branch):  # (a ConditionalBranch is not a Branch)
            raise Decline("control flow inside the loop body (a branch or an early exit)")
        block = term.operands[0]
    if len(chain) != len(loop.blocks) - 1:
        raise Decline("control flow inside the loop body")
    return chain


def _lane_stride(offset: Expr, ivs: dict[ins.PhiInstr, InductionVariable], loop: Loop):
    """Bytes per iteration the offset advances (int or Expr), None if not affine."""
    stride = Expr()
    for phi, iv in ivs.items():
        stride = stride + offset.coefficient(phi).scaled(iv.step)
    varying = set(ivs)
    for monomial, _ in offset.terms:
        for value in monomial:
            if value in varying or not isinstance(value, ins.Instruction):
                continue
            if value.parent in loop and not loop.is_invariant(value):
                return None  # an index loaded or computed in the loop (indirect access)
    for monomial, _ in stride.terms:
        if any(v in varying for v in monomial):
            return None  # quadratic in the induction variable
    if all(not monomial for monomial, _ in stride.terms):
        return stride.constant_term
    return stride


def _plan(loop: Loop) -> _Plan:
    """Check that `loop` can be bound and gather the facts; Decline with the reason if not."""
    if loop.preheader is None or loop.latch is None:
        raise Decline("the loop has no unique preheader and latch")
    chain = _body_chain(loop)
    ivs = {iv.phi: iv for iv in loop.induction_variables if iv.step is not None}
    header = loop.header
    reductions = {}
    for phi in header.instructions:
        if not isinstance(phi, ins.PhiInstr) or phi in ivs:
            continue
        update = _integer_reduction(phi, loop)
        if update is not None:
            reductions[phi] = update
            continue
        if isinstance(phi.type, (ir.FloatType, ir.DoubleType)):
            raise Decline(
                f"floating-point value %{phi.name} carried across iterations (a reduction): "
                "vectorizing it would reassociate the operations and change the result"
            )
        raise Decline(
            f"loop-carried value %{phi.name} (a recurrence, or a running value read in the "
            "loop): its lanes would depend on each other"
        )
    body = [i for i in header.instructions if not isinstance(i, ins.PhiInstr)][:-1]
    for block in chain:
        body.extend(block.instructions[:-1])
    accesses = []
    for instr in body:
        _check_instruction(instr)
        if instr.opname in ("load", "store"):
            pointer = instr.operands[0] if instr.opname == "load" else instr.operands[1]
            value_type = instr.type if instr.opname == "load" else instr.operands[0].type
            address = address_of(pointer)
            stride = _lane_stride(address.offset, ivs, loop)
            if not _element(value_type) and not (
                instr.opname == "load" and stride == 0 and isinstance(value_type, ir.PointerType)
            ):
                raise Decline(f"{instr.opname} of {value_type} is not a scalar element")
            accesses.append(
                _Access(
                    instr,
                    instr.opname == "store",
                    size_of(value_type),
                    address.base,
                    address.offset,
                    stride,
                )
            )
    elements = [a.size for a in accesses if _element(_accessed_type(a))]
    return _Plan(loop, ivs, body, accesses, max(elements, default=4), reductions=reductions)


#: integer operations whose reduction is exact in any order (wrapping arithmetic), with
#: their identity and LLVM's horizontal reduction
_REDUCTIONS = {"add": (0, "add"), "mul": (1, "mul"), "and": (-1, "and"), "or": (0, "or"),
               "xor": (0, "xor")}  # fmt: skip


def _integer_reduction(phi: ins.PhiInstr, loop: Loop) -> ir.Instruction | None:
    """The update `phi op x` if `phi` accumulates with an exact integer reduction and is used
    by nothing else in the loop (so partial results per lane can be combined at the end)."""
    if not isinstance(phi.type, ir.IntType) or loop.latch is None:
        return None
    update = dict((b, v) for v, b in phi.incomings).get(loop.latch)
    if getattr(update, "opname", None) not in _REDUCTIONS or phi not in update.operands:
        return None

    def users(value: ir.Value) -> list[ir.Instruction]:
        def uses(i: ir.Instruction) -> bool:
            if isinstance(i, ins.PhiInstr):
                return any(v is value for v, _ in i.incomings)
            return any(op is value for op in i.operands)

        return [i for b in loop.blocks for i in b.instructions if uses(i)]

    if users(phi) != [update] or users(update) != [phi] or update.operands[0] is update.operands[1]:
        return None  # a running value read in the loop (a prefix sum) depends on every lane
    return update


def _accessed_type(access: _Access) -> ir.Type:
    instr = access.instruction
    return instr.operands[0].type if access.is_store else instr.type


def _check_instruction(instr: ir.Instruction) -> None:
    opname = instr.opname
    if isinstance(instr, ins.PhiInstr):
        raise Decline("a phi inside the loop body")
    if opname in ("load", "store", "getelementptr", "icmp", "fcmp", "select", "fneg"):
        return
    if opname in _BINARY or opname in _CASTS:
        return
    if opname == "call":
        name = _callee_name(instr)
        if intrinsic_stem(instr) is not None:
            return
        if name in LIBM_FUNCTIONS:
            return
        raise Decline(f"call to {name or 'an unknown function'} in the loop body")
    raise Decline(f"'{opname}' instruction in the loop body")


def _check_dependences(plan: _Plan, width: int) -> None:
    """Decline lane-crossing dependences within `width` lanes proven from the addresses;
    record pairs to check at run time where the distance is not a constant."""
    accesses = plan.accesses
    has_store = any(a.is_store for a in accesses)
    if has_store and any(a.stride is None for a in accesses):
        culprit = next(a for a in accesses if a.stride is None)
        raise Decline(
            f"the address of a {culprit.instruction.opname} is not affine in the induction "
            "variable (indirect access) and the loop stores"
        )
    for i, first in enumerate(accesses):
        for second in accesses[i + 1 :]:
            if not (first.is_store or second.is_store):
                continue
            if disjoint(first.base, second.base) or _scoped_apart(first, second):
                continue
            if first.base is second.base:
                distance = first.offset - second.offset
                constant = all(not m for m, _ in distance.terms)
                if constant and isinstance(first.stride, int) and isinstance(second.stride, int):
                    _check_constant_distance(first, second, distance.constant_term, width)
                    continue
            plan.runtime_checks.append((first, second))


def _scoped_apart(first: _Access, second: _Access) -> bool:
    """Do the two accesses' alias scopes say they never meet (code the polyhedral generator
    made behind its check that a written array shares no byte with another: its
    `!alias.scope` and `!noalias` tags, `polyhedral/codegen._alias_tags`)?"""

    def nodes(access: _Access, kind: str) -> set[int]:
        tag = access.instruction.metadata.get(kind)
        return {id(node) for node in tag.operands} if tag is not None else set()

    a, b = nodes(first, "alias.scope"), nodes(second, "alias.scope")
    return bool(a and b) and (a <= nodes(second, "noalias") or b <= nodes(first, "noalias"))


def _check_constant_distance(first: _Access, second: _Access, delta: int, width: int) -> None:
    """`first` precedes `second` in the body; lane k of `first` then runs before lane k' < k of
    `second`, the reverse of the scalar order: they must not overlap."""
    for k in range(1, width):
        for k2 in range(0, k):
            start1 = delta + k * first.stride
            start2 = k2 * second.stride
            if start1 < start2 + second.size and start2 < start1 + first.size:
                raise Decline(
                    f"the {first.instruction.opname} at {describe(first.instruction)} and the "
                    f"{second.instruction.opname} at {describe(second.instruction)} touch the "
                    f"same memory {k - k2} iteration(s) apart"
                )


class _Binder:
    """Builds the vector body of one unrolled loop: groups of W lanes, in lane order."""

    def __init__(
        self,
        plan: _Plan,
        record: UnrolledLoop,
        width: int,
        iv_values: dict[ins.PhiInstr, ir.Value],
        speculative: bool = False,
    ):
        """`iv_values` gives lane 0's induction variables; `speculative` code (the preheader's
        overlap test) may compute addresses of iterations that never run, so it drops the
        no-overflow promises (`nsw`, `inbounds`) that would make such values poison."""
        self.plan, self.record, self.width = plan, record, width
        self.iv_values, self.speculative = iv_values, speculative
        self.function = record.header.parent
        self.module = self.function.module
        self.loop_blocks = set(plan.loop.blocks)
        self.scalars: dict[tuple[ir.Value, int], ir.Value] = {}
        self.vectors: dict[tuple[ir.Value, int], ir.Value] = {}
        self.splats: dict[ir.Value, ir.Value] = {}
        self.builder: ir.IRBuilder | None = None
        self.neighbours = plan.neighbours
        #: (reduction phi, group) -> the vector accumulator phi of the vector loop
        self.accumulators: dict[tuple[ir.Value, int], ir.Value] = {}
        self.varying = self._varying()
        #: the stores emitted as aligned non-temporal vector stores (`_bind_loop`)
        self.streamed: set[ir.Instruction] = set()
        #: carried row -> the vector loop's phi of its U_-1 (`_carry_rows`)
        self.carried: dict[_Row, ir.Value] = {}

    # -- which values differ from lane to lane
    def _varying(self) -> set[ir.Value]:
        varying: set[ir.Value] = set(self.plan.ivs) | set(self.plan.reductions)
        for instr in self.plan.body:
            if instr.opname in ("load", "call") or any(op in varying for op in instr.operands):
                varying.add(instr)
        return varying

    def _in_loop(self, value: ir.Value) -> bool:
        return isinstance(value, ins.Instruction) and value.parent in self.loop_blocks

    def _emit(self, instr: ir.Instruction, original: ir.Instruction | None) -> ir.Instruction:
        if original is not None and "dbg" in original.metadata:
            instr.set_metadata("dbg", original.metadata["dbg"])
        return instr

    # -- scalar values of one lane (lane = iteration within the unrolled iteration)
    def scalar(self, value: ir.Value, lane: int) -> ir.Value:
        if not self._in_loop(value):
            return value
        if value not in self.varying:
            lane = 0
        key = (value, lane)
        if key in self.scalars:
            return self.scalars[key]
        b = self.builder
        if value in self.plan.ivs:
            iv = self.plan.ivs[value]
            phi = self.iv_values[value]
            result = phi
            if lane:
                flags = ["nsw"] if iv.nsw and not self.speculative else []
                offset = ir.Constant(phi.type, lane * iv.step)
                result = b.add(phi, offset, name=f"{value.name}.l{lane}", flags=flags)
        elif value.opname == "load":
            group, index = divmod(lane, self.width)
            vector = self.vectors.get((value, group))
            if vector is None:  # a load used before its group was emitted cannot happen
                raise Decline("a loaded value is used before the load in the body")
            if isinstance(vector.type, ir.VectorType):
                result = b.extract_element(vector, ir.Constant(ir.IntType(32), index))
            else:
                result = vector
        else:
            result = self._clone(value, lambda op: self.scalar(op, lane))
        self.scalars[key] = result
        return result

    def _clone(self, instr: ir.Instruction, operand) -> ir.Instruction:
        new = copy_instruction(instr, self.builder.block)
        remap_operands(new, lambda v: operand(v) if self._in_loop(v) else v)
        if self.speculative and isinstance(getattr(new, "flags", None), list):
            new.flags = [f for f in new.flags if f not in ("nsw", "nuw", "exact")]
        if self.speculative and isinstance(new, ins.GEPInstr):
            new.inbounds = False
        new.metadata = {k: v for k, v in instr.metadata.items() if k == "dbg"}
        new._clear_string_cache()
        self.builder._insert(new)
        return new

    # -- vectors of W lanes (group g holds lanes g*W .. g*W+W-1)
    def vector_type(self, t: ir.Type) -> ir.VectorType:
        return ir.VectorType(t, self.width)

    def splat(self, value: ir.Value) -> ir.Value:
        if isinstance(value, ir.Constant):
            return ir.Constant(self.vector_type(value.type), [value] * self.width)
        if value in self.splats:
            return self.splats[value]
        b = self.builder
        vt = self.vector_type(value.type)
        one = b.insert_element(ir.Constant(vt, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), self.width), [0] * self.width)
        result = b.shuffle_vector(one, ir.Constant(vt, ir.Undefined), mask)
        self.splats[value] = result
        return result

    def vector(self, value: ir.Value, group: int) -> ir.Value:
        if value not in self.varying:
            return self.splat(self.scalar(value, 0))
        key = (value, group)
        if key in self.vectors:
            return self.vectors[key]
        b = self.builder
        first = group * self.width
        if value in self.plan.reductions:
            result = self.accumulators[(value, group)]
        elif value in self.plan.ivs:
            step = self.plan.ivs[value].step
            lanes = ir.Constant(self.vector_type(value.type), [k * step for k in range(self.width)])
            result = b.add(self.splat(self.scalar(value, first)), lanes)
        else:
            result = self._widen(value, group)
        self.vectors[key] = result
        return result

    def _widen(self, instr: ir.Instruction, group: int) -> ir.Value:
        b = self.builder
        opname = instr.opname
        if opname == "load":
            raise Decline("a loaded value is used before the load in the body")
        if opname == "getelementptr" or isinstance(instr.type, ir.PointerType):
            return self._pack(instr, group)
        if opname == "call":
            if intrinsic_stem(instr) is None:
                return self._pack(instr, group)
            # overloaded operands are vectors; flags such as abs's `i1 false` stay scalar
            operands = [
                self.vector(op, group) if op.type == instr.type else op for op in instr.args
            ]
            return self._emit(b.call(self._vector_intrinsic(instr), operands), instr)
        if not all(_element(op.type) for op in instr.operands):
            raise Decline(f"'{opname}' of non-scalar operands in the loop body")
        vt = self.vector_type(instr.type)
        operands = [self.vector(op, group) for op in instr.operands]
        if opname in _BINARY:
            flags = list(instr.flags)
            if instr in self.plan.reductions.values():  # partial sums may overflow differently
                flags = [f for f in flags if f not in ("nsw", "nuw")]
            new = ins.Instruction(b.block, vt, opname, operands, flags=flags)
        elif opname in _CASTS:
            new = ins.CastInstr(b.block, opname, operands[0], vt)
        elif opname == "fneg":
            new = ins.Instruction(b.block, vt, "fneg", operands, flags=list(instr.flags))
        elif opname == "icmp":
            new = ins.ICMPInstr(b.block, instr.op, operands[0], operands[1])
        elif opname == "fcmp":
            new = ins.FCMPInstr(b.block, instr.op, operands[0], operands[1], flags=instr.flags)
        elif opname == "select":
            new = ins.SelectInstr(b.block, *operands, flags=instr.flags)
        else:
            return self._pack(instr, group)
        b._insert(new)
        return self._emit(new, instr)

    def _vector_intrinsic(self, call: ir.Instruction) -> ir.Function:
        scalar_fn = call.callee
        suffix = "." + _type_suffix(call.type)
        name = scalar_fn.name.replace(suffix, f".v{self.width}{suffix[1:]}")
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        fnty = scalar_fn.function_type
        args = [self.vector_type(a) if a == call.type else a for a in fnty.args]
        return ir.Function(self.module, ir.FunctionType(self.vector_type(call.type), args), name)

    def _pack(self, instr: ir.Instruction, group: int) -> ir.Value:
        """The vector of the lanes' scalar values (insertelement), e.g. for a libm call."""
        b = self.builder
        if not _element(instr.type) and instr.type != ir.IntType(1):
            raise Decline(f"a {instr.type} value is used as data in the loop body")
        result = ir.Constant(self.vector_type(instr.type), ir.Undefined)
        for k in range(self.width):
            lane = self.scalar(instr, group * self.width + k)
            result = b.insert_element(result, lane, ir.Constant(ir.IntType(32), k))
        return result

    # -- memory
    def emit_access(self, access: _Access, group: int) -> None:
        b = self.builder
        instr = access.instruction
        first = group * self.width
        width = self.width
        pointer_operand = instr.operands[0] if not access.is_store else instr.operands[1]
        align = getattr(instr, "align", None) or access.size
        stride = access.stride
        if access.is_store:
            value = self.vector(instr.operands[0], group)
            if stride == access.size:
                streamed = instr in self.streamed
                vector_bytes = width * access.size
                pointer = self.scalar(pointer_operand, first)
                store = b.store(value, pointer, align=vector_bytes if streamed else align)
                if streamed:
                    store.set_metadata("nontemporal", self.module.add_metadata([ir.IntType(32)(1)]))
                self._emit(store, instr)
            elif stride == -access.size:
                last = self.scalar(pointer_operand, first + width - 1)
                store = b.store(self._reverse(value), last, align=align)
                self._emit(store, instr)
            else:
                for k in range(width):
                    lane = b.extract_element(value, ir.Constant(ir.IntType(32), k))
                    pointer = self.scalar(pointer_operand, first + k)
                    self._emit(b.store(lane, pointer, align=align), instr)
            return
        element = instr.type
        if access in self.neighbours:
            self.vectors[(instr, group)] = self._neighbour(access, group, align)
            return
        if stride == 0:
            pointer = self.scalar(pointer_operand, first)
            load = self._emit(b.load(pointer, align=align, typ=element), instr)
            if _element(element):
                self.vectors[(instr, group)] = self.splat(load)
            else:  # a pointer read once per vector iteration (a row pointer)
                for k in range(width):
                    self.scalars[(instr, first + k)] = load
                self.vectors[(instr, group)] = load
            return
        vt = self.vector_type(element)
        if stride == access.size:
            load = b.load(self.scalar(pointer_operand, first), align=align, typ=vt)
            self.vectors[(instr, group)] = self._emit(load, instr)
        elif stride == -access.size:
            last = self.scalar(pointer_operand, first + width - 1)
            load = self._emit(b.load(last, align=align, typ=vt), instr)
            self.vectors[(instr, group)] = self._reverse(load)
        else:
            result = ir.Constant(vt, ir.Undefined)
            for k in range(width):
                pointer = self.scalar(pointer_operand, first + k)
                lane = self._emit(b.load(pointer, align=align, typ=element), instr)
                self.scalars[(instr, first + k)] = lane
                result = b.insert_element(result, lane, ir.Constant(ir.IntType(32), k))
            self.vectors[(instr, group)] = result

    def _neighbour(self, access: _Access, group: int, align: int) -> ir.Value:
        """Lanes group*W + dx .. of a row read at several offsets dx: one shuffle of two
        vectors V_m, V_m+1 of the row (each loaded once for the whole unrolled iteration),
        or a direct load where V_m+1 would read past what the scalar loop reads; of a
        carried row, U_g or a shuffle of U_g-1 and U_g."""
        row, dx = self.neighbours[access]
        if row.carried:
            if dx == row.high:
                return self.top_vector(row, group, align)
            first = self.width + dx - row.high  # U_g-1's lanes first, then U_g's
            mask = ir.VectorType(ir.IntType(32), self.width)
            low = self.top_vector(row, group - 1, align)
            high = self.top_vector(row, group, align)
            lanes = ir.Constant(mask, list(range(first, first + self.width)))
            return self.builder.shuffle_vector(low, high, lanes)
        position = group * self.width + dx - row.low
        m, r = divmod(position, self.width)
        if r == 0:
            return self._row_vector(row, m, align)
        if m + 1 >= row.vectors:
            pointer = self.scalar(access.instruction.operands[0], group * self.width)
            vt = self.vector_type(access.instruction.type)
            load = self.builder.load(pointer, align=align, typ=vt)
            return self._emit(load, access.instruction)
        low, high = self._row_vector(row, m, align), self._row_vector(row, m + 1, align)
        lanes = list(range(r, r + self.width))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), self.width), lanes)
        return self.builder.shuffle_vector(low, high, mask)

    def _row_vector(self, row: _Row, m: int, align: int) -> ir.Value:
        """V_m of the row, shared by all groups."""
        return self._shared_load(row.anchor, m, align)

    def top_vector(self, row: _Row, group: int, align: int) -> ir.Value:
        """U_group of a carried row (U_-1: the vector the previous iteration loaded last)."""
        if group < 0:
            return self.carried[row]
        assert row.top is not None
        return self._shared_load(row.top, group, align)

    def _shared_load(self, access: _Access, m: int, align: int) -> ir.Value:
        """The W elements `access` reads from lane m*W on, loaded once."""
        key = (access.instruction, -1 - m)
        if key not in self.vectors:
            instr = access.instruction
            pointer = self.scalar(instr.operands[0], m * self.width)
            load = self.builder.load(pointer, align=align, typ=self.vector_type(instr.type))
            self.vectors[key] = self._emit(load, instr)
        return self.vectors[key]

    def _reverse(self, vector: ir.Value) -> ir.Value:
        mask = ir.Constant(
            ir.VectorType(ir.IntType(32), self.width), list(range(self.width - 1, -1, -1))
        )
        return self.builder.shuffle_vector(vector, ir.Constant(vector.type, ir.Undefined), mask)

    # -- run-time overlap tests of pairs whose distance is not a constant
    def address(self, access: _Access, lane: int) -> ir.Value:
        pointer = access.instruction.operands[1 if access.is_store else 0]
        return self.builder.ptrtoint(self.scalar(pointer, lane), ir.IntType(64))

    def footprint(self, access: _Access, lanes: int) -> tuple[ir.Value, ir.Value]:
        """[low, high) byte addresses the access touches over lanes 0..lanes-1 (its address
        is affine in the lane, so the extremes are the first and the last lane)."""
        b = self.builder
        first, last = self.address(access, 0), self.address(access, lanes - 1)
        if isinstance(access.stride, int):
            low, high = (first, last) if access.stride >= 0 else (last, first)
        else:
            ordered = b.icmp_unsigned("<=", first, last)
            low, high = b.select(ordered, first, last), b.select(ordered, last, first)
        return low, b.add(high, ir.Constant(ir.IntType(64), access.size))

    def whole_loop_footprint(self, access: _Access, last: ir.Value) -> tuple[ir.Value, ir.Value]:
        """[low, high) byte addresses a constant-stride access touches in iterations
        0..`last` (an i64) of the loop, from lane 0's address."""
        b = self.builder
        first = self.address(access, 0)
        size = ir.Constant(ir.IntType(64), access.size)
        extent = b.mul(last, ir.Constant(ir.IntType(64), access.stride))
        if access.stride < 0:
            return b.add(first, extent), b.add(first, size)
        return first, b.add(b.add(first, extent), size)

    def ranges_apart(
        self,
        pairs: list[tuple[_Access, _Access]],
        footprint: Callable[[_Access], tuple[ir.Value, ir.Value]],
    ) -> ir.Value:
        """True when, for every pair, the byte ranges `footprint` gives do not overlap. Pairs
        whose first range lies a constant number of bytes from another pair's, relative to
        the second (`_shifted_groups`), are tested as one: the hull of the shifted ranges."""
        b = self.builder
        i64 = ir.IntType(64)
        condition = ir.Constant(ir.IntType(1), 1)
        footprints: dict[_Access, tuple[ir.Value, ir.Value]] = {}
        for (first, second), shifts in _shifted_groups(pairs):
            for access in (first, second):
                if access not in footprints:
                    footprints[access] = footprint(access)
            low1, high1 = footprints[first]
            low2, high2 = footprints[second]
            if max(shifts):
                high1 = b.add(high1, ir.Constant(i64, max(shifts)))
            if min(shifts):
                low1 = b.add(low1, ir.Constant(i64, min(shifts)))
            apart = b.or_(b.icmp_unsigned("<=", high1, low2), b.icmp_unsigned("<=", high2, low1))
            condition = b.and_(condition, apart)
        return condition

    def distances_apart(self, pairs: list[tuple[_Access, _Access]], window: int) -> ir.Value:
        """The test for pairs that advance by the same constant stride d: their distance
        delta = first - second never changes, so it is tested once, before the loop. Lane k of
        `first` runs before lane k - j of `second` (0 < j < window, the lanes whose order the
        vector code may change); they overlap iff -size1 < delta + j*d < size2, so delta must
        avoid the hull of those intervals. Pairs that differ only by a constant shift of one
        side's address (a row's x-1, x, x+1 against a store: `_shifted_groups`) are tested as
        one: the reference delta plus every shift must avoid it on the same side."""
        b = self.builder
        i64 = ir.IntType(64)
        condition = ir.Constant(ir.IntType(1), 1)
        for (first, second), shifts in _shifted_groups(pairs):
            d, far = first.stride, (window - 1) * abs(first.stride)
            if d > 0:  # unsafe: -(size1 + (W-1)d) < delta < size2 - d
                low, high = -(first.size + far), second.size - d
            else:  # unsafe: |d| - size1 < delta < size2 + (W-1)|d|
                low, high = -d - first.size, second.size + far
            delta = b.sub(self.address(first, 0), self.address(second, 0))
            below = b.icmp_signed("<=", delta, ir.Constant(i64, low - max(shifts)))
            above = b.icmp_signed(">=", delta, ir.Constant(i64, high - min(shifts)))
            condition = b.and_(condition, b.or_(below, above))
        return condition


def _shifted_groups(
    pairs: list[tuple[_Access, _Access]],
) -> list[tuple[tuple[_Access, _Access], list[int]]]:
    """`pairs` as groups [(reference pair, byte shifts of delta)]: pairs that share one
    access, whose other accesses have one base, size and stride and addresses a constant
    number of bytes apart, have deltas (first's address - second's) = the reference's + a
    constant shift, in every lane and iteration."""
    groups: list[tuple[tuple[_Access, _Access], list[int]]] = []
    for pair in pairs:
        for (first, second), shifts in groups:
            for fixed, moving, reference, sign in ((1, 0, first, 1), (0, 1, second, -1)):
                other = pair[moving]
                if pair[fixed] is not (first, second)[fixed] or not _same_row(other, reference):
                    continue
                distance = other.offset - reference.offset
                if all(not m for m, _ in distance.terms):
                    shifts.append(sign * distance.constant_term)
                    break
            else:
                continue
            break
        else:
            groups.append((pair, [0]))
    return groups


def _same_row(a: _Access, b: _Access) -> bool:
    return a.base is b.base and a.size == b.size and a.stride == b.stride and a is not b


def _type_suffix(t: ir.Type) -> str:
    return t.intrinsic_name


def _bind(
    function: ir.Function,
    plan: _Plan,
    record: UnrolledLoop,
    width: int,
    streams: list[_Access] = (),  # type: ignore[assignment]
) -> dict[_Row, ins.PhiInstr]:
    """Replace the copies of `record` by the bound vector body (and its run-time check), the
    stores of `streams` non-temporal and aligned to their vector's size (which the caller
    must then make true). The phis of the carried rows, which the caller completes once the
    vector loop's entry is final (`_carry_rows`)."""
    uh = record.header
    binder = _Binder(plan, record, width, dict(record.phis))
    binder.streamed = {a.instruction for a in streams}
    position = function.blocks.index(record.body[0])
    blocks: list[ir.Block] = []
    middle = next(t for t in uh.terminator.operands[1:] if t is not record.entry)
    # pairs of one constant stride: their distance is tested before the loop; of other
    # constant strides (an int16 row read, a uint8 row written): the byte ranges they cover
    # over the whole loop, also before it; of strides the loop computes: every iteration
    invariant, constant, varying = [], [], []
    whole_loop = _last_iteration_computable(plan)
    for a, b in plan.runtime_checks:
        if isinstance(a.stride, int) and a.stride != 0 and a.stride == b.stride:
            invariant.append((a, b))
        elif whole_loop and isinstance(a.stride, int) and isinstance(b.stride, int):
            constant.append((a, b))
        else:
            varying.append((a, b))
    # a failed check, before the loop or in it, sends the iterations left to the remainder
    record.checked = bool(plan.runtime_checks)
    record.vectorized = True
    # shuffled rows load lanes of later groups early: the tested window grows by a vector
    window = record.factor + width if plan.neighbours else width
    if invariant or constant:
        _guard_before_loop(plan, record, width, invariant, constant, window)
    check = None
    if varying:
        check = ir.Block(function, f"{uh.name}.simd.check")
        blocks.append(check)
        binder.builder = ir.IRBuilder(check)
        lanes = record.factor + (width if plan.neighbours else 0)
        condition = binder.ranges_apart(varying, lambda a: binder.footprint(a, lanes))
    body = ir.Block(function, f"{uh.name}.simd")
    blocks.append(body)
    binder.builder = ir.IRBuilder(body)
    groups = record.factor // width
    preheader, initial = _entry(record)
    accumulators = {}
    for phi, update in plan.reductions.items():
        accumulators[phi] = [
            _accumulator(uh, preheader, phi, initial[phi], update.opname, width, g)
            for g in range(groups)
        ]
    binder.accumulators = {
        (phi, g): accumulator
        for phi, phi_accumulators in accumulators.items()
        for g, accumulator in enumerate(phi_accumulators)
    }
    carried = list({row: None for row, _ in plan.neighbours.values() if row.carried})
    for row in carried:
        vt = binder.vector_type(row.top.instruction.type)
        binder.carried[row] = ins.PhiInstr(uh, vt, f"{row.top.instruction.name}.carried")
        uh.instructions.insert(0, binder.carried[row])
    for group in range(groups):
        for access in plan.accesses:
            binder.emit_access(access, group)
    for row in carried:
        align = getattr(row.top.instruction, "align", None) or row.top.size
        binder.carried[row].add_incoming(binder.top_vector(row, groups - 1, align), body)
    for phi, update in plan.reductions.items():
        for group, accumulator in enumerate(accumulators[phi]):
            accumulator.add_incoming(binder.vector(update, group), body)
    back = {}
    for phi in record.phis:
        back[phi] = (
            record.phis[phi] if phi in plan.reductions else binder.scalar(phi, record.factor)
        )
    latch_branch = binder.builder.branch(uh)
    if "dbg" in uh.terminator.metadata:
        latch_branch.set_metadata("dbg", uh.terminator.metadata["dbg"])
    if check is not None:
        builder = ir.IRBuilder(check)
        builder.cbranch(condition, body, middle)
    function.blocks[position:position] = blocks
    record.replace_body(blocks[0], body, back)
    for phi, update in plan.reductions.items():
        _finish_reduction(record, phi, update, accumulators[phi], middle)
    return {row: binder.carried[row] for row in carried}


def _carry_rows(
    plan: _Plan, record: UnrolledLoop, width: int, phis: dict[_Row, ins.PhiInstr]
) -> None:
    """Give each carried row's phi its U_-1 for the first iteration: its lanes W-(high-p)
    hold the row's elements at the offsets p = low .. high-1 of lane 0, loaded one by one on
    the way in only when the vector loop runs at least once (the scalar loop reads them
    then; before a loop that does not run they may not exist). The edge from the preheader
    to the vector loop's header gets two blocks: the header's test on the entry values, and
    the loads."""
    uh = record.header
    function = uh.parent
    preheader, initial = _entry(record)
    test = ir.Block(function, f"{uh.name}.simd.carry")
    builder = ir.IRBuilder(test)
    condition, into, _ = uh.terminator.operands
    runs = _at_entry(builder, condition, uh, preheader)
    if into is not record.entry:  # (the header enters the vector body on its false edge)
        runs = builder.not_(runs)
    loads = ir.Block(function, f"{uh.name}.simd.carry.loads")
    enter = ir.Block(function, f"{uh.name}.simd.enter")
    position = function.blocks.index(uh)
    function.blocks[position:position] = [test, loads, enter]
    term = preheader.terminator
    term.operands = [test if t is uh else t for t in term.operands]
    term._clear_string_cache()
    for phi in (i for i in uh.instructions if isinstance(i, ins.PhiInstr)):
        phi.incomings = [(v, enter if b is preheader else b) for v, b in phi.incomings]
        phi._clear_string_cache()
    builder.cbranch(runs, loads, enter)
    binder = _Binder(plan, record, width, initial, speculative=True)
    binder.builder = ir.IRBuilder(loads)
    firsts = {}
    for row in phis:
        vector = ir.Constant(binder.vector_type(row.anchor.instruction.type), ir.Undefined)
        for p in range(row.low, row.high):
            pointer = binder.scalar(row.anchor.instruction.operands[0], p - row.low)
            element = row.anchor.instruction.type
            value = binder.builder.load(pointer, align=row.anchor.size, typ=element)
            lane = ir.Constant(ir.IntType(32), width - (row.high - p))
            vector = binder.builder.insert_element(vector, value, lane)
        firsts[row] = vector
    binder.builder.branch(enter)
    builder = ir.IRBuilder(enter)
    for row, phi in phis.items():
        first = builder.phi(phi.type, name=f"{phi.name}.first")
        first.add_incoming(firsts[row], loads)
        first.add_incoming(ir.Constant(phi.type, ir.Undefined), test)
        phi.add_incoming(first, enter)
    builder.branch(uh)


def _at_entry(
    builder: ir.IRBuilder, value: ir.Value, header: ir.Block, preheader: ir.Block
) -> ir.Value:
    """`value` (computed in `header`) as it is on the way in from `preheader`: the header's
    phis replaced by what they start from, its other instructions copied at `builder`."""
    if not (isinstance(value, ins.Instruction) and value.parent is header):
        return value
    if isinstance(value, ins.PhiInstr):
        return next(v for v, b in value.incomings if b is preheader)
    new = copy_instruction(value, builder.block)
    remap_operands(new, lambda operand: _at_entry(builder, operand, header, preheader))
    builder._insert(new)
    return new


def _entry(record: UnrolledLoop) -> tuple[ir.Block, dict[ins.PhiInstr, ir.Value]]:
    """The block before the vector loop and the values its phis start from (the scalar
    loop's own phis start from the vector loop by now: it is the remainder)."""
    some_phi = next(iter(record.phis.values()))
    preheader = next(b for _, b in some_phi.incomings if b is not record.latch)
    initial = {
        phi: next(v for v, b in new.incomings if b is preheader) for phi, new in record.phis.items()
    }
    return preheader, initial


def _accumulator(
    uh: ir.Block,
    preheader: ir.Block,
    phi: ins.PhiInstr,
    initial: ir.Value,
    op: str,
    width: int,
    group: int,
) -> ins.PhiInstr:
    """A vector phi of the vector loop for `phi`'s partial results: every lane starts at the
    operation's identity, lane 0 of group 0 at the scalar initial value."""
    vt = ir.VectorType(phi.type, width)
    start = ir.Constant(vt, [_REDUCTIONS[op][0]] * width)
    if group == 0:
        builder = ir.IRBuilder(preheader)
        builder.position_before(preheader.terminator)
        start = builder.insert_element(start, initial, ir.Constant(ir.IntType(32), 0))
    accumulator = ins.PhiInstr(uh, vt, f"{phi.name}.acc{group}")
    uh.instructions.insert(0, accumulator)
    accumulator.add_incoming(start, preheader)
    return accumulator


def _finish_reduction(
    record: UnrolledLoop,
    phi: ins.PhiInstr,
    update: ir.Instruction,
    accumulators: list[ins.PhiInstr],
    middle: ir.Block,
) -> None:
    """In the block after the vector loop, combine the groups' accumulators and reduce the
    lanes; the scalar remainder loop continues from that value."""
    builder = ir.IRBuilder(middle)
    builder.position_before(middle.terminator)
    combine = getattr(builder, {"and": "and_", "or": "or_"}.get(update.opname, update.opname))
    total = accumulators[0]
    for other in accumulators[1:]:
        total = combine(total, other)
    kind = _REDUCTIONS[update.opname][1]
    reduce_name = f"llvm.vector.reduce.{kind}.v{total.type.count}i{phi.type.width}"
    module = middle.parent.module
    reduce = module.globals.get(reduce_name) or ir.Function(
        module, ir.FunctionType(phi.type, [total.type]), reduce_name
    )
    value = builder.call(reduce, [total], name=f"{phi.name}.reduced")
    scalar = record.phis[phi]
    phi.incomings = [(value if v is scalar else v, b) for v, b in phi.incomings]
    phi._clear_string_cache()
    record.header.instructions.remove(scalar)
    del record.phis[phi]


def _guard_before_loop(
    plan: _Plan,
    record: UnrolledLoop,
    width: int,
    same_stride: list[tuple[_Access, _Access]],
    other_strides: list[tuple[_Access, _Access]],
    window: int,
) -> None:
    """Test in the preheader that the pairs of `same_stride` (one constant stride) never
    overlap across the lanes of one vector iteration, and that those of `other_strides`
    (constant strides) touch disjoint ranges over the whole loop; enter the vector loop
    only if so."""
    preheader, initial = _entry(record)
    binder = _Binder(plan, record, width, initial, speculative=True)
    binder.builder = ir.IRBuilder(preheader)
    binder.builder.position_before(preheader.terminator)
    apart = binder.distances_apart(same_stride, window)
    if other_strides:
        last = _last_iteration_bound(binder, plan.loop)
        disjoint_ranges = binder.ranges_apart(
            other_strides, lambda a: binder.whole_loop_footprint(a, last)
        )
        apart = binder.builder.and_(apart, disjoint_ranges)
    term = record.header.terminator
    builder = ir.IRBuilder(record.header)
    builder.position_before(term)
    guard = builder.and_(term.operands[0], apart, name="simd.guard")
    term.operands = [guard, *term.operands[1:]]
    term._clear_string_cache()


def _last_iteration_computable(plan: _Plan) -> bool:
    """Whether the preheader can compute `_last_iteration_bound` (the exit test's values
    are the induction variables and pure arithmetic on them and on invariants)."""
    _, v, bound, _, _ = exit_test(plan.loop)
    return all(is_slice_of(value, plan.loop, plan.ivs) for value in (v, bound))


def _last_iteration_bound(binder: _Binder, loop: Loop) -> ir.Value:
    """The i64 index K of the last iteration the loop runs when entered with lane 0's
    values, for the header's exit test `v pred B` (v0: v's first value): (|B - v0| - 1) /
    |step| for `<`, `>` and `!=`, |B - v0| / |step| for `<=` and `>=`. Exact whenever the
    vector loop runs: the loop then passes its test at least once, so the distance fits v's
    width unsigned, and is at least 1 for a strict test."""
    pred, v, bound, step, _ = exit_test(loop)
    b = binder.builder
    v0, b0 = binder.scalar(v, 0), binder.scalar(bound, 0)
    distance = b.sub(b0, v0) if step > 0 else b.sub(v0, b0)
    if pred[-2:] not in ("le", "ge"):
        distance = b.sub(distance, ir.Constant(distance.type, 1))
    last = distance if abs(step) == 1 else b.udiv(distance, ir.Constant(distance.type, abs(step)))
    last.name = "simd.last"
    return b.zext(last, ir.IntType(64)) if last.type.width < 64 else last


#: how `simd` reads the neighbours `x-1, x, x+1` of a row
NEIGHBOUR_MODES = ("auto", "unaligned", "shuffle")


class NeighbourMode(str):
    """`auto` (by the target's costs), `unaligned` (one load per offset) or `shuffle`."""

    def __new__(cls, value: object) -> NeighbourMode:
        if str(value) not in NEIGHBOUR_MODES:
            raise ValueError(f"expected one of {', '.join(NEIGHBOUR_MODES)}")
        return str.__new__(cls, value)


NeighbourMode.__name__ = "neighbour mode (auto, unaligned or shuffle)"
#: the widest SIMD binding a pipeline may ask for: 256 lanes (a 2048-bit vector of bytes)
SimdWidth = bounded_int("SIMD width", 256)


def _rows(plan: _Plan, width: int, factor: int) -> list[tuple[_Row, list[tuple[_Access, int]]]]:
    """Rows of unit-stride loads at constant offsets within one vector of each other, on
    arrays the loop does not store to (their vectors are loaded ahead of the stores)."""
    stored = {a.base for a in plan.accesses if a.is_store}
    rows: dict[tuple, list[tuple[_Access, int]]] = {}
    for access in plan.accesses:
        if access.is_store or access.stride != access.size or access.base in stored:
            continue
        constant = access.offset.constant_term
        if constant % access.size:
            continue
        variable = access.offset - Expr.constant(constant)
        key = (access.base, variable, str(access.instruction.type))
        rows.setdefault(key, []).append((access, constant // access.size))
    found = []
    for members in rows.values():
        offsets = sorted({dx for _, dx in members})
        if len(offsets) < 2 or offsets[-1] - offsets[0] >= width:
            continue
        low, high = offsets[0], offsets[-1]
        anchor = next(a for a, dx in members if dx == low)
        top = next(a for a, dx in members if dx == high)
        vectors = (factor + high - low) // width  # V_m ends inside the footprint
        found.append((_Row(anchor, low, vectors, top, high), members))
    return found


def _choose_neighbours(
    context: PassContext, plan: _Plan, width: int, factor: int, mode: str
) -> None:
    """Fill plan.neighbours with the rows read through shuffles: all for `shuffle` (some of
    them carried across iterations: `_Row`), none for `unaligned`, and for `auto` those where
    the target's costs say the shuffles pay."""
    if mode == "unaligned":
        return
    rows = _rows(plan, width, factor)
    if mode == "auto" and rows:
        load_cost, shuffle_cost = context.target.neighbour_costs(width * plan.element_size)
    else:
        load_cost = shuffle_cost = 0.0
    groups = factor // width
    for row, members in rows:
        direct = len(members) * groups * load_cost
        shifted = [(g, dx) for g in range(groups) for _, dx in members]
        shuffles = sum(1 for g, dx in shifted if (g * width + dx - row.low) % width)
        reused = (row.vectors + len(members)) * load_cost + shuffles * shuffle_cost
        # shuffle mode carries a row (one load a group and a shuffle per other member) where
        # V_m+1 past the lanes costs direct loads and carrying at least halves the loads:
        # measured at that edge and beyond, two threads, 1-4 MB, the Xeon guest, against
        # gcc's OpenMP code: a 3x3 float blur, 3 loads a row -> 1, 1.26-1.45x carried,
        # 1.05-1.09x not; a Laplacian of doubles, 4 -> 2, 1.13-1.23x carried, 1.11-1.21x not.
        # Narrower elements are widened by the shuffle port too: a 3x3 uint8 box, carried, ran
        # 2.29x gcc's one thread on two threads against 3.92x not. `auto` keeps its costs'
        # choices (they count an unaligned 512-bit load as one; the blur measured two).
        direct_loads = sum(
            1
            for g, dx in shifted
            if (g * width + dx - row.low) % width
            and (g * width + dx - row.low) // width + 1 >= row.vectors
        )
        halves = 2 * groups <= row.vectors + direct_loads and row.anchor.size >= 4
        row.carried = mode == "shuffle" and direct_loads > 0 and halves
        if mode == "shuffle" or reused < direct:
            for access, dx in members:
                plan.neighbours[access] = (row, dx)


def _peel_for_alignment(plan: _Plan, record: UnrolledLoop, width: int) -> str:
    """With a declared row alignment, peel the iterations that make the most vector accesses
    start aligned (see peel.py); the remark's suffix saying what was done."""
    function = record.header.parent
    row_align = row_alignment(function)
    iv = plan.loop.trip_count_iv
    if row_align is None or plan.reductions or iv is None or iv.step is None:
        return ""
    _, initial = _entry(record)
    starts = {
        phi: int(value.constant) if isinstance(value, ir.Constant) else None
        for phi, value in initial.items()
    }
    if starts.get(iv.phi) is None:
        return ""
    streams = [
        Stream(a.offset, a.stride, a.size, a.is_store)
        for a in plan.accesses
        if isinstance(a.stride, int) and abs(a.stride) == a.size
    ]
    count, before, after = peel_count(streams, starts, row_align, width)
    if count == 0:
        return ""
    peel_before(record, plan.loop, iv.phi, iv.step, count)

    def said(counts: tuple[int, int]) -> str:
        return f"{counts[0]} load(s) and {counts[1]} store(s)"

    return (
        f", {count} iteration(s) peeled so that {said(after)} of the row start aligned "
        f"(without: {said(before)})"
    )


#: the vector iterations a loop must run for the run-time alignment of its stores to pay
#: (the first vector is computed twice in part)
ALIGN_MIN_VECTORS = 4
#: the store streams a loop needs for the run-time alignment to pay: Sobel's two rows of
#: floats ran 1.5x faster aligned; loops with one store (jacobi +12 %, 3x3 mean filter,
#: 7-tap Gaussian, Harris -3 to -6 %) gain or lose by which loads share the store's
#: alignment, which the row starts decide (docs/simd_benchmarks.md)
ALIGN_MIN_STORES = 2
#: the bytes of a row a vector loop must store for its stores to stream (else they are plain):
#: a laplace-2d sweep of 150 MB of doubles, rows of m, streamed against gcc's plain stores on
#: the Xeon guest (docs/tiling_benchmarks.md): 0.82x at m = 37, 0.89x at 60, 0.94x at 90,
#: 1.03x at 150, 1.15x at 600, 1.25x at 2000; the lines at a row's ends are partly written.
#: Just above the threshold (70 MB) rows of 150-500 doubles and 1000 floats still lost
#: (0.64-0.87x, a review), rows of 2100 doubles won (1.44x)
STREAM_MIN_ROW_BYTES = 4096


def _align_stores_at_run_time(
    context: PassContext,
    plan: _Plan,
    record: UnrolledLoop,
    width: int,
    streams: list[_Access] | None = None,
) -> str:
    """Where the target wants a vector loop's stores aligned (`Target.store_alignment`: a
    512-bit store off a 64-byte line splits the line, on every iteration), the loop stores
    ALIGN_MIN_STORES rows or more and its start is not known aligned: run its first `width`
    lanes as one unaligned vector, then start the vector loop at the first iteration whose
    store address is aligned. The lanes
    in between are computed again with the same values, which holds when no store of the
    first vector touches what its lanes read or store (tested at run time with the other
    conditions: at least ALIGN_MIN_VECTORS vectors of iterations, an element-aligned
    store). With `streams` (non-temporal stores, `_bind_loop`; `_streams` checked the loop):
    always, to their vector's size, and the vector loop runs only when it then starts with
    every one of them aligned (else a copy with plain stores: `_plain_twin`); the caller fences
    the nest (`fence_streams`). The remark's suffix, or "" where it does not apply."""
    if streams:
        stores, alignment = streams, width * streams[0].size
    else:
        stores = [a for a in plan.accesses if a.is_store and a.stride == a.size]
        if len(stores) < ALIGN_MIN_STORES:
            return ""
        alignment = context.target.store_alignment(width * stores[0].size)
        if not alignment or plan.neighbours or _why_not_alignable(plan, stores[0]):
            return ""
    function = record.header.parent
    uh = record.header
    preheader, initial = _entry(record)
    check = ir.Block(function, f"{uh.name}.align")
    head = ir.Block(function, f"{uh.name}.align.head")
    binder = _Binder(plan, record, width, initial, speculative=True)
    binder.builder = ir.IRBuilder(check)
    pred, v, bound, step, _ = exit_test(plan.loop)
    v0, b0 = binder.scalar(v, 0), binder.scalar(bound, 0)
    span = (ALIGN_MIN_VECTORS * width - 1) * abs(step)
    long_enough = build_guard(check, pred, v0, b0, step, span, {})
    b = binder.builder
    b.position_at_end(check)
    if streams:  # and enough of a row for its streamed lines to outweigh its partial ones
        rows = max(ALIGN_MIN_VECTORS * width, STREAM_MIN_ROW_BYTES // streams[0].size) - 1
        long_row = build_guard(check, pred, v0, b0, step, rows * abs(step), {})
        b.position_at_end(check)
    i64 = ir.IntType(64)
    store = stores[0]
    address = binder.address(store, 0)
    element_aligned = b.icmp_unsigned("==", b.and_(address, i64(store.size - 1)), i64(0))
    gap = b.and_(b.sub(i64(alignment), b.and_(address, i64(alignment - 1))), i64(alignment - 1))
    ahead = b.lshr(gap, i64(store.size.bit_length() - 1), name="simd.align.peel")
    go = b.and_(b.and_(long_enough, element_aligned), b.icmp_unsigned("!=", gap, i64(0)))
    together = ir.Constant(ir.IntType(1), 1)  # the other streams share the first's alignment
    for other in stores[1:] if streams else ():
        apart = b.and_(b.sub(binder.address(other, 0), address), i64(alignment - 1))
        together = b.and_(together, b.icmp_unsigned("==", apart, i64(0)))
    accesses = plan.accesses
    hazards = [  # each store with every access after it and every load before it
        (s, a)
        for i, s in enumerate(accesses)
        if s.is_store
        for j, a in enumerate(accesses)
        if j != i and not (a.is_store and j < i) and not disjoint(s.base, a.base)
    ]
    if hazards:
        go = b.and_(go, binder.ranges_apart(hazards, lambda a: binder.footprint(a, width)))
    if streams:  # (the plain copy starts aligned too, where it can: `go`)
        starts = b.or_(go, b.icmp_unsigned("==", gap, i64(0)))
        aligned = b.and_(b.and_(starts, together), long_row)
    join = ir.Block(function, f"{uh.name}.aligned")  # the vector loop's one preheader
    b.cbranch(go, head, join)
    first = _Binder(plan, record, width, initial)
    first.builder = ir.IRBuilder(head)
    for access in plan.accesses:
        first.emit_access(access, 0)
    joined = ir.IRBuilder(join)
    for phi, new in record.phis.items():
        count = first.builder.trunc(ahead, phi.type) if phi.type.width < 64 else ahead
        stride = ir.Constant(phi.type, plan.ivs[phi].step)
        advanced = first.builder.add(initial[phi], first.builder.mul(count, stride))
        start = joined.phi(phi.type, name=f"{phi.name}.aligned")
        start.add_incoming(initial[phi], check)
        start.add_incoming(advanced, head)
        new.incomings = [
            (start, join) if block is preheader else (value, block)
            for value, block in new.incomings
        ]
        new._clear_string_cache()
    first.builder.branch(join)
    joined.branch(uh)
    term = preheader.terminator
    term.operands = [check if t is uh else t for t in term.operands]
    term._clear_string_cache()
    position = function.blocks.index(uh)
    function.blocks[position:position] = [check, head, join]
    if not streams:
        return f", its stores aligned to {alignment} bytes at run time"
    _plain_twin(record, aligned)
    return (
        f", {len(streams)} store stream(s) non-temporal, aligned to {alignment} bytes at run "
        "time (else plain)"
    )


def _why_not_alignable(plan: _Plan, store: _Access) -> str | None:
    """Why `_align_stores_at_run_time` cannot align `store` in the loop (None: it can)."""
    header_phis = [i for i in plan.loop.header.instructions if isinstance(i, ins.PhiInstr)]
    if plan.reductions:
        return "it accumulates a reduction"
    if not all(isinstance(a.stride, int) for a in plan.accesses):
        return "an access's stride is computed in the loop"
    if not all(phi in plan.ivs for phi in header_phis):
        return "a value carried from one iteration to the next"
    if store.size & (store.size - 1):
        return f"{store.size}-byte elements"
    if not _last_iteration_computable(plan):
        return "its trip count is computed in the loop"
    return None


def _streams(context: PassContext, plan: _Plan, width: int, streamed: Streamed) -> list[_Access]:
    """The unit-stride stores into `streamed` that `_bind_loop` makes non-temporal, or
    Decline: none, the target has no such stores, or they cannot be aligned at run time."""
    stores = [a for a in plan.accesses if a.is_store and a.stride == a.size and a.base in streamed]
    if not stores:
        raise Decline("no unit-stride store into an array the nest does not read")
    stores = [a for a in stores if a.size == stores[0].size]
    vector_bytes = width * stores[0].size
    if not context.target.streaming_stores(vector_bytes):
        raise Decline(f"the target has no non-temporal stores of {vector_bytes} bytes")
    why = _why_not_alignable(plan, stores[0])
    if why:
        raise Decline(f"its stores cannot be aligned at run time: {why}")
    return stores


def _plain_twin(record: UnrolledLoop, aligned: ir.Value) -> None:
    """Where the streams cannot start aligned (`aligned`, computed before the vector loop, is
    false: a short row, outputs aligned unlike each other, a first vector that overlaps what
    it reads), each iteration of the vector loop runs a copy of its body with plain stores,
    still at full width (the rows' epilogue loops alone ran two outputs 0.83-0.92x gcc); the
    choice is the same on every iteration, which LLVM hoists out of the loop."""
    copies, _ = copy_blocks(record.body, ".plain")
    for block in copies.values():
        for store in block.instructions:
            if isinstance(store, ins.StoreInstr) and "nontemporal" in store.metadata:
                del store.metadata["nontemporal"]
                store.align = size_of(store.operands[0].type.element)
                store._clear_string_cache()
    uh = record.header
    pick = uh.parent.insert_basic_block(uh.parent.blocks.index(record.entry), f"{uh.name}.pick")
    ir.IRBuilder(pick).cbranch(aligned, record.entry, copies[record.entry])
    term = uh.terminator
    term.operands = [pick if t is record.entry else t for t in term.operands]
    term._clear_string_cache()


def fence_streams(block: ir.Block, target: ir.Block | None = None) -> None:
    """x86 orders non-temporal stores with no other store: an `sfence` on `block`'s edge to
    `target` (or before its `ret`), where a nest with streamed stores is left, makes them
    visible before anything stored after it (another thread that sees a later store then
    sees them). Once per nest, not per row: a fence waits for the stores in flight, 0.3-0.4 us
    (a 3-D sweep of 256-float rows ran 0.41x gcc with one per row)."""
    function = block.parent
    fence = _declared(function.module, "llvm.x86.sse.sfence", ir.FunctionType(ir.VoidType(), []))
    term = block.terminator
    if target is None:
        builder = ir.IRBuilder(block)
        builder.position_before(term)
        builder.call(fence, [])
        return
    fenced = ir.Block(function, f"{block.name}.fence")
    builder = ir.IRBuilder(fenced)
    builder.call(fence, [])
    builder.branch(target)
    term.operands = [fenced if t is target else t for t in term.operands]
    term._clear_string_cache()
    for phi in target.instructions:
        if isinstance(phi, ins.PhiInstr):
            phi.incomings = [(v, fenced if b is block else b) for v, b in phi.incomings]
            phi._clear_string_cache()
    function.blocks.insert(function.blocks.index(target), fenced)


def _declared(module: ir.Module, name: str, signature: ir.FunctionType) -> ir.Function:
    """The module's declaration of `name`, added if missing."""
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(module, signature, name)


def _vector_epilogue(function: ir.Function, header: ir.Block, lanes: int) -> str:
    """Bind the scalar remainder loop (header `header`) once more at half the width, and its
    own remainder at half that, down to 4 lanes, so at most 3 iterations stay scalar (a
    1020-pixel row at 32 lanes would leave 28; 16 and 8 lanes then take 24 of them, as LLVM's
    8-lane epilogue loop does); the remark's suffix, or "" where it does not apply (narrow
    vectors, a peeled loop)."""
    widths = []
    half = lanes // 2
    while half >= 4:
        invalidate(function)
        remainder = next(o for o in loops_of(function).loops if o.header is header)
        try:
            plan = _plan(remainder)
            _check_dependences(plan, half)
            record = unroll_loop(function, remainder, half)
            _bind(function, plan, record, half)
        except Decline:  # (an unrolled loop left unbound is still the scalar loop's code)
            break
        widths.append(half)
        half //= 2
    if not widths:
        return ""
    if len(widths) == 1:
        return f", and a {widths[0]}-wide epilogue"
    named = ", ".join(f"{w}-" for w in widths[:-1]) + f" and {widths[-1]}-wide"
    return f", and {named} epilogues"


def _all_in_vectors(loop: Loop, factor: int) -> str:
    """With a constant trip count that is a multiple of the unroll factor (the point loops of
    a full tile, see polyhedral/codegen.py) the vector loop runs every iteration and the
    scalar remainder none (unless a run-time overlap check fails): a narrower epilogue would
    only add code. The remark's suffix, or "" for any other loop."""
    count = loop.trip_count.constant if loop.trip_count is not None else None
    if not count or count % factor:
        return ""
    return f", trip count {count}: no iteration left to the scalar remainder"


def _value_operations(plan: _Plan) -> int:
    """The instructions of the scalar body that compute values, not addresses (address
    arithmetic: getelementptrs and what only they use): the loop's size for
    `Target.simd_interleave`."""
    users: dict[ir.Value, list[ir.Instruction]] = {}
    for instr in plan.body:
        for operand in instr.operands:
            users.setdefault(operand, []).append(instr)
    addresses: set[ir.Instruction] = set()
    for instr in reversed(plan.body):  # users come after what they use
        used_by = users.get(instr, [])
        if instr.opname == "getelementptr" or (used_by and set(used_by) <= addresses):
            addresses.add(instr)
    return len(plan.body) - len(addresses)


def _width_for(context: PassContext, plan: _Plan, width: int | None) -> int:
    if width is not None:
        return int(width)
    return context.target.simd_lanes(plan.element_size)


@register("simd", (SimdWidth, NeighbourMode), defaults=(None, "auto"))
def simd(
    module: ir.Module, width: int | None, neighbours: str = "auto", *, context: PassContext
) -> ir.Module:
    """Bind every innermost loop that allows it into vector operations of `width` lanes;
    `neighbours` says how rows read at several offsets are loaded."""
    for function in module.functions:
        if not function.blocks:
            continue
        changed = False
        for loop in list(loops_of(function).loops):
            if not loop.innermost or is_remainder(loop):
                continue
            try:
                said = _bind_loop(context, function, loop, width, neighbours)
            except Decline as reason:
                context.missed(f"loop not vectorized: {reason}", at=loop.header)
                continue
            context.passed(said, at=loop.header)
            changed = True
        if changed:
            invalidate(function)
    return module


def bind_generated(
    context: PassContext,
    function: ir.Function,
    headers: set[ir.Block],
    at: ir.Instruction,
    streamed: Streamed | None = None,
) -> int:
    """Bind the innermost loops of `function` whose headers are in `headers` (`_bind_loop`),
    with the stores into the arrays `streamed` made non-temporal if given; the number bound,
    with a remark on each loop, made at `at` (the nest the loops were generated for, maybe in
    another function: a parallel loop's outlined body)."""
    bound = 0
    for loop in list(loops_of(function).loops):
        if loop.header not in headers or not loop.innermost or is_remainder(loop):
            continue
        # (a row's neighbours by shuffles: a Laplacian's rows in cache on two threads ran
        # 1.21-1.24x gcc so, 1.16-1.17x as the target's costs choose; streams load them)
        neighbours = "unaligned" if streamed is not None else "shuffle"
        try:
            said = _bind_loop(context, function, loop, None, neighbours, streamed)
        except Decline as reason:
            what = "stores not streamed" if streamed is not None else "loop not vectorized"
            context.missed(f"{what}: {reason}", at=at)
            continue
        context.passed(said, at=at)
        bound += 1
    invalidate(function)
    return bound


def _bind_loop(
    context: PassContext,
    function: ir.Function,
    loop: Loop,
    width: int | None,
    neighbours: str,
    streamed: Streamed | None = None,
) -> str:
    """Bind one innermost loop (`simd`'s work on it) and say what was done; with `streamed`,
    the unit-stride stores into those arrays become non-temporal stores, aligned at run time
    (`_align_stores_at_run_time`), or the loop is declined."""
    record = unrolled_loops(function).get(loop.header)
    if record is not None and record.vectorized:
        raise Decline("it is already")
    scalar_loop = record.original if record is not None else loop
    if if_convert(scalar_loop):
        scalar_loop = next(o for o in loops_of(function).loops if o.header is scalar_loop.header)
        if record is not None:
            record.original = scalar_loop
        else:
            loop = scalar_loop
    plan = _plan(scalar_loop)
    lanes = _width_for(context, plan, width)
    if lanes == 1:
        raise Decline("vector width 1")
    _check_dependences(plan, lanes)
    streams = _streams(context, plan, lanes, streamed) if streamed is not None else []
    interleave = 1
    if record is None:
        if width is None:
            interleave = context.target.simd_interleave(_value_operations(plan))
        record = unroll_loop(function, loop, lanes * interleave)
    elif record.factor % lanes:
        raise Decline(f"unrolled by {record.factor}, which is not a multiple of the width {lanes}")
    _choose_neighbours(context, plan, lanes, record.factor, neighbours)
    carried = _bind(function, plan, record, lanes, streams)
    if streams:
        peeled = _align_stores_at_run_time(context, plan, record, lanes, streams)
    else:
        peeled = _peel_for_alignment(plan, record, lanes)
    exact = "" if peeled else _all_in_vectors(plan.loop, record.factor)
    if not peeled and not exact:
        peeled = _align_stores_at_run_time(context, plan, record, lanes)
    if carried:  # (the vector loop's entry is final now)
        _carry_rows(plan, record, lanes, carried)
        peeled += f", {len(carried)} row(s) carried across iterations"
    peeled += exact or _vector_epilogue(function, plan.loop.header, lanes * interleave)
    vectors = record.factor // lanes
    extra = f", {vectors} vectors per iteration" if vectors > 1 else ""
    checked = ", with a run-time overlap check" if plan.runtime_checks else ""
    return f"loop vectorized by SIMD binding, width {lanes}{extra}{checked}{peeled}"
