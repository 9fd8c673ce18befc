"""SCoP extraction: the static control parts of a function as isl sets and maps.

A SCoP here is a run of consecutive top-level loop nests of a function, in front-end form
(top-tested loops with one canonical induction variable stepping by +1 under a signed, non-
wrapping test), whose bodies are straight chains of blocks: every block that computes something
is a *statement*, executed once per point of its *domain* (the integer points allowed by the
bounds of the loops around it). Loop bounds and array subscripts must be quasi-affine in the
induction variables and the *parameters* (integers defined before the nest: arguments, values
of the entry block): sums, products by constants, `%` and `/` by positive constants of
non-negative values. Linearized subscripts `a[(i*n + j)*m + k]` and C99 VLAs are delinearized
into `a[i][j][k]` when the parameters form a chain of strides and the domain proves every inner
subscript stays within its row (`0 <= j < n`); then the access relations are exact.

Anything else makes the nest non-affine, with a reason naming the construct and its source
location: a condition in the body, a data-dependent bound, a call, a pointer loaded from memory
(rows of pointers, pointer swaps), a scalar carried from one iteration or statement to another.

The result is everything the later stages need and nothing of how it was found: the statements
(domain, original schedule position, accesses, the IR block to copy), the parameters and arrays
with the IR values that hold their sizes, and isl objects built from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import islpy as isl
from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.affine import address_levels, size_of
from ..ir_passes.core.analyses import analyses
from ..ir_passes.core.debuginfo import describe
from ..ir_passes.core.libm import ARITHMETIC_INTRINSIC
from ..ir_passes.core.loops import Loop
from ..ir_passes.core.rewrite import used_values
from ..ir_passes.core.symbolic import Expr, integer_expr, signed_int

#: instructions a statement may contain besides loads and stores (no side effects, no control)
_COMPUTE = frozenset(
    "add sub mul shl lshr ashr and or xor sdiv udiv srem urem fadd fsub fmul fdiv frem fneg "
    "sext zext trunc fpext fptrunc sitofp uitofp fptosi fptoui bitcast icmp fcmp "
    "getelementptr select".split()
)
#: integer arithmetic that is loop-invariant when its operands are (no side effect, no trap)
_INVARIANT_ARITHMETIC = frozenset("add sub mul shl sext zext trunc".split())
#: the deepest nest modelled: isl's work grows steeply with the dimensions (the dependences
#: of 200 nested loops ran past the compiler mode's two minutes)
MAX_LOOP_DEPTH = 12


class NotAffine(Exception):
    """A construct outside the polyhedral model; `at` locates it for the remark."""

    def __init__(self, reason: str, at: object = None):
        super().__init__(reason)
        self.reason = reason
        self.at = at


@dataclass(eq=False)
class Array:
    """One memory object the SCoP reads or writes: `base` (a pointer argument, a global or a
    local array allocated before the loops) viewed as `element[?][sizes[-1]]...[sizes[0]]`;
    `sizes` are parameter names or declared lengths (the inner extents found by
    delinearization), innermost first (the row length is `sizes[0]`), the outermost extent
    unknown."""

    name: str
    base: ir.Value
    element: ir.Type
    sizes: list[str]

    @property
    def rank(self) -> int:
        return len(self.sizes) + 1


@dataclass(eq=False)
class Access:
    instruction: ir.Instruction
    is_write: bool
    array: Array
    #: isl expressions in the statement's iterators and the parameters, one per dimension of
    #: the array (set once every access is seen: a later access may give the array more rows)
    subscripts: list[str]
    #: the byte offset grouped by parameter monomial (see `_Builder.levels`)
    levels: dict[tuple[str, ...], str] = field(default_factory=dict)


@dataclass(eq=False)
class Statement:
    """One block of a loop body, run once per point of `domain`."""

    name: str
    block: ir.Block
    loops: list[Loop]  # outermost first
    iterators: list[str]  # isl names of the loops' induction variables
    constraints: list[str]  # the domain's constraints, isl syntax
    accesses: list[Access] = field(default_factory=list)

    @property
    def phis(self) -> list[ir.Instruction]:
        return [loop.trip_count_iv.phi for loop in self.loops]

    def tuple_text(self) -> str:
        return f"{self.name}[{', '.join(self.iterators)}]"


@dataclass(eq=False)
class LoopNode:
    """The original schedule: a loop over its iterator, children in program order."""

    loop: Loop
    iterator: str
    children: list[LoopNode | Statement]

    def statements(self) -> list[Statement]:
        out: list[Statement] = []
        for child in self.children:
            out += child.statements() if isinstance(child, LoopNode) else [child]
        return out


@dataclass(eq=False)
class Scop:
    function: ir.Function
    nests: list[LoopNode]  # consecutive top-level loop nests
    entry: ir.Block  # the preheader of the first nest (entered by one unconditional branch)
    exit: ir.Block  # where control goes after the last nest
    #: isl name -> integer IR value defined before the SCoP, or arithmetic on such values
    #: computed inside it (`ny + 2` at each access), which code before the SCoP recomputes
    params: dict[str, ir.Value]
    arrays: list[Array]
    statements: list[Statement]
    #: parameter values the model holds for (a subscript stays in its row only if `n <= 18`,
    #: ...); already in every statement's domain; the generated code checks it at run time
    assumed: isl.Set | None = None

    # -- isl views ---------------------------------------------------------------------------

    @property
    def param_prefix(self) -> str:
        return f"[{', '.join(self.params)}] -> " if self.params else ""

    def context(self) -> isl.Set:
        return isl.Set(f"{self.param_prefix}{{ : }}")

    def domain(self) -> isl.UnionSet:
        parts = [
            f"{s.tuple_text()} : {' and '.join(s.constraints) or '0 = 0'}" for s in self.statements
        ]
        return isl.UnionSet(f"{self.param_prefix}{{ {'; '.join(parts)} }}")

    def bytes_per_point(self, least_rank: int = 1) -> int:
        """Bytes of the elements one point of the grid holds in every array of `least_rank`
        dimensions or more: the data one iteration point touches (an array of fewer
        dimensions than the grid, fdtd-2d's `_fict_[t]`, holds a row or less of it). An
        array whose outermost subscript takes a fixed number of values (`A[t % 2][i][j]`:
        time planes) holds one element per value, so the one-sweep `%2` form of a stencil
        gets the tiles of its two-array form."""
        return sum(size_of(a.element) * self.planes(a) for a in self.arrays if a.rank >= least_rank)

    def planes(self, array: Array) -> int:
        """How many planes `array`'s outermost subscripts select: the number of values they
        take over every integer value of the iterators, when that is bounded (`t % 2`: 2,
        the constants 0 and 1: 2); 1 when it grows with an iterator (a row index `i`, even in
        a loop of fixed extent)."""
        if array.rank == 1:
            return 1
        parts = {
            f"{s.tuple_text()} -> P[{a.subscripts[0]}]"
            for s in self.statements
            for a in s.accesses
            if a.array is array
        }
        values = isl.UnionMap(f"{self.param_prefix}{{ {'; '.join(parts)} }}").range()
        if values.is_empty():
            return 1
        values = isl.Set.from_union_set(values)
        if not values.is_bounded():
            return 1
        low, high = _constant(values.dim_min(0)), _constant(values.dim_max(0))
        return 1 if low is None or high is None else max(1, high - low + 1)

    def statement(self, name: str) -> Statement:
        return next(s for s in self.statements if s.name == name)

    def _relation(self, writes: bool) -> isl.UnionMap:
        parts = [
            f"{s.tuple_text()} -> {a.array.name}[{', '.join(a.subscripts)}]"
            for s in self.statements
            for a in s.accesses
            if a.is_write == writes
        ]
        text = f"{self.param_prefix}{{ {'; '.join(parts)} }}"
        return isl.UnionMap(text).intersect_domain(self.domain())

    def reads(self) -> isl.UnionMap:
        return self._relation(False)

    def writes(self) -> isl.UnionMap:
        return self._relation(True)

    def is_private(self, array: Array) -> bool:
        """Whether `array` is a local array only the SCoP's statements use (as the address of
        their loads and stores): its values are dead after the SCoP."""
        if not isinstance(array.base, ins.AllocaInstr):
            return False
        blocks = {s.block for s in self.statements}
        derived = {id(array.base)}
        for block in self.function.blocks:
            for instr in block.instructions:
                uses = [op for op in used_values(instr) if id(op) in derived]
                if not uses:
                    continue
                if instr.opname == "getelementptr" and all(op is instr.pointer for op in uses):
                    derived.add(id(instr))
                elif block not in blocks or instr.opname not in ("load", "store"):
                    return False
                elif instr.opname == "store" and id(instr.operands[0]) in derived:
                    return False  # the address itself is stored: it escapes
        return True

    def schedule(self) -> isl.Schedule:
        """The original execution order as an isl schedule tree (bands of one loop each,
        sequences where a loop body holds several loops or statements)."""
        return isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, _tree_yaml(self))


# --------------------------------------------------------------------------------------------
# Extraction


def extract_scops(function: ir.Function, merge: bool = True) -> tuple[list[Scop], list[NotAffine]]:
    """The SCoPs of `function` (maximal runs of consecutive affine top-level nests, or each
    nest alone unless `merge`) and the reasons the other nests are not affine."""
    info = analyses(function).loops
    scops: list[Scop] = []
    rejected: list[NotAffine] = []
    run: list[Loop] = []
    for loop in info.top_level:
        try:
            _check_loop_shape(loop)
        except NotAffine as why:
            rejected.append(why)
            scops += _build_run(function, run, rejected)
            run = []
            continue
        if run and not (merge and _falls_through(run[-1], loop)):
            scops += _build_run(function, run, rejected)
            run = []
        run.append(loop)
    scops += _build_run(function, run, rejected)
    return scops, rejected


def _build_run(function: ir.Function, run: list[Loop], rejected: list[NotAffine]) -> list[Scop]:
    if not run:
        return []
    try:
        return [_Builder(function, run).build()]
    except NotAffine as why:
        if len(run) == 1:
            rejected.append(why)
            return []
    # some nest of the run is not affine (or values flow between them): the maximal runs of
    # affine nests between the others, each nest alone if its run fails as a whole
    alone: dict[int, Scop] = {}
    for k, loop in enumerate(run):
        try:
            alone[k] = _Builder(function, [loop]).build()
        except NotAffine as why:
            rejected.append(why)
    out: list[Scop] = []
    start = 0
    for k in range(len(run) + 1):
        if k in alone:
            continue
        if k - start > 1 and k - start < len(run):
            try:
                out.append(_Builder(function, run[start:k]).build())
            except NotAffine:
                out += [alone[j] for j in range(start, k)]
        else:
            out += [alone[j] for j in range(start, k)]
        start = k + 1
    return out


def _falls_through(first: Loop, second: Loop) -> bool:
    """Whether control goes from `first`'s exit to `second`'s preheader through empty blocks."""
    block = first.exit
    seen = set()
    while block is not None and block not in seen:
        seen.add(block)
        if block is second.preheader:
            return True
        if len(block.instructions) != 1 or block.terminator.opname != "br":
            return False
        if len(block.terminator.operands) != 1:
            return False
        block = block.terminator.operands[0]
    return False


def _check_loop_shape(loop: Loop) -> None:
    """Front-end form: preheader, one latch, the header tests `iv < bound` and exits."""
    where = loop.header.instructions[-1] if loop.header.instructions else None
    if loop.depth > MAX_LOOP_DEPTH:
        raise NotAffine(f"loop nest deeper than {MAX_LOOP_DEPTH} levels", where)
    if loop.preheader is None or loop.latch is None or len(loop.exits) != 1:
        raise NotAffine("loop is not in canonical form (preheader, one latch, one exit)", where)
    if loop.exiting != [loop.header]:
        raise NotAffine("loop does not test its condition before the body", where)
    tc, iv = loop.trip_count, loop.trip_count_iv
    if tc is None or iv is None:
        kind = "data-dependent loop bound: " if _reads_memory(where) else ""
        raise NotAffine(f"{kind}loop bound is not computable ({loop.trip_count_reason})", where)
    if tc.step != 1:
        raise NotAffine(f"loop step {tc.step} is not +1", where)
    if tc.predicate not in ("slt", "sle", "ne") or not tc.no_wrap:
        raise NotAffine("loop test is not a signed, non-wrapping comparison", where)
    for phi in loop.header.instructions:
        if isinstance(phi, ins.PhiInstr) and phi is not iv.phi:
            kind = "pointer swap: " if isinstance(phi.type, ir.PointerType) else ""
            raise NotAffine(
                f"{kind}a value ({_name(phi)}) is carried from one iteration to the next", where
            )
    for child in loop.children:
        _check_loop_shape(child)


def opaque_base(base: ir.Value) -> bool:
    """Is an array's base a pointer the function computes (loads from memory, gets from a
    call, selects): memory the model knows no more of than an argument's, which may hold a
    local array's address?"""
    return isinstance(base, ir.Instruction) and not isinstance(base, ins.AllocaInstr)


