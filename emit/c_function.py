"""One LLVM function as structured C: declarations, statements, expressions.

Every live SSA value either becomes a C variable (phis, values used in another block or more
than once, allocas, calls) named after the front end's names (`i`, `j_u`; `t16` for unnamed
ones), or is written inline into its single user in the same block (pure operations, and
loads with no store or call between them and the user): `out[i * n + j] = (a + b) * 0.25`.
Dead values are not written. Pointers carry the C type they point to (from the
`getelementptr` that made them, or a parameter's uses), so accesses read as `in[t + j]` and
`p->f1` rather than byte arithmetic. Control flow comes from `c_structure`, loops in their
`for (i = lo; cond; i = next)` shape where the IR has it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.alignment import pointer_alignment
from ..ir_passes.core.libm import ARITHMETIC_INTRINSIC, LIBM_FUNCTIONS
from . import c_expressions as cx
from .c_dialect import PortableDialect
from .c_expressions import Expr, atom
from .c_structure import (
    Break,
    Code,
    Continue,
    Copies,
    If,
    LoopStmt,
    Return,
    Unreachable,
    structure,
)
from .c_types import TypeTable, Unexpressible, float_literal, int_literal

#: names a local of the emitted file must not take: C's keywords, and what the file itself
#: uses from its headers (a parameter named `int64_t` is legal in a file without <stdint.h>)
C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Bool _Complex _Imaginary bool true false "
    "main int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t "
    "uintptr_t size_t INT32_MIN INT64_MIN INT64_C UINT64_C offsetof memcpy memmove memset "
    "abort NULL fmod".split()
)
#: calls that neither write memory nor have another effect a program can see
_NO_EFFECT_INTRINSICS = re.compile(r"llvm\.(dbg|lifetime|assume|experimental\.noalias)\.")
_MATH_NAMES = {
    "sqrt": "sqrt", "fabs": "fabs", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "rint": "rint", "round": "round", "copysign": "copysign", "minnum": "fmin",
    "maxnum": "fmax", "fma": "fma", "nearbyint": "nearbyint",
}  # fmt: skip
_INDENT = "    "
#: the <math.h> functions the emitted file may call (float and double forms)
_MATH_FUNCTIONS = frozenset(
    name + suffix for name in {*_MATH_NAMES.values(), *LIBM_FUNCTIONS} for suffix in ("", "f")
)
#: operators nested in one expression at most (longer chains, as full unrolling makes, go
#: through variables: readable lines, and bounded recursion here)
MAX_INLINE_DEPTH = 24
_ATOMIC = frozenset({"load atomic", "store atomic", "atomicrmw", "cmpxchg", "fence"})


def c_identifier(name: str, taken: set[str], fallback: str) -> str:
    """A C identifier from an IR name, not in `taken` (which it joins)."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_")
    if not text or text[0].isdigit():
        text = fallback + text
    if text in C_KEYWORDS or text in _MATH_FUNCTIONS or text.startswith("pycc_"):
        text += "_"
    base, n = text, 1
    while text in taken:
        n += 1
        text = f"{base}_{n}"
    taken.add(text)
    return text


