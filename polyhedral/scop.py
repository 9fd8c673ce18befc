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

from ..ir_passes.affine import Polynomial, address_of, size_of
from ..ir_passes.debuginfo import describe
from ..ir_passes.loops import BinOp, Const, Expr, Loop, Symbol, analyses
from ..ir_passes.rewrite import used_values

#: instructions a statement may contain besides loads and stores (no side effects, no control)
_COMPUTE = frozenset(
    "add sub mul shl lshr ashr and or xor sdiv udiv srem urem fadd fsub fmul fdiv frem fneg "
    "sext zext trunc fpext fptrunc sitofp uitofp fptosi fptoui bitcast icmp fcmp "
    "getelementptr select".split()
)
#: calls that behave like arithmetic (no memory, no errno)
_PURE_CALL = re.compile(
    r"llvm\.(sqrt|fabs|floor|ceil|trunc|rint|round|fma|fmuladd|minnum|"
    r"maxnum|copysign|smin|smax|umin|umax|abs)\."
)


class NotAffine(Exception):
    """A construct outside the polyhedral model; `at` locates it for the remark."""

    def __init__(self, reason: str, at: object = None):
        super().__init__(reason)
        self.reason = reason
        self.at = at


@dataclass(eq=False)
class Array:
    """One memory object the SCoP reads or writes: `base` (a pointer argument or global) viewed
    as `element[?][sizes[0]]...[sizes[-1]]`; `sizes` are parameter names (the inner extents
    found by delinearization), outermost extent unknown."""

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
    subscripts: list[str]  # isl expressions in the statement's iterators and the parameters


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
    params: dict[str, ir.Value]  # isl name -> integer IR value defined before the SCoP
    arrays: list[Array]
    statements: list[Statement]

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

    def bytes_per_point(self) -> int:
        """Bytes of one element of each array: the data one iteration point touches."""
        return sum(size_of(a.element) for a in self.arrays)

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
    # one nest of the run is not affine: try the nests one by one
    out = []
    for loop in run:
        try:
            out.append(_Builder(function, [loop]).build())
        except NotAffine as why:
            rejected.append(why)
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
        self.param_names: dict[int, str] = {}
        self.arrays: dict[int, Array] = {}
        self.statements: list[Statement] = []
        self.iv_names: dict[int, str] = {}
        #: (isl expression, domain constraints, what) that must hold on a statement's domain
        self.obligations: list[tuple[Statement, str, str, object]] = []

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
        self.pad_subscripts()
        self.check_obligations()
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
                if len(block.instructions) != 1:
                    node.children.append(self.statement(block, enclosing, mine))
                node.children.append(self.nest(child, enclosing, mine))
                block = child.exit
                continue
            term = block.terminator
            if term.opname != "br" or len(term.operands) != 1:
                raise NotAffine("condition in the loop body", term)
            if len(block.instructions) > 1:
                node.children.append(self.statement(block, enclosing, mine))
            block = term.operands[0]
        self.check_latch(loop)
        return node

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
                if not _PURE_CALL.match(getattr(callee, "name", "") + "."):
                    raise NotAffine(f"call to {getattr(callee, 'name', '?')}", instr)
            elif op not in _COMPUTE and not op.startswith("fcmp") and not op.startswith("icmp"):
                raise NotAffine(f"'{op}' instruction in the loop body", instr)
        return stmt

    def access(self, instr: ir.Instruction, stmt: Statement) -> Access:
        is_write = instr.opname == "store"
        pointer = instr.operands[1] if is_write else instr.operands[0]
        value_type = instr.operands[0].type if is_write else instr.type
        address = address_of(pointer)
        base = address.base
        if not isinstance(base, (ir.Argument, ir.GlobalVariable)):
            if isinstance(base, ins.LoadInstr):
                raise NotAffine(
                    "pointer loaded from memory (a row pointer or a pointer swap)", instr
                )
            raise NotAffine(f"address based on {_name(base)}, not an argument or global", instr)
        element_size = size_of(value_type)
        levels = self.levels(address.offset, element_size, stmt, instr)
        array = self.array(base, value_type, [key for key, _ in levels], instr)
        chain = [()] + [tuple(array.sizes[: k + 1]) for k in range(len(array.sizes))]
        by_key = dict(levels)
        unknown = set(by_key) - set(chain)
        if unknown:
            raise NotAffine(f"subscript of {array.name} does not match its shape", instr)
        subscripts = [by_key.get(key, "0") for key in reversed(chain)]
        for k, size in enumerate(reversed(array.sizes)):
            sub = subscripts[k + 1]
            self.obligations.append(
                (
                    stmt,
                    f"{sub} < 0 or {sub} >= {size}",
                    f"subscript of {array.name} leaves its row",
                    instr,
                )
            )
        return Access(instr, is_write, array, subscripts)

    def pad_subscripts(self) -> None:
        """Accesses read before a later access revealed more of their array's shape (fdtd's
        `ey[0][j]`, a flat `j`, before `ey[i][j]`) get the leading subscripts 0, and their
        old outermost subscript must now stay within its row; without this, isl would see
        two different arrays and miss their dependences."""
        for stmt in self.statements:
            for access in stmt.accesses:
                missing = access.array.rank - len(access.subscripts)
                if missing <= 0:
                    continue
                access.subscripts = ["0"] * missing + access.subscripts
                sub = access.subscripts[missing]
                size = list(reversed(access.array.sizes))[missing - 1]
                self.obligations.append(
                    (
                        stmt,
                        f"{sub} < 0 or {sub} >= {size}",
                        f"subscript of {access.array.name} leaves its row",
                        access.instruction,
                    )
                )

    def levels(self, offset: Polynomial, element_size: int, stmt: Statement, at) -> list:
        """The byte offset grouped by parameter monomial: [(params tuple, isl expression)]."""
        groups: dict[tuple[str, ...], list[str]] = {}
        for monomial, coefficient in offset.terms:
            params, inner = [], []
            for factor in monomial:
                if self.is_parameter(factor):
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
        return [(key, " + ".join(terms)) for key, terms in groups.items()]

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

    def param(self, value: ir.Value) -> str:
        while getattr(value, "opname", None) in ("sext", "zext", "trunc") and self.is_parameter(
            value.operands[0]
        ):
            value = value.operands[0]
        name = self.param_names.get(id(value))
        if name is None:
            name = self.fresh(_name(value))
            self.param_names[id(value)] = name
            self.params[name] = value
        return name

    def expr(self, e: Expr, loops: list[Loop], at) -> str:
        if isinstance(e, Const):
            return str(e.value)
        if isinstance(e, Symbol):
            return self.value_expr(e.value, loops, at)
        if isinstance(e, BinOp):
            left, right = self.expr(e.left, loops, at), self.expr(e.right, loops, at)
            if e.op == "*" and not (isinstance(e.left, Const) or isinstance(e.right, Const)):
                raise NotAffine("loop bound multiplies two values", at)
            return f"({left} {e.op} {right})"
        raise NotAffine(f"loop bound {e} is not affine", at)

    def value_expr(
        self, value: ir.Value, loops: list[Loop], at, stmt: Statement | None = None
    ) -> str:
        """`value` as a quasi-affine isl expression in the loops' iterators and parameters;
        `%` and `/` only inside a statement (`stmt`), whose domain must keep them exact."""
        if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType):
            return f"({_signed(value)})"
        for loop in loops:
            if value is loop.trip_count_iv.phi:
                return self.iv_names[id(value)]
        if self.is_parameter(value):
            return self.param(value)
        op = getattr(value, "opname", None)
        if op is None or not isinstance(value, ir.Instruction):
            raise NotAffine(f"{_name(value)} is not an affine expression", at)
        a = value.operands
        if op in ("sext", "zext", "trunc"):
            return self.value_expr(a[0], loops, at, stmt)
        if op in ("add", "sub"):
            sign = "+" if op == "add" else "-"
            left, right = (self.value_expr(x, loops, at, stmt) for x in a)
            return f"({left} {sign} {right})"
        if op == "mul":
            constants = [x for x in a if isinstance(x, ir.Constant)]
            if not constants:
                raise NotAffine(f"{_name(value)} multiplies two values", at)
            other = a[1] if a[0] is constants[0] else a[0]
            return f"({_signed(constants[0])} * {self.value_expr(other, loops, at, stmt)})"
        if op == "shl" and isinstance(a[1], ir.Constant):
            return f"({1 << int(a[1].constant)} * {self.value_expr(a[0], loops, at, stmt)})"
        if (
            op in ("srem", "urem", "sdiv", "udiv")
            and isinstance(a[1], ir.Constant)
            and _signed(a[1]) > 0
        ):
            inner = self.value_expr(a[0], loops, at, stmt)
            divisor = _signed(a[1])
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

    def check_obligations(self) -> None:
        """Each obligation names points of a statement's domain where the model would be wrong;
        there must be none (for every parameter value)."""
        prefix = f"[{', '.join(self.params)}] -> " if self.params else ""
        for stmt, bad, what, at in self.obligations:
            cond = " and ".join(stmt.constraints) or "0 = 0"
            text = f"{prefix}{{ {stmt.tuple_text()} : {cond} and ({bad}) }}"
            if not isl.Set(text).is_empty():
                raise NotAffine(what, at)

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


def _recomputable(value: ir.Instruction, ivs: set, region: set, owner: dict) -> bool:
    if id(value) in ivs or value.parent not in region:
        return True
    if id(value) in owner or value.opname not in _COMPUTE:
        return False
    return all(
        not isinstance(op, ir.Instruction) or _recomputable(op, ivs, region, owner)
        for op in used_values(value)
    )


def _signed(constant: ir.Constant) -> int:
    value, bits = int(constant.constant), constant.type.width
    return value - (1 << bits) if bits > 1 and value >= 1 << (bits - 1) else value


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