def _reads_memory(value: object, depth: int = 8) -> bool:
    """Whether `value` (an exit test) depends on a load, looking a few operands deep."""
    if not isinstance(value, ir.Instruction) or depth == 0:
        return False
    if value.opname == "load":
        return True
    return any(_reads_memory(op, depth - 1) for op in used_values(value))


_SANITIZE = re.compile(r"[^A-Za-z0-9_]")


def _name(value: ir.Value) -> str:
    return getattr(value, "name", "") or "?"


class _Builder:
    """Builds one Scop from a run of top-level loops."""

    def __init__(self, function: ir.Function, loops: list[Loop]):
        self.function = function
        self.loops = loops
        self.region: set[ir.Block] = {b for lp in loops for b in lp.blocks}
        self.names: set[str] = set()
        self.params: dict[str, ir.Value] = {}
        self.param_names: dict[int | str, str] = {}
        self.arrays: dict[int, Array] = {}
        self.statements: list[Statement] = []
        self.iv_names: dict[int, str] = {}
        #: (isl expression, domain constraints, what) that must hold on a statement's domain
        self.obligations: list[tuple[Statement, str, str, object]] = []
        #: parameters computed from others before the loops (`v = n + 2`), isl equalities
        self.definitions: list[str] = []
        #: parameters that are another one plus a constant: name -> (the other, constant)
        self.shifted: dict[str, tuple[str, int]] = {}

    def fresh(self, stem: str) -> str:
        base = _SANITIZE.sub("_", stem).strip("_") or "v"
        if base[0].isdigit():
            base = "v" + base
        name, k = base, 1
        while name in self.names or name in ("and", "or", "not", "mod", "floor", "min", "max"):
            k += 1
            name = f"{base}{k}"
        self.names.add(name)
        return name

    # -- structure ---------------------------------------------------------------------------

    def build(self) -> Scop:
        first = self.loops[0].preheader
        if (
            len(first.instructions) != 1
            or self.loops[-1].exit.instructions
            and isinstance(self.loops[-1].exit.instructions[0], ins.PhiInstr)
        ):
            raise NotAffine("the loop nest's preheader or exit is not empty", first.terminator)
        nests = [self.nest(loop, [], []) for loop in self.loops]
        for stmt in self.statements:
            stmt.constraints += self.definitions
            for access in stmt.accesses:
                self.subscripts(access, stmt)
        self.check_loaded_bases()
        assumed = self.check_obligations()
        self.check_scalars()
        for stmt in self.statements:
            stmt.accesses.sort(key=lambda a: stmt.block.instructions.index(a.instruction))
        return Scop(
            function=self.function,
            nests=nests,
            entry=self.loops[0].preheader,
            exit=self.loops[-1].exit,
            params=self.params,
            arrays=list(self.arrays.values()),
            statements=self.statements,
            assumed=assumed,
        )

    def nest(self, loop: Loop, outer: list[Loop], constraints: list[str]) -> LoopNode:
        iv = loop.trip_count_iv
        name = self.fresh(_name(iv.phi))
        self.iv_names[id(iv.phi)] = name
        enclosing = [*outer, loop]
        tc = loop.trip_count
        lower = self.expr(tc.init, enclosing[:-1], loop.header)
        upper = self.expr(tc.bound, enclosing[:-1], loop.header)
        mine = [*constraints, f"{name} >= {lower}", f"{name} < {upper}"]
        node = LoopNode(loop, name, [])
        header_term = loop.header.terminator
        body = next(s for s in header_term.operands[1:] if isinstance(s, ir.Block) and s in loop)
        block = body
        children = {c.preheader: c for c in loop.children}
        seen = set()
        while block is not loop.latch:
            if block in seen:
                raise NotAffine("irregular control flow in the loop body", block.terminator)
            seen.add(block)
            if block in children:
                child = children[block]
                if not _only_computes(block):
                    node.children.append(self.statement(block, enclosing, mine))
                node.children.append(self.nest(child, enclosing, mine))
                block = child.exit
                continue
            term = block.terminator
            if term.opname != "br" or len(term.operands) != 1:
                raise NotAffine("condition in the loop body", term)
            if block.instructions[:-1] != [loop.trip_count_iv.update]:  # `t++` ending a
                # while loop's body updates the counter, as a for loop's latch does
                if not _only_computes(block):
                    node.children.append(self.statement(block, enclosing, mine))
            block = term.operands[0]
        self.check_latch(loop)
        return node

    def check_loaded_bases(self) -> None:
        """A pointer loaded from memory (or returned by a call) may hold the address of a
        local array, which the generated code's overlap check takes to share memory with
        nothing: not both."""
        bases = [a.base for a in self.arrays.values()]
        if any(isinstance(b, ins.AllocaInstr) for b in bases):
            for stmt in self.statements:
                for access in stmt.accesses:
                    if opaque_base(access.array.base):
                        raise NotAffine(
                            "pointer loaded from memory or returned by a call beside a local array",
                            access.instruction,
                        )

    def check_latch(self, loop: Loop) -> None:
        update = loop.trip_count_iv.update
        for instr in loop.latch.instructions[:-1]:
            if instr is not update:
                raise NotAffine("the loop latch computes more than the induction variable", instr)

    # -- statements --------------------------------------------------------------------------

    def statement(self, block: ir.Block, loops: list[Loop], constraints: list[str]) -> Statement:
        stmt = Statement(
            name=f"S{len(self.statements)}",
            block=block,
            loops=list(loops),
            iterators=[self.iv_names[id(lp.trip_count_iv.phi)] for lp in loops],
            constraints=list(constraints),
        )
        self.statements.append(stmt)
        for instr in block.instructions[:-1]:
            op = instr.opname
            if op in ("load", "store"):
                stmt.accesses.append(self.access(instr, stmt))
            elif op == "call":
                callee = getattr(instr, "callee", None)
                if not ARITHMETIC_INTRINSIC.match(getattr(callee, "name", "") + "."):
                    raise NotAffine(f"call to {getattr(callee, 'name', '?')}", instr)
            elif op not in _COMPUTE and not op.startswith("fcmp") and not op.startswith("icmp"):
                raise NotAffine(f"'{op}' instruction in the loop body", instr)
        return stmt

    def access(self, instr: ir.Instruction, stmt: Statement) -> Access:
        is_write = instr.opname == "store"
        pointer = instr.operands[1] if is_write else instr.operands[0]
        value_type = instr.operands[0].type if is_write else instr.type
        base, steps = address_levels(pointer, atom=self.is_stride)
        before = base.parent not in self.region if isinstance(base, ir.Instruction) else True
        local = isinstance(base, ins.AllocaInstr) and before
        # a pointer loaded or computed before the loops (`double *u = field->data`, a
        # `malloc`'s result) is fixed in them, as an argument is; one loaded inside them is a
        # row pointer or a swap through memory
        fixed = opaque_base(base) and before
        if not (local or fixed or isinstance(base, (ir.Argument, ir.GlobalVariable))):
            if isinstance(base, ins.LoadInstr):
                raise NotAffine(
                    "pointer loaded from memory (a row pointer or a pointer swap)", instr
                )
            raise NotAffine(f"address based on {_name(base)}, which the loops compute", instr)
        element_size = size_of(value_type)
        # a byte displacement (a struct member's offset: `s->a[i][j]` is `s + 8 + 88*i + 8*j`)
        # does not fit the declared rows of the member; the flat subscript, affine over
        # constant rows, is exact and keeps every member of the struct in one array
        displaced = element_size > 1 and any(not s.rows and s.leaf == 1 for s in steps)
        pieces = []
        for step in steps:
            if step.rows and step.leaf == element_size and not displaced:  # `A[17][17]`
                pieces.append((tuple(map(str, step.rows)), step.index.scaled(element_size)))
            else:
                pieces.append(((), step.offset))
        levels = self.levels(pieces, element_size, stmt, instr)
        array = self.array(base, value_type, [key for key, _ in levels], instr)
        return Access(instr, is_write, array, [], dict(levels))

    def subscripts(self, access: Access, stmt: Statement) -> None:
        """`access`'s subscripts in its array's final shape (`p = buf, q = buf + n` gives
        `buf[0][i]` and `buf[1][i]`), each inner one obliged to stay within its row."""
        array, by_key = access.array, access.levels
        chain = [()] + [tuple(sorted(array.sizes[: k + 1])) for k in range(len(array.sizes))]
        if set(by_key) - set(chain):
            raise NotAffine(
                f"subscript of {array.name} does not match its shape", access.instruction
            )
        access.subscripts = [by_key.get(key, "0") for key in reversed(chain)]
        for k, size in enumerate(reversed(array.sizes)):
            sub = access.subscripts[k + 1]
            self.obligations.append(
                (
                    stmt,
                    f"{sub} < 0 or {sub} >= {size}",
                    f"subscript of {array.name} leaves its row",
                    access.instruction,
                )
            )

    def levels(
        self,
        pieces: list[tuple[tuple[str, ...], Expr]],
        element_size: int,
        stmt: Statement,
        at,
    ) -> list:
        """The byte offset, given as pieces (the declared constant row lengths a GEP index
        steps over, its byte offset within them), grouped by the row lengths and parameters
        multiplied in: [(sizes tuple, isl expression)]."""
        groups: dict[tuple[str, ...], list[str]] = {}
        for rows, offset in pieces:
            for monomial, coefficient in offset.terms:
                params, inner = list(rows), []
                for factor in monomial:
                    if self.is_parameter(factor) or self.is_stride(factor):
                        params.append(self.param(factor))
                    else:
                        inner.append(factor)
                if len(inner) > 1:
                    raise NotAffine("subscript multiplies two loop-dependent values", at)
                if coefficient % element_size:
                    raise NotAffine("access not aligned to its element size", at)
                scaled = coefficient // element_size
                term = self.value_expr(inner[0], stmt.loops, at, stmt) if inner else "1"
                groups.setdefault(tuple(sorted(params)), []).append(f"{scaled}*({term})")
        self.in_shifted_rows(groups)
        return [(key, " + ".join(terms)) for key, terms in groups.items()]

    def in_shifted_rows(self, groups: dict[tuple[str, ...], list[str]]) -> None:
        """Where a subscript steps over rows of `s = n + c` and also adds `n` (`k + ny + 2`
        with `k = i*(ny + 2) + j`: the next row), count that `n` as `s - c`, so the terms
        group into the rows of s (i + 1 rows and j)."""
        for stride, (param, shift) in self.shifted.items():
            for key in [k for k in groups if param in k and stride not in k]:
                rest = list(key)
                rest.remove(param)
                rows = tuple(sorted([*rest, stride]))
                if rows in groups:
                    terms = groups.pop(key)
                    groups[rows] += terms
                    groups.setdefault(tuple(sorted(rest)), []).extend(
                        f"{-shift}*({t})" for t in terms
                    )

    def array(self, base: ir.Value, element: ir.Type, keys: list, at) -> Array:
        """The array of `base`; its strides must form one chain `n`, `n*m`, ... of parameters."""
        chain: list[str] = []
        for key in sorted(keys, key=len):
            rest = list(key)
            for name in chain:
                if name in rest:
                    rest.remove(name)
                else:
                    raise NotAffine("linearized subscript that cannot be delinearized", at)
            chain += sorted(rest)
        found = self.arrays.get(id(base))
        if found is None:
            found = Array(self.fresh(_name(base)), base, element, chain)
            self.arrays[id(base)] = found
            return found
        if found.element != element:
            raise NotAffine(f"{found.name} accessed with two element types", at)
        longer, shorter = (
            (chain, found.sizes) if len(chain) > len(found.sizes) else (found.sizes, chain)
        )
        if longer[: len(shorter)] != shorter:
            raise NotAffine(f"{found.name} accessed with two different shapes", at)
        found.sizes = list(longer)
        return found

    # -- affine expressions ------------------------------------------------------------------

    def is_parameter(self, value: ir.Value) -> bool:
        if isinstance(value, ir.Argument):
            return isinstance(value.type, ir.IntType)
        if isinstance(value, ir.Instruction):
            return value.parent not in self.region and isinstance(value.type, ir.IntType)
        return False

    def is_invariant(self, value: ir.Value) -> bool:
        """A parameter, a constant, or integer arithmetic on them computed inside the loops
        (`u[i*(ny + 2) + j]` computes the row length `ny + 2` at every access)."""
        if self.is_parameter(value) or isinstance(value, ir.Constant):
            return True
        return (
            isinstance(value, ir.Instruction)
            and isinstance(value.type, ir.IntType)
            and value.opname in _INVARIANT_ARITHMETIC
            and all(self.is_invariant(operand) for operand in value.operands)
        )

    def is_stride(self, value: ir.Value) -> bool:
        """A sum of parameters (`n + 2`: a VLA's extent, a row with ghost cells): one stride
        of its own in a subscript, so `A[2][n + 2]` delinearizes with rows of n + 2 (its
        definition tells isl how it relates to n). Products (`n * n`) expand into the chain
        of strides n, n; casts are looked through (`(long)(n + 2)` is the stride n + 2), and
        arithmetic on constants alone (`0 - 1`) is a constant."""
        if getattr(value, "opname", None) not in ("add", "sub") or not self.is_invariant(value):
            return False
        return any(monomial for monomial, _ in integer_expr(value, self.is_parameter).terms)

    def param(self, value: ir.Value) -> str:
        # the generated code sign-extends a parameter (codegen: `sext` to i64): a `sext` keeps
        # the value it extends, a `zext` or `trunc` does not (an unsigned char 200 is no -56,
        # a short of 40000 is -25536): those are parameters of their own, with no definition
        while getattr(value, "opname", None) == "sext" and self.is_parameter(value.operands[0]):
            value = value.operands[0]
        if _changes_value(value):
            return self._own_param(value)
        key: int | str = id(value)
        if isinstance(value, ir.Instruction) and value.parent in self.region:
            # computed at each access: one parameter per definition, which the generated
            # code computes before the loops (codegen's `_before_the_loops`)
            key = self.value_expr(value, [], None, expand=True)
        name = self.param_names.get(key)
        if name is None:
            name = self.fresh(_name(value))
            self.param_names[key] = name
            self.params[name] = value
            try:  # computed from other parameters: tell isl how (`v = n + 2`)
                self.definitions.append(f"{name} = {self.value_expr(value, [], None, expand=True)}")
            except NotAffine:
                pass
            sum_of = integer_expr(value, lambda v: v is not value and self.is_parameter(v))
            terms = dict(sum_of.terms)
            shift = terms.pop((), 0)
            if len(terms) == 1 and list(terms.values()) == [1] and len(next(iter(terms))) == 1:
                (other,) = next(iter(terms))
                if self.is_parameter(other):
                    self.shifted[name] = (self.param(other), shift)
        return name

    def _own_param(self, value: ir.Value) -> str:
        """A parameter for `value` alone (see `param`)."""
        name = self.param_names.get(id(value))
        if name is None:
            name = self.fresh(_name(value))
            self.param_names[id(value)] = name
            self.params[name] = value
        return name

    def expr(self, e: Expr, loops: list[Loop], at) -> str:
        """A loop bound in isl's syntax."""
        return self.isl(
            e, lambda atom: self.leaf(atom, loops, at), "loop bound multiplies two values", at
        )

    def isl(self, e: Expr, leaf, product: str, at) -> str:
        """The one conversion of the symbolic algebra to isl's syntax: each atom through
        `leaf`; a monomial of two atoms is not affine (`product` says what)."""
        terms = []
        for monomial, coefficient in e.terms:
            if len(monomial) > 1:
                raise NotAffine(product, at)
            if not monomial:
                terms.append(str(coefficient))
            else:
                terms.append(
                    leaf(monomial[0]) if coefficient == 1 else f"{coefficient}*{leaf(monomial[0])}"
                )
        return f"({' + '.join(terms)})".replace("+ -", "- ") if terms else "0"

    def value_expr(
        self,
        value: ir.Value,
        loops: list[Loop],
        at,
        stmt: Statement | None = None,
        expand: bool = False,
    ) -> str:
        """`value` as a quasi-affine isl expression in the loops' iterators and parameters;
        `%` and `/` only inside a statement (`stmt`), whose domain must keep them exact. A
        parameter is a name of its own, unless `expand` (its definition from others)."""
        if expand and not isinstance(value, ir.Instruction):
            raise NotAffine(f"{_name(value)} has no definition", at)

        def stop(v: ir.Value) -> bool:  # an iterator or a parameter is an atom, and so is
            # an invariant zext or trunc (reading through it would change its value)
            if expand and v is value:
                return False
            return (
                any(v is lp.trip_count_iv.phi for lp in loops)
                or self.is_parameter(v)
                or (_changes_value(v) and self.is_invariant(v))
            )

        return self.isl(
            integer_expr(value, stop),
            lambda atom: self.leaf(atom, loops, at, stmt),
            f"{_name(value)} multiplies two values",
            at,
        )

    def leaf(self, value: ir.Value, loops: list[Loop], at, stmt: Statement | None = None) -> str:
        """An atom of an affine expression: an iterator, a parameter, or C's `%` and `/` by a
        positive constant (inside a statement, of a value proved non-negative)."""
        for loop in loops:
            if value is loop.trip_count_iv.phi:
                return self.iv_names[id(value)]
        if self.is_parameter(value) or _changes_value(value) and self.is_invariant(value):
            return self.param(value)
        op = getattr(value, "opname", None)
        if op is None or not isinstance(value, ir.Instruction):
            raise NotAffine(f"{_name(value)} is not an affine expression", at)
        a = value.operands
        if (
            op in ("srem", "urem", "sdiv", "udiv")
            and isinstance(a[1], ir.Constant)
            and signed_int(int(a[1].constant), a[1].type.width) > 0
        ):
            inner = self.value_expr(a[0], loops, at, stmt)
            divisor = signed_int(int(a[1].constant), a[1].type.width)
            # C's truncating % and / equal isl's mod and floor only for a non-negative dividend
            if stmt is None:
                raise NotAffine("'%' or '/' in a loop bound", at)
            self.obligations.append((stmt, f"{inner} < 0", "'%' or '/' of a negative value", at))
            if op in ("srem", "urem"):
                return f"(({inner}) mod {divisor})"
            return f"floor(({inner}) / {divisor})"
        if value.parent in self.region and value.opname == "load":
            raise NotAffine(f"data-dependent value {_name(value)} (loaded from memory)", at)
        raise NotAffine(f"{_name(value)} ({op}) is not an affine expression", at)

    # -- checks ------------------------------------------------------------------------------

    def check_obligations(self) -> isl.Set | None:
        """Each obligation names points of a statement's domain where the model would be wrong.
        There must be none, for every parameter value or else under an assumption on the
        parameters (`n <= 18` for `double A[17][17]` walked to a run-time `n`; Polly's assumed
        context): the assumption joins every statement's domain and the generated code checks
        it at run time (the original nest runs otherwise). It must be one conjunction without
        integer divisions and leave every statement that can run something to run."""
        prefix = f"[{', '.join(self.params)}] -> " if self.params else ""

        def domain(stmt: Statement, extra: str = "0 = 0") -> isl.Set:
            cond = " and ".join(stmt.constraints) or "0 = 0"
            return isl.Set(f"{prefix}{{ {stmt.tuple_text()} : {cond} and ({extra}) }}")

        # each statement's whole domain once, when an obligation first needs them (not once
        # per obligation and statement: that dominated the extraction of nests over
        # fixed-size arrays)
        wholes: dict[int, isl.Set] = {}

        def running() -> list[isl.Set]:
            if not wholes:
                wholes.update((id(stmt), domain(stmt)) for stmt in self.statements)
            return [whole for whole in wholes.values() if not whole.is_empty()]

        assumed = isl.Set(f"{prefix}{{ : }}")
        seen: set[tuple[int, str]] = set()
        for stmt, bad, what, at in self.obligations:
            if (id(stmt), bad) in seen:  # met, or excluded by the assumption already
                continue
            seen.add((id(stmt), bad))
            wrong = domain(stmt, bad).intersect_params(assumed)
            if wrong.is_empty():
                continue
            # where the statement runs nothing the model is trivially right: simplify there
            running_domains = running()
            allowed = wrong.params().complement().gist(wholes[id(stmt)].params())
            allowed = allowed.intersect(assumed).coalesce()
            if allowed.n_basic_set() != 1 or allowed.get_basic_sets()[0].dim(isl.dim_type.div):
                raise NotAffine(what, at)
            if any(whole.intersect_params(allowed).is_empty() for whole in running_domains):
                raise NotAffine(what, at)
            assumed = allowed
        if assumed.plain_is_universe():
            return None
        conditions = _constraint_texts(assumed.get_basic_sets()[0])
        for stmt in self.statements:
            stmt.constraints += conditions
        return assumed

    def check_scalars(self) -> None:
        """Values may flow only within a statement's block, from the induction variables or
        from pure arithmetic on them and the parameters (the code generator recomputes that)."""
        owner = {id(i): s for s in self.statements for i in s.block.instructions}
        ivs = {id(lp.trip_count_iv.phi) for lp in self._all_loops()}
        for stmt in self.statements:
            for instr in stmt.block.instructions:
                for op in used_values(instr):
                    if not isinstance(op, ir.Instruction) or op.parent not in self.region:
                        continue
                    if owner.get(id(op)) is stmt or id(op) in ivs:
                        continue
                    if not _recomputable(op, ivs, self.region, owner):
                        raise NotAffine(f"scalar {_name(op)} flows between statements", instr)
        for block in self.function.blocks:
            if block in self.region:
                continue
            for instr in block.instructions:
                for op in used_values(instr):
                    if isinstance(op, ir.Instruction) and op.parent in self.region:
                        raise NotAffine(f"{_name(op)} is used after the loop nest", instr)

    def _all_loops(self) -> list[Loop]:
        return [d for lp in self.loops for d in lp.descendants()]