class FunctionWriter:
    """The C of one function definition (`definition`, `prototype`); raises Unexpressible."""

    def __init__(
        self,
        function: ir.Function,
        c_name: str,
        module_names: dict[ir.GlobalValue, str],
        types: TypeTable,
        dialect: PortableDialect,
        storage: str,
    ):
        """`storage`: the storage class written before the prototype ("" or "static ...")."""
        self.function, self.c_name, self.storage = function, c_name, storage
        self.module_names, self.types, self.dialect = module_names, types, dialect
        taken = set(module_names.values())
        self.names: dict[ir.Value, str] = {}
        for i, arg in enumerate(function.args):
            self.names[arg] = c_identifier(arg.name, taken, f"arg{i}")
        self._taken = taken
        self.live = _live_values(function)
        self.read = {op for i in self.live for op in _operands(i)}
        self.inline = self._inlined()
        self.pointees: dict[ir.Value, ir.Type | None] = {}
        self._folded: dict[ir.Value, int | None] = {}
        self.param_pointees = {a: _param_pointee(a) for a in function.args}
        for block in function.blocks:
            for instr in block.instructions:
                if self._is_variable(instr):
                    self.names[instr] = c_identifier(instr.name, taken, "t")

    # ---------------------------------------------------------------------------------------
    # what becomes a variable

    def _is_variable(self, instr: ins.Instruction) -> bool:
        if instr not in self.live or instr in self.inline:
            return False
        if isinstance(instr.type, ir.VoidType):
            return False
        return instr in self.read  # not a call only made for its effect (`printf(...);`)

    def _inlined(self) -> set[ins.Instruction]:
        users: dict[ir.Value, list[tuple[ins.Instruction, ir.Block]]] = {}
        for block in self.function.blocks:
            for instr in block.instructions:
                if instr not in self.live:
                    continue
                if isinstance(instr, ins.PhiInstr):
                    for value, source in instr.incomings:
                        users.setdefault(value, []).append((instr, source))
                else:
                    for op in instr.operands:
                        users.setdefault(op, []).append((instr, block))
        inline = set()
        depth: dict[ir.Value, int] = {}
        for block in self.function.blocks:
            position = {instr: k for k, instr in enumerate(block.instructions)}
            for k, instr in enumerate(block.instructions):
                uses = users.get(instr, [])
                if len(uses) != 1 or not _inlinable(instr):
                    continue
                nesting = 1 + max((depth.get(op, 0) for op in instr.operands), default=0)
                if nesting > MAX_INLINE_DEPTH:
                    continue
                user, where = uses[0]
                if where is not block:
                    continue
                if isinstance(user, (ins.PhiInstr, ins.InsertElement, ins.ShuffleVector)):
                    if not isinstance(user, ins.PhiInstr):
                        continue
                    end = len(block.instructions) - 1
                else:
                    end = position[user]
                if _reads_memory(instr) and any(
                    _writes_memory(other) for other in block.instructions[k + 1 : end]
                ):
                    continue
                inline.add(instr)
                depth[instr] = nesting
        return inline

    # ---------------------------------------------------------------------------------------
    # types of pointers

    def pointee(self, value: ir.Value) -> ir.Type | None:
        """The type a pointer value points to, as the C code declares it (None: `void *`)."""
        if value in self.pointees:
            return self.pointees[value]
        self.pointees[value] = None  # cycles through phis
        found: ir.Type | None = None
        if isinstance(value, ir.Argument):
            found = self.param_pointees.get(value)
        elif isinstance(value, ins.GEPInstr):
            found = _gep_result_type(value)
        elif isinstance(value, ins.AllocaInstr):
            found = value.allocated_type
        elif isinstance(value, ir.GlobalVariable):
            found = value.value_type
        elif isinstance(value, (ins.PhiInstr, ins.SelectInstr)):
            sources = (
                [v for v, _ in value.incomings]
                if isinstance(value, ins.PhiInstr)
                else value.operands[1:]
            )
            kinds = {str(self.pointee(v)): self.pointee(v) for v in sources}
            kinds.pop("None", None)
            found = next(iter(kinds.values())) if len(kinds) == 1 else None
        self.pointees[value] = found
        return found

    def pointer_type(self, value: ir.Value) -> str:
        t = self.pointee(value)
        return "void *" if t is None else f"{self.types.name(t)} *"

    # ---------------------------------------------------------------------------------------
    # expressions

    def expr(self, value: ir.Value) -> Expr:
        folded = self.folded(value)
        if folded is not None and not isinstance(value, ir.Constant):
            return self.constant(ir.Constant(value.type, folded))
        if isinstance(value, ins.Instruction) and value in self.inline:
            same = self._identity_operand(value)
            if same is not None:
                return self.expr(same)
        if value in self.names:
            return Expr(self.names[value], refs=frozenset([self.names[value]]))
        if isinstance(value, ir.GlobalValue):
            name = self.module_names[value]
            return atom(name if isinstance(value, ir.Function) else f"&{name}")
        if isinstance(value, ir.Constant):
            return self.constant(value)
        if isinstance(value, ins.Instruction):
            if value not in self.inline:
                raise Unexpressible(f"value '{value.name}' used where it is not defined")
            return self.instruction(value)
        raise Unexpressible(f"operand '{value}'")

    def folded(self, value: ir.Value) -> int | None:
        """The value of an integer computed from constants alone (`sext i32 1 to i64`,
        `sub i64 1, 1`), wrapped to its width; None if it depends on anything else."""
        if value in self._folded:
            return self._folded[value]
        result = None
        if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType):
            if isinstance(value.constant, int):
                result = value.constant
        elif isinstance(value, ins.Instruction) and isinstance(value.type, ir.IntType):
            operands = [self.folded(op) for op in value.operands]
            if operands and None not in operands:
                result = _fold(value, operands)
            elif value.opname in ("mul", "and") and 0 in operands:
                result = 0
        self._folded[value] = result
        return result

    def _identity_operand(self, instr: ins.Instruction) -> ir.Value | None:
        """The operand an integer `x + 0`, `x - 0`, `x * 1`, `x | 0` or `x & -1` is."""
        if not isinstance(instr.type, ir.IntType) or len(instr.operands) != 2:
            return None
        a, b = instr.operands
        ca, cb = self.folded(a), self.folded(b)
        mask = (1 << instr.type.width) - 1
        identities = {"add": 0, "sub": 0, "mul": 1, "or": 0, "xor": 0, "shl": 0, "and": mask}
        unit = identities.get(instr.opname)
        if unit is None:
            return None
        if cb is not None and cb & mask == unit:
            return a
        if ca is not None and ca & mask == unit and instr.opname in ("add", "mul", "or", "and"):
            return b
        return None

    def constant(self, c: ir.Constant) -> Expr:
        t = c.type
        if isinstance(t, ir.IntType):
            value = 0 if c.constant in (None, ir.Undefined) else int(c.constant)
            return Expr(int_literal(value, t.width), cx.PRIMARY if value >= 0 else cx.UNARY)
        if isinstance(t, (ir.FloatType, ir.DoubleType)):
            value = 0.0 if c.constant in (None, ir.Undefined) else float(c.constant)
            text = float_literal(value, t)
            return Expr(text)
        if isinstance(t, ir.PointerType):
            if c.constant in (None, ir.Undefined):
                return atom("((void *)0)")
        if isinstance(t, ir.VectorType):
            return self.dialect.vector_literal(t, self.vector_lanes(c))
        raise Unexpressible(f"constant '{c}'")

    def vector_lanes(self, c: ir.Constant) -> list[str]:
        t = c.type
        values = c.constant if isinstance(c.constant, (list, tuple)) else [c.constant] * t.count
        lanes = []
        for v in values:
            if isinstance(v, ir.Constant):
                v = v.constant
            if v in (None, ir.Undefined):
                v = 0
            e = t.element
            if isinstance(e, ir.IntType):
                bits = int(v) & ((1 << e.width) - 1)
                lanes.append(f"UINT64_C({bits})" if e.width == 64 else f"{bits}u")
            else:
                lanes.append(float_literal(float(v), e))
        return lanes

    def instruction(self, instr: ins.Instruction) -> Expr:
        """The C expression computing `instr` from its operands."""
        op = instr.opname
        t = instr.type
        if op in _ATOMIC:
            raise Unexpressible(f"atomic operation '{op}'")
        if isinstance(instr, ins.GEPInstr):
            return self.gep(instr)
        if isinstance(instr, ins.LoadInstr):
            return self.load(instr)
        if isinstance(instr, ins.CompareInstr):
            return self.compare(instr)
        if isinstance(instr, ins.SelectInstr):
            return self.select(instr)
        if isinstance(instr, ins.CastInstr):
            return self.conversion(instr)
        if isinstance(instr, ins.CallInstr):
            return self.call(instr)
        if isinstance(instr, ins.ExtractElement):
            vector, index = instr.operands
            return self.dialect.extract(vector.type, self.expr(vector), self.expr(index))
        if isinstance(instr, ins.ShuffleVector):
            return self.shuffle(instr)
        if op == "fneg" and isinstance(t, ir.VectorType):
            return self.dialect.negate(t, self.expr(instr.operands[0]))
        if op == "fneg":
            return cx.unary("-", self.expr(instr.operands[0]))
        if op == "freeze":
            return self.expr(instr.operands[0])
        if isinstance(t, ir.VectorType):
            return self.vector_binary(instr)
        if op in ("fadd", "fsub", "fmul", "fdiv", "frem"):
            a, b = (self.expr(v) for v in instr.operands)
            return cx.float_binary(op, a, b)
        if isinstance(t, ir.IntType) and len(instr.operands) == 2:
            a, b = (self.expr(v) for v in instr.operands)
            return cx.integer_binary(op, list(instr.flags), t, a, b)
        raise Unexpressible(f"instruction '{op}' of type '{t}'")

    def scalar_lane(self, instr: ins.Instruction, lanes: list[Expr]) -> Expr:
        """The scalar C of `instr`'s operation applied to one lane of each operand."""
        op = instr.opname
        e = instr.type.element
        if isinstance(instr, ins.CompareInstr):
            return self._compare(instr, instr.operands[0].type.element, *lanes)
        if isinstance(instr, ins.CastInstr):
            source = instr.operands[0].type.element
            return cx.convert(op, source, e, lanes[0], self.types.name(e))
        if isinstance(instr, ins.SelectInstr):
            return cx.conditional(*lanes)
        if op in ("fadd", "fsub", "fmul", "fdiv", "frem"):
            return cx.float_binary(op, *lanes)
        return cx.integer_binary(op, list(instr.flags), e, *lanes)

    def vector_binary(self, instr: ins.Instruction) -> Expr:
        fused = self.dialect.vector_instruction(instr, self.expr)
        if fused is not None:
            return fused
        a, b = (self.expr(v) for v in instr.operands)
        simple = self.dialect.vector_operator(instr.opname, instr.type, a, b)
        if simple is not None:
            return simple
        return self.lanes(instr, [a, b])

    def lanes(self, instr: ins.Instruction, args: list[Expr]) -> Expr:
        key = instr.opname + ("_" + "_".join(instr.flags) if getattr(instr, "flags", None) else "")
        if isinstance(instr, ins.CompareInstr):
            key += "_" + instr.op
        return self.dialect.lanewise(
            key,
            instr.type,
            [v.type for v in instr.operands],
            lambda lanes: self.scalar_lane(instr, lanes),
            args,
        )

    def compare(self, instr: ins.CompareInstr) -> Expr:
        a, b = (self.expr(v) for v in instr.operands)
        if isinstance(instr.type, ir.VectorType):
            return self.lanes(instr, [a, b])
        return self._compare(instr, instr.operands[0].type, a, b)

    def _compare(self, instr: ins.CompareInstr, t: ir.Type, a: Expr, b: Expr) -> Expr:
        op, flavour = cx.predicate(instr.op)
        if instr.opname == "icmp":
            return cx.integer_compare(op, flavour != "u", t, a, b)
        return cx.float_compare(op, flavour == "o", a, b)

    def select(self, instr: ins.SelectInstr) -> Expr:
        args = [self.expr(v) for v in instr.operands]
        if isinstance(instr.operands[0].type, ir.VectorType):
            return self.lanes(instr, args)
        _, a, b = instr.operands
        if isinstance(instr.type, ir.PointerType) and self.pointer_type(a) != self.pointer_type(b):
            args[1:] = [cx.cast("void *", e) for e in args[1:]]  # C wants one pointer type
        return cx.conditional(*args)

    def conversion(self, instr: ins.CastInstr) -> Expr:
        source, a = instr.operands[0].type, self.expr(instr.operands[0])
        t = instr.type
        if instr.opname == "bitcast":
            if isinstance(t, ir.VectorType) and isinstance(source, ir.VectorType):
                return self.dialect.vector_cast(source, t, a)
            if isinstance(t, ir.PointerType) or isinstance(source, ir.PointerType):
                raise Unexpressible(f"bitcast from '{source}' to '{t}'")
            return self.dialect.bitcast(source, t, a)
        if isinstance(t, ir.VectorType):
            fused = self.dialect.vector_instruction(instr, self.expr)
            return fused if fused is not None else self.lanes(instr, [a])
        c_type = self.pointer_type(instr) if isinstance(t, ir.PointerType) else self.types.name(t)
        return cx.convert(instr.opname, source, t, a, c_type)

    def shuffle(self, instr: ins.ShuffleVector) -> Expr:
        a, b, mask = instr.operands
        n = a.type.count
        picks = (
            mask.constant
            if isinstance(mask.constant, (list, tuple))
            else [mask.constant] * len(mask.type)
        )
        lanes = []
        for pick in picks:
            pick = pick.constant if isinstance(pick, ir.Constant) else pick
            index = 0 if pick in (None, ir.Undefined) else int(pick)
            source, lane = (a, index) if index < n else (b, index - n)
            if isinstance(source, ir.Constant):
                lanes.append(self.vector_lanes(source)[lane])
            else:
                lanes.append(self.dialect.lane_text(source.type, self.expr(source), str(lane)))
        return self.dialect.vector_literal(instr.type, lanes)

    # memory

    def gep(self, instr: ins.GEPInstr) -> Expr:
        """`&lvalue` of the element the GEP addresses."""
        lvalue, _ = self.gep_lvalue(instr)
        return cx.unary("&", lvalue)

    def gep_lvalue(self, instr: ins.GEPInstr) -> tuple[Expr, ir.Type]:
        """The element a GEP addresses as an lvalue and its type: an access path
        (`p[i].f1[j]`) when the base pointer already has the GEP's type, else typed by the
        element alone (`*(int64_t *)((char *)p + offsetof(S, f1))`): reading memory through
        a struct type it was not written as would break C's aliasing rules."""
        source = instr.source_etype
        base = self.expr(instr.pointer)
        indices = list(instr.indices)
        typed = self.pointee(instr.pointer) == source and not isinstance(
            instr.pointer, ir.GlobalValue
        )
        if isinstance(instr.pointer, ir.GlobalVariable) and instr.pointer.value_type == source:
            base, typed = atom(f"(&{self.module_names[instr.pointer]})"), True
        if not typed and any(_is_struct(t) for t in _gep_types(instr)):
            return self._gep_bytes(instr, base)
        if not typed:
            base = cx.cast(f"{self.types.name(source)} *", base)
        first = self.expr(indices[0])
        text = f"{base.at(cx.PRIMARY)}[{first.text}]"
        refs = base.refs | first.refs
        current = source
        for index in indices[1:]:
            if _is_struct(current):
                k = int(index.constant)
                text, current = f"{text}.f{k}", current.elements[k]
            elif isinstance(current, (ir.ArrayType, ir.VectorType)):
                i = self.expr(index)
                text, current, refs = f"{text}[{i.text}]", current.element, refs | i.refs
            else:
                raise Unexpressible(f"getelementptr into '{current}'")
        return Expr(text, cx.PRIMARY, refs), current

    def _gep_bytes(self, instr: ins.GEPInstr, base: Expr) -> tuple[Expr, ir.Type]:
        terms = [f"(char *){base.at(cx.UNARY)}"]
        refs = set(base.refs)
        current: ir.Type = instr.source_etype
        for n, index in enumerate(instr.indices):
            if n and _is_struct(current):
                k = int(index.constant)
                terms.append(f"offsetof({self.types.name(current)}, f{k})")
                current = current.elements[k]
                continue
            element = current if n == 0 else current.element
            i = self.expr(index)
            refs |= i.refs
            if not (isinstance(index, ir.Constant) and int(index.constant or 0) == 0):
                terms.append(f"{i.at(cx.MUL)} * sizeof({self.types.name(element)})")
            current = element
        address = " + ".join(terms)
        lvalue = f"*({self.types.name(current)} *)({address})"
        return Expr(lvalue, cx.UNARY, frozenset(refs)), current

    def place(self, pointer: ir.Value, t: ir.Type) -> Expr:
        """The lvalue of type `t` at `pointer`."""
        if (
            isinstance(pointer, ins.GEPInstr)
            and pointer in self.inline
            and _gep_result_type(pointer) == t
        ):
            return self.gep_lvalue(pointer)[0]
        if isinstance(pointer, ir.GlobalVariable) and pointer.value_type == t:
            return atom(self.module_names[pointer])
        p = self.expr(pointer)
        if self.pointee(pointer) == t and not isinstance(pointer, ir.GlobalValue):
            return cx.unary("*", p)
        return cx.unary("*", cx.cast(f"{self.types.name(t)} *", p))

    def load(self, instr: ins.LoadInstr) -> Expr:
        pointer = instr.operands[0]
        if isinstance(instr.type, ir.VectorType):
            return self.dialect.vector_load(instr.type, self.expr(pointer), instr.align or 1)
        return self.place(pointer, instr.type)

    def store(self, instr: ins.StoreInstr) -> str:
        value, pointer = instr.operands
        if isinstance(value.type, ir.VectorType):
            return self.dialect.vector_store(
                value.type, self.expr(pointer), self.expr(value), instr.align or 1
            )
        return f"{self.place(pointer, value.type).text} = {self.expr(value).text};"

    # calls

    def call(self, instr: ins.CallInstr) -> Expr:
        callee = instr.callee
        if not isinstance(callee, ir.Function):
            raise Unexpressible("an indirect call")
        name = callee.name
        args = [self.expr(a) for a in instr.args]
        if name.startswith("llvm."):
            return self.intrinsic(instr, name, args)
        params = callee.function_type.args
        converted = []
        for arg, value, param in zip(args, instr.args, params):
            if isinstance(param, ir.PointerType) and callee in self.module_names:
                converted.append(self._pointer_argument(callee, len(converted), value, arg))
            else:
                converted.append(arg)
        for value, arg in zip(instr.args[len(params) :], args[len(params) :]):
            # a variadic callee's `...` arguments; a pointer as `char *`, which `%s` wants
            # (and `%p` takes)
            pointer = isinstance(value.type, ir.PointerType)
            converted.append(cx.cast("char *", arg) if pointer else arg)
        return cx.call(self.module_names.get(callee, name), *converted)

    def _pointer_argument(self, callee: ir.Function, k: int, value: ir.Value, arg: Expr) -> Expr:
        if not callee.blocks:  # another object's: its header's or our `void *` prototype
            return cx.cast("void *", arg)
        wanted = _param_pointee(callee.args[k])
        if wanted is None or self.pointee(value) == wanted:
            return arg
        return cx.cast(f"{self.types.name(wanted)} *", arg)

    def intrinsic(self, instr: ins.CallInstr, name: str, args: list[Expr]) -> Expr:
        base = name.split(".")[1]
        t = instr.type
        if base == "vector" and name.startswith("llvm.vector.reduce."):
            return self.dialect.reduce(name.split(".")[3], instr.args[0].type, args[0])
        if base in ("memcpy", "memmove", "memset"):
            return cx.call(base, *args[:3])
        if base == "fmuladd":
            return cx.binary("+", cx.binary("*", args[0], args[1]), args[2])
        operands = list(instr.args)
        if base == "abs":  # its i1 operand only says whether INT_MIN is poison
            operands, args = operands[:1], args[:1]
        if isinstance(t, ir.VectorType):
            scalar_name = name.rsplit(".", 1)[0] + "." + _scalar_suffix(t.element)
            return self.dialect.lanewise(
                base,
                t,
                [a.type for a in operands],
                lambda lanes: self._scalar_intrinsic(base, scalar_name, t.element, lanes),
                args,
            )
        return self._scalar_intrinsic(base, name, t, args)

    def _scalar_intrinsic(self, base: str, name: str, t: ir.Type, args: list[Expr]) -> Expr:
        if base in _MATH_NAMES and isinstance(t, (ir.FloatType, ir.DoubleType)):
            suffix = "f" if isinstance(t, ir.FloatType) else ""
            return cx.call(_MATH_NAMES[base] + suffix, *args)
        if base in ("smin", "smax", "umin", "umax", "abs") and isinstance(t, ir.IntType):
            return self._integer_minmax(base, t, args)
        raise Unexpressible(f"intrinsic '{name}'")

    def _integer_minmax(self, base: str, t: ir.IntType, args: list[Expr]) -> Expr:
        c = self.types.name(t)
        u = "u" + c if base.startswith("u") else c
        if base == "abs":
            body, params = "a < 0 ? (T)(0u - (U)a) : a", f"{c} a"
        else:
            op = "<" if base.endswith("min") else ">"
            body, params = f"(({u})a {op} ({u})b) ? a : b", f"{c} a, {c} b"
        helper = f"pycc_{base}_{c[:-2]}"
        unsigned = "u" + c
        text = body.replace("(T)", f"({c})").replace("(U)", f"({unsigned})")
        self.dialect.helpers.need(
            helper,
            lambda: f"static inline {c} {helper}({params})\n{{\n    return {text};\n}}",
        )
        return cx.call(helper, *args[: 1 if base == "abs" else 2])

    # ---------------------------------------------------------------------------------------
    # statements

    def _assign(self, name: str, target_type: str | None, value: ir.Value, e: Expr) -> str:
        if target_type and isinstance(value.type, ir.PointerType):
            if self.pointer_type(value) not in (target_type, "void *") and target_type != "void *":
                e = cx.cast(target_type, e)
        return f"{name} = {e.text};"

    def block_code(self, block: ir.Block) -> list[str]:
        lines = []
        for instr in block.instructions:
            if isinstance(instr, ins.PhiInstr) or instr is block.terminator:
                continue
            if instr not in self.live or instr in self.inline:
                continue
            if instr.opname in _ATOMIC:
                raise Unexpressible(f"atomic operation '{instr.opname}'")
            if isinstance(instr, ins.StoreInstr):
                lines.append(self.store(instr))
            elif isinstance(instr, ins.AllocaInstr):
                continue
            elif isinstance(instr, ins.InsertElement):
                vector, element, index = instr.operands
                name = self.names[instr]
                lines.append(f"{name} = {self.expr(vector).text};")
                lines.append(
                    self.dialect.insert(instr.type, name, self.expr(index), self.expr(element))
                )
            elif instr not in self.names:  # void, or a call whose result nothing reads
                lines.append(self.expr_statement(instr))
            else:
                name = self.names[instr]
                lines.append(
                    self._assign(name, self.declared_type(instr), instr, self.instruction(instr))
                )
        return lines

    def expr_statement(self, instr: ins.Instruction) -> str:
        if isinstance(instr, ins.CallInstr) and _NO_EFFECT_INTRINSICS.match(instr.callee.name):
            return ""
        return f"{self.instruction(instr).text};"

    def copies(self, source: ir.Block, target: ir.Block) -> list[str]:
        """Assignments of `target`'s phis for the edge from `source` (a parallel copy)."""
        pairs = []
        for phi in target.instructions:
            if not isinstance(phi, ins.PhiInstr):
                break
            if phi not in self.live:
                continue
            value = next(v for v, b in phi.incomings if b is source)
            e = self.expr(value)
            if e.text != self.names[phi]:
                pairs.append((phi, value, e))
        assigned: set[str] = set()
        clash = False
        for phi, _, e in pairs:
            if e.refs & assigned:
                clash = True
            assigned.add(self.names[phi])
        if not clash:
            return [
                self._assign(self.names[phi], self.declared_type(phi), v, e) for phi, v, e in pairs
            ]
        lines = ["{"]
        for k, (phi, _, e) in enumerate(pairs):
            lines.append(f"{_INDENT}{self.declared_type(phi)} pycc_tmp{k} = {e.text};")
        for k, (phi, _, _) in enumerate(pairs):
            lines.append(f"{_INDENT}{self.names[phi]} = pycc_tmp{k};")
        return [*lines, "}"]

    def declared_type(self, value: ir.Value) -> str:
        if isinstance(value.type, ir.PointerType):
            return self.pointer_type(value)
        return self.types.name(value.type)

    # ---------------------------------------------------------------------------------------
    # the whole function

    def parameters(self) -> list[tuple[str, str, str]]:
        """Each parameter as (IR name, C name, C type)."""
        return [(a.name, self.names[a], self.declared_type(a)) for a in self.function.args]

    def prototype(self, c_name: str | None = None, storage: str | None = None) -> str:
        """The function's prototype (under another name or storage class if given)."""
        f = self.function
        c_name = self.c_name if c_name is None else c_name
        storage = self.storage if storage is None else storage
        result = self.types.name(f.function_type.return_type)
        params = []
        for arg in f.args:
            decl = self.declared_type(arg)
            if isinstance(arg.type, ir.PointerType) and "noalias" in arg.attributes:
                decl += " restrict"
            params.append(_declare(decl, self.names[arg]))
        storage = f"{storage} " if storage else ""
        return f"{storage}{result} {c_name}({', '.join(params) or 'void'})"

    def definition(self) -> str:
        tree = structure(self.function)
        by_name = {name: value for value, name in self.names.items()}
        while True:
            body = self.render(tree, loop=None, top=True)
            unread = _unread_variables(body, by_name) - {self.names[a] for a in self.function.args}
            removable = {by_name[n] for n in unread if _removable(by_name[n])} & self.live
            if not removable:
                break
            self.live -= removable  # folding made them dead: their assignments would warn
        used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(body)))
        decls = []
        for arg in self.function.args:
            if self.names[arg] not in used:
                decls.append(f"(void){self.names[arg]};")
        for block in self.function.blocks:
            for instr in block.instructions:
                if instr in self.names and self.names[instr] in used:
                    decls.append(self.declaration(instr))
        aligned = [
            (self.names[a], pointer_alignment(a))
            for a in self.function.args
            if isinstance(a.type, ir.PointerType) and pointer_alignment(a) > 1
        ]
        decls += self.dialect.function_prologue(aligned)
        lines = [self.prototype(), "{"]
        lines += [_INDENT + d for d in decls]
        if decls and body:
            lines.append("")
        lines += [_INDENT + line if line else "" for line in body]
        return "\n".join([*lines, "}"])

    def declaration(self, instr: ins.Instruction) -> str:
        name = self.names[instr]
        if isinstance(instr, ins.AllocaInstr):
            if instr.operands and not (
                isinstance(instr.operands[0], ir.Constant) and instr.operands[0].constant == 1
            ):
                raise Unexpressible("an alloca of a run-time size (a variable-length array)")
            storage = c_identifier(name + "_storage", self._taken, "s")
            t = self.types.name(instr.allocated_type)
            return f"{t} {storage}; {t} *{name} = &{storage};"
        t = self.declared_type(instr)
        if isinstance(instr.type, ir.VectorType):
            zero = self.dialect.zero(instr.type)
        else:
            zero = "{0}" if isinstance(instr.type, ir.BaseStructType) else "0"
        return f"{_declare(t, name)} = {zero};"

    def render(self, stmts: list, loop, top: bool = False) -> list[str]:
        lines: list[str] = []
        k = 0
        while k < len(stmts):
            s = stmts[k]
            nxt = stmts[k + 1] if k + 1 < len(stmts) else None
            last = nxt is None
            if isinstance(s, Copies) and isinstance(nxt, LoopStmt):
                loop_lines = self.render_loop(nxt, init=self.copies(s.source, s.target))
                lines += loop_lines
                k += 2
                continue
            lines += self.render_one(s, loop, last and top)
            k += 1
        return lines

    def render_one(self, s, loop, function_end: bool) -> list[str]:
        if isinstance(s, Code):
            return [line for line in self.block_code(s.block) if line]
        if isinstance(s, Copies):
            return self.copies(s.source, s.target)
        if isinstance(s, Break):
            return ["break;"]
        if isinstance(s, Continue):
            return ["continue;"]
        if isinstance(s, Return):
            if s.value is None:
                return [] if function_end else ["return;"]
            return [f"return {self.expr(s.value).text};"]
        if isinstance(s, Unreachable):
            return ["abort();"]
        if isinstance(s, LoopStmt):
            return self.render_loop(s, init=[])
        if isinstance(s, If):
            return self.render_if(s, loop)
        raise AssertionError(s)

    def condition(self, value: ir.Value, negate: bool) -> Expr:
        e = self.expr(value)
        if not negate:
            return e
        if (
            isinstance(value, ins.ICMPInstr)
            and value in self.inline
            and not isinstance(value.type, ir.VectorType)
        ):
            op, flavour = cx.predicate(value.op)
            inverse = cx.inverse_compare(op)
            prefix = flavour if flavour and inverse not in ("==", "!=") else ""
            flipped = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
            a, b = (self.expr(v) for v in value.operands)
            name = prefix + flipped[inverse]
            op2, flavour2 = cx.predicate(name)
            return cx.integer_compare(op2, flavour2 != "u", value.operands[0].type, a, b)
        return cx.unary("!", e)

    def render_if(self, s: If, loop) -> list[str]:
        then = self.render(s.then, loop)
        otherwise = self.render(s.otherwise, loop)
        for jump, rest, negate in ((otherwise, then, True), (then, otherwise, False)):
            if len(jump) == 1 and _is_jump(jump[0]) and rest:  # a guard: no else needed
                return [f"if ({self.condition(s.condition, negate).text}) {jump[0]}", *rest]
        if not then and not otherwise:
            return []
        negate = not then
        if negate:
            then, otherwise = otherwise, []
        cond = self.condition(s.condition, negate).text
        if len(then) == 1 and not otherwise and _is_jump(then[0]):
            return [f"if ({cond}) {then[0]}"]
        lines = [f"if ({cond}) {{", *(_INDENT + x for x in then)]
        if otherwise:
            lines += ["} else {", *(_INDENT + x for x in otherwise)]
        return [*lines, "}"]

    def render_loop(self, s: LoopStmt, init: list[str]) -> list[str]:
        body = list(s.body)
        if body and isinstance(body[-1], Continue):
            body.pop()
        shape = self._for_shape(s, body)
        pragmas = self.dialect.loop_pragmas(s.loop)
        if shape is not None and all(_simple_assignment(x) for x in init):
            cond, inner, step = shape
            head = ", ".join(x[:-1] for x in init)
            lines = self.render(inner, s.loop)
            step_text = ", ".join(_increment(x[:-1]) for x in step)
            head_line = f"for ({head}; {cond}; {step_text}) {{"
            return [*pragmas, head_line, *(_INDENT + x for x in lines), "}"]
        lines = self.render(body, s.loop)
        if lines and lines[-1] == "continue;":
            lines.pop()
        return [*init, *pragmas, "for (;;) {", *(_INDENT + x for x in lines), "}"]

    def _for_shape(self, s: LoopStmt, body: list):
        """(condition, body statements, step assignments) when the loop reads as a C `for`:
        a header that only tests, one latch whose phi copies are simple, no other continue."""
        if len(body) < 2 or not isinstance(body[0], Code) or not isinstance(body[1], If):
            return None
        if self.block_code(body[0].block):
            return None
        test = body[1]
        for arm, other, negate in (
            (test.then, test.otherwise, False),
            (test.otherwise, test.then, True),
        ):
            if not (
                len(other) == 2 and isinstance(other[0], Copies) and isinstance(other[1], Break)
            ):
                continue
            if self.copies(other[0].source, other[0].target):
                continue
            rest = [*arm, *body[2:]]  # the test as a guard, or the body in its arm
            if rest and isinstance(rest[-1], Continue):
                rest.pop()
            if not rest or not isinstance(rest[-1], Copies) or _continues(rest[:-1], s.loop):
                continue
            step = self.copies(rest[-1].source, rest[-1].target)
            if not all(_simple_assignment(x) for x in step):
                continue
            cond = self.condition(test.condition, negate).text
            return cond, rest[:-1], step
        return None


def _unread_variables(lines: list[str], names: dict[str, ir.Value]) -> set[str]:
    """Variables assigned but never read in `lines`."""
    assigned, read = set(), set()
    for line in lines:
        target = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*) = ", line)
        rest = line[target.end() :] if target else line
        if target:
            assigned.add(target.group(1))
        read.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", rest))
    return {n for n in assigned - read if n in names}


def _removable(value: ir.Value) -> bool:
    """A value whose computation has no effect besides its result."""
    return (
        isinstance(value, ins.Instruction)
        and not (isinstance(value, ins.CallInstr) and not _pure_call(value))
        and not isinstance(value, ins.AllocaInstr)
    )


def _is_jump(line: str) -> bool:
    return line in ("break;", "continue;") or line.startswith("return")


def _increment(assignment: str) -> str:
    """`i = i + 1` as `i++`, `i = i + 4` as `i += 4`."""
    match = re.fullmatch(r"(\w+) = \1 \+ (\d+|\(-\d+\))", assignment)
    if match is None:
        return assignment
    name, step = match.groups()
    if step.startswith("("):
        step = step[2:-1]
        return f"{name}--" if step == "1" else f"{name} -= {step}"
    return f"{name}++" if step == "1" else f"{name} += {step}"


def _continues(stmts: Iterable, loop) -> bool:
    for s in stmts:
        if isinstance(s, Continue) and s.loop is loop:
            return True
        if isinstance(s, If) and (_continues(s.then, loop) or _continues(s.otherwise, loop)):
            return True
        if isinstance(s, LoopStmt) and _continues(s.body, loop):
            return True
    return False