def _changes_value(value: ir.Value) -> bool:
    """Is `value` a `zext` or `trunc`, whose result a sign extension of its operand is not?"""
    return getattr(value, "opname", None) in ("zext", "trunc")


def _only_computes(block: ir.Block) -> bool:
    """Does `block` only compute values (no access, call or store: an inlined sweep's `int m
    = ny + 2;` before its loops)? It is no statement: a statement using its values
    recomputes them (`check_scalars`), or the nest is refused if it cannot."""
    return all(i.opname in _COMPUTE for i in block.instructions[:-1])


def _recomputable(value: ir.Instruction, ivs: set, region: set, owner: dict) -> bool:
    if id(value) in ivs or value.parent not in region:
        return True
    if id(value) in owner or value.opname not in _COMPUTE:
        return False
    return all(
        not isinstance(op, ir.Instruction) or _recomputable(op, ivs, region, owner)
        for op in used_values(value)
    )


def _constraint_texts(conditions: isl.BasicSet) -> list[str]:
    """The constraints of a parameter set in isl syntax (`18 - n >= 0`)."""
    out = []
    for c in conditions.get_constraints():
        terms = [
            f"{v.to_python()} * {k}" if k != 1 else str(v.to_python())
            for k, v in c.get_coefficients_by_name().items()
        ]
        out.append(f"{' + '.join(terms) or '0'} {'=' if c.is_equality() else '>='} 0")
    return out