def _simple_assignment(line: str) -> bool:
    return line.endswith(";") and not line.startswith("{") and "\n" not in line


def _declare(c_type: str, name: str) -> str:
    return f"{c_type}{name}" if c_type.endswith("*") else f"{c_type} {name}"


def _scalar_suffix(t: ir.Type) -> str:
    return (
        "f32" if isinstance(t, ir.FloatType) else "f64" if isinstance(t, ir.DoubleType) else str(t)
    )


def _fold(instr: ins.Instruction, values: list[int]) -> int | None:
    """LLVM's integer `instr` on constant operands (two's complement, wrapped)."""
    width = instr.type.width
    mask = (1 << width) - 1
    op = instr.opname
    if op in ("sext", "zext", "trunc"):
        source = instr.operands[0].type.width
        v = values[0] & ((1 << source) - 1)
        if op == "sext" and v >> (source - 1):
            v -= 1 << source
        return v & mask
    if len(values) != 2:
        return None
    a, b = (v & mask for v in values)
    results = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
        "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
        "shl": lambda: a << b if b < width else None,
    }  # fmt: skip
    if op not in results:
        return None
    result = results[op]()
    return None if result is None else result & mask


def _is_struct(t: ir.Type) -> bool:
    return isinstance(t, (ir.LiteralStructType, ir.IdentifiedStructType))


def _gep_types(gep: ins.GEPInstr) -> list[ir.Type]:
    """The types a GEP's indices step into, the source type first."""
    out, current = [gep.source_etype], gep.source_etype
    for index in list(gep.indices)[1:]:
        if _is_struct(current):
            current = current.elements[int(index.constant)]
        elif isinstance(current, (ir.ArrayType, ir.VectorType)):
            current = current.element
        else:
            break
        out.append(current)
    return out


def _gep_result_type(gep: ins.GEPInstr) -> ir.Type | None:
    current = gep.source_etype
    for index in list(gep.indices)[1:]:
        if isinstance(current, (ir.LiteralStructType, ir.IdentifiedStructType)):
            current = current.elements[int(index.constant)]
        elif isinstance(current, (ir.ArrayType, ir.VectorType)):
            current = current.element
        else:
            return None
    return current


def _param_pointee(arg: ir.Argument) -> ir.Type | None:
    """The element type a pointer parameter is used as, if all its direct uses agree."""
    if not isinstance(arg.type, ir.PointerType):
        return None
    found: dict[str, ir.Type] = {}
    function = arg.parent
    for block in function.blocks:
        for instr in block.instructions:
            if isinstance(instr, ins.GEPInstr) and instr.pointer is arg:
                found[str(instr.source_etype)] = instr.source_etype
            elif isinstance(instr, ins.LoadInstr) and instr.operands[0] is arg:
                if not isinstance(instr.type, ir.VectorType):
                    found[str(instr.type)] = instr.type
            elif isinstance(instr, ins.StoreInstr) and instr.operands[1] is arg:
                if not isinstance(instr.operands[0].type, ir.VectorType):
                    found[str(instr.operands[0].type)] = instr.operands[0].type
    return next(iter(found.values())) if len(found) == 1 else None