def location(at: object) -> str:
    """`at` (an instruction or block) as the source position remarks quote."""
    if isinstance(at, ir.Instruction):
        return describe(at)
    return ""


# --------------------------------------------------------------------------------------------
# The original schedule as an isl schedule tree (YAML)


def _tree_yaml(scop: Scop) -> str:
    lines = [f'domain: "{scop.domain()}"']
    _children_yaml(scop, scop.nests, 0, lines)
    return "\n".join(lines) + "\n"


def _children_yaml(scop: Scop, children: list, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    if len(children) == 1:
        _node_yaml(scop, children[0], indent, lines)
        return
    lines.append(f"{pad}child:")
    lines.append(f"{pad}  sequence:")
    for child in children:
        names = child.statements() if isinstance(child, LoopNode) else [child]
        filt = "; ".join(s.tuple_text() for s in names)
        lines.append(f'{pad}  - filter: "{scop.param_prefix}{{ {filt} }}"')
        if isinstance(child, LoopNode):
            _node_yaml(scop, child, indent + 4, lines)


def _node_yaml(scop: Scop, node, indent: int, lines: list[str]) -> None:
    if not isinstance(node, LoopNode):
        return
    pad = " " * indent
    parts = "; ".join(f"{s.tuple_text()} -> [({node.iterator})]" for s in node.statements())
    lines.append(f"{pad}child:")
    lines.append(f'{pad}  schedule: "{scop.param_prefix}[{{ {parts} }}]"')
    if node.children:
        _children_yaml(scop, node.children, indent + 2, lines)


def _constant(value: isl.PwAff) -> int | None:
    """The integer a piecewise bound is everywhere, or None (it varies with the parameters)."""
    affines = [affine for _, affine in value.get_pieces()]
    if not affines or not all(affine.is_cst() for affine in affines):
        return None
    constants = {affine.get_constant_val().to_python() for affine in affines}
    return constants.pop() if len(constants) == 1 else None