def _inlinable(instr: ins.Instruction) -> bool:
    if isinstance(
        instr,
        (ins.PhiInstr, ins.AllocaInstr, ins.StoreInstr, ins.InsertElement, ins.Terminator),
    ):
        return False
    if isinstance(instr, ins.CallInstr):
        return _pure_call(instr)
    return not isinstance(instr.type, ir.VoidType)


def _pure_call(instr: ins.CallInstr) -> bool:
    callee = instr.callee
    if not isinstance(callee, ir.Function):
        return False
    name = callee.name
    return bool(
        ARITHMETIC_INTRINSIC.match(name + ".")
        or name in LIBM_FUNCTIONS
        or name.startswith("llvm.vector.reduce.")
    )


def _reads_memory(instr: ins.Instruction) -> bool:
    return isinstance(instr, (ins.LoadInstr, ins.CallInstr))


def _writes_memory(instr: ins.Instruction) -> bool:
    if isinstance(instr, ins.StoreInstr):
        return True
    return isinstance(instr, ins.CallInstr) and not _pure_call(instr)


def _live_values(function: ir.Function) -> set[ins.Instruction]:
    """Instructions whose effect or value the function's behaviour depends on."""
    live: set = set()
    work: list = []
    for block in function.blocks:
        for instr in block.instructions:
            effect = isinstance(instr, (ins.StoreInstr, ins.Terminator)) or (
                isinstance(instr, ins.CallInstr) and not _pure_call(instr)
            )
            if effect:
                work.append(instr)
    while work:
        instr = work.pop()
        if instr in live:
            continue
        live.add(instr)
        work.extend(
            op for op in _operands(instr) if isinstance(op, ins.Instruction) and op not in live
        )
    return live


def _operands(instr: ins.Instruction) -> list[ir.Value]:
    """The values `instr` reads (a phi's incoming values)."""
    if isinstance(instr, ins.PhiInstr):
        return [v for v, _ in instr.incomings]
    return list(instr.operands)
