"""Multiply-adds fused exactly where gcc fuses them.

Under -ffp-contract=fast (gcc's default in GNU C modes) with FMA in the ISA, gcc fuses
`a*b + c` into one fma at -O2 and above. Which products fuse changes the last bits of a
result, so a drop-in compiler must make gcc's choice, and LLVM's own contraction does not (its
code generator turns `x*2.0` into `x+x` first and never fuses a product used twice). So the
emitted IR carries no `contract` flag and the fusions are made here, by gcc's rule (its
widening-multiply pass, `convert_mult_to_fma`), in block order: a product is fused into every
one of its uses when each is an addition or subtraction in the same block, directly or
through one negation, and none adds the product to itself; a product met later whose use has
become an fma already stays a product, so `a*b + c*d` fuses the first one.

That is gcc's choice for the function compiled on its own. Where gcc decides otherwise the
kernel is left to cc (`unpredictable_fusion`): for a product accumulated across iterations
(`s += a[i]*b[i]`, or `c[i][j] += ...` at an address the loop does not move) the fusions
change with gcc's vectorizer, store motion and the `avoid-fma-max-bits` tuning of AMD cores;
floating-point values a branch chooses are if-converted in gcc's vector loop only;
and a kernel its own file calls is inlined or specialized there (-finline-*, -fipa-cp),
where gcc's choice changes too (the driver checks that with `has_products`).
"""

from __future__ import annotations

import itertools

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.affine import address_of, size_of
from ..ir_passes.core.analyses import loops_of
from ..ir_passes.core.loops import Loop, LoopInfo
from ..ir_passes.core.rewrite import remove_instruction, replace_uses, used_values
from ..ir_passes.core.symbolic import Expr

_ADDITIONS = ("fadd", "fsub")


def _users(function: ir.Function) -> dict[ir.Value, list[ir.Instruction]]:
    users: dict[ir.Value, list[ir.Instruction]] = {}
    for block in function.blocks:
        for instr in block.instructions:
            for value in used_values(instr):
                users.setdefault(value, []).append(instr)
    return users


def fuse_like_gcc(function: ir.Function) -> int:
    """Fuse the products gcc would fuse into `llvm.fma` calls; returns how many uses fused."""
    later, _ = _repeats(function)
    for product, first in later.items():  # gcc's value numbering: one product, all its uses
        replace_uses(function, {product: first})
        remove_instruction(product)
    users = _users(function)
    fused = 0
    for block in function.blocks:
        for product in [i for i in block.instructions if i.opname == "fmul"]:
            plan = _fusion_plan(product, users)
            for negation, addition in plan or ():
                created = _fma(product, negation, addition)
                call = created[-1]
                replace_uses(function, {addition: call})
                users[call] = users.pop(addition, [])
                for operand in used_values(addition):  # (`a*b - c*d`: c*d now feeds a negation)
                    users[operand] = [u for u in users.get(operand, []) if u is not addition]
                for instr in created:
                    for operand in used_values(instr):
                        users.setdefault(operand, []).append(instr)
                remove_instruction(addition)
                if negation is not None:
                    remove_instruction(negation)
                fused += 1
            if plan:
                remove_instruction(product)
    return fused


def _fusion_plan(
    product: ir.Instruction, users: dict[ir.Value, list[ir.Instruction]]
) -> list[tuple[ir.Instruction | None, ir.Instruction]] | None:
    """(negation or None, addition) for each use of `product`, or None where gcc keeps it."""
    uses = users.get(product, [])
    if not uses:
        return None
    plan, negated = [], False
    for use in dict.fromkeys(uses):  # an instruction using the product twice is seen once
        negation = None
        if use.opname == "fneg":
            if negated:  # two negations of one product: gcc gives up
                return None
            negated, negation = True, use
            neg_uses = users.get(use, [])
            if len(neg_uses) != 1 or product in used_values(neg_uses[0]):
                return None
            use = neg_uses[0]
        if use.opname not in _ADDITIONS or use.parent is not product.parent:
            return None
        if use.operands[0] is use.operands[1]:  # a*b + a*b
            return None
        plan.append((negation, use))
    return plan


def _fma(
    product: ir.Instruction, negation: ir.Instruction | None, addition: ir.Instruction
) -> list[ir.Instruction]:
    """The instructions that replace `addition`, before it, the call last: fma(±a, b, ±c)
    with the signs of `±(a*b) ± c` (negations are exact, so this is gcc's fma/fms/fnma/fnms)."""
    builder = ir.IRBuilder(addition.parent)
    builder.position_before(addition)
    fused = negation if negation is not None else product
    a, b = product.operands
    first, second = addition.operands
    negate_product = negation is not None
    created = []
    if second is fused:  # c - p: the product's sign flips
        addend = first
        negate_product ^= addition.opname == "fsub"
    elif addition.opname == "fsub":
        addend = builder.fneg(second)
        created.append(addend)
    else:
        addend = second
    if negate_product:
        a = builder.fneg(a)
        created.append(a)
    module = addition.parent.parent.module
    return [*created, builder.call(_intrinsic(module, product.type), [a, b, addend])]


def _intrinsic(module: ir.Module, typ: ir.Type) -> ir.Function:
    if isinstance(typ, ir.VectorType):
        suffix = f"v{typ.count}{typ.element.intrinsic_name}"
    else:
        suffix = typ.intrinsic_name
    name = f"llvm.fma.{suffix}"
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, ir.FunctionType(typ, [typ, typ, typ]), name)


def has_products(function: ir.Function) -> bool:
    """Does `function` multiply floating-point values? A product it adds may fuse, and so
    may one it returns or passes on, once gcc has inlined the function into a caller."""
    return any(instr.opname == "fmul" for block in function.blocks for instr in block.instructions)


def unpredictable_fusion(function: ir.Function) -> str | None:
    """Why gcc's fusion in `function` cannot be predicted from the function alone, or None:
    a product added into a value carried from one loop iteration to the next (a loop-header
    phi, or a store to an address the innermost loop does not move); or floating-point
    values a branch chooses (`?:`, `if`), which gcc if-converts in its vector loop and not in
    its scalar one, so that a product and its addition share a block in one and not in the
    other."""
    if _repeats(function)[1]:
        return (
            "a product is written twice under -ffp-contract=fast with FMA, in two blocks or "
            "after a store: whether gcc computes it once (its value numbering), and fuses "
            "that one by all its uses, is not told here, so the kernel stays with cc "
            "(-ffp-contract=off or -std=c17 make it pycc-stencil's)"
        )
    loops = loops_of(function)
    users = _users(function)
    for block in function.blocks:
        for instr in block.instructions:
            chosen = instr.opname == "select" or (
                isinstance(instr, ins.PhiInstr) and _header_of(loops, block) is None
            )
            if chosen and _is_floating(instr.type):
                return (
                    "a branch chooses a floating-point value under -ffp-contract=fast with "
                    "FMA: gcc fuses multiply-adds across it in its vector loop only, so the "
                    "kernel stays with cc (-ffp-contract=off or -std=c17 make it "
                    "pycc-stencil's)"
                )
            if instr.opname != "fmul" or loops.loop_for(block) is None:
                continue
            for use in users.get(instr, []):
                if use.opname in _ADDITIONS and _carried(use, users, loops):
                    return (
                        "a product is accumulated across loop iterations under "
                        "-ffp-contract=fast with FMA: which multiply-adds gcc fuses there "
                        "depends on its vectorizer, so the kernel stays with cc "
                        "(-ffp-contract=off or -std=c17 make it pycc-stencil's)"
                    )
    return None


def paired_fusion(function: ir.Function) -> str | None:
    """Why gcc's vectorizer may fuse products in `function` under any contraction mode, or
    None: a block stores into neighbouring elements of one array values computed with products
    whose additions and subtractions differ (a complex multiply's real and imaginary parts,
    `wr*sr - wi*si` and `wr*si + wi*sr`, also added into what the array held). gcc 12
    vectorizes such a pair as one `vfmaddsub` (its complex-arithmetic patterns) with FMA in the
    ISA, one rounding where the source has two. Only groups of 2, 4 or 8 stores into the array
    in the block count, those gcc's SLP fills vectors with: five mixed stores side by side
    (`tests/test_dropin_contraction.py`'s `shapes`) were not paired, nor are lanes whose
    additions are alike (an unrolled stencil's)."""
    for block in function.blocks:
        stores: dict[ir.Value, list[tuple[Expr, int, tuple[str, ...]]]] = {}
        for instr in block.instructions:
            value, address = instr.operands if isinstance(instr, ins.StoreInstr) else (None, None)
            if value is None or not _is_floating(value.type):
                continue
            operations = _feeding_arithmetic(value, block)
            shape = tuple(sorted(o for o in operations if o in _ADDITIONS))
            where = address_of(address)
            lane = (where.offset, size_of(value.type), shape if "fmul" in operations else ())
            stores.setdefault(where.base, []).append(lane)
        for group in stores.values():
            if len(group) in (2, 4, 8) and any(
                a[2] and b[2] and a[2] != b[2] and (a[0] - b[0]).is_constant
                and abs((a[0] - b[0]).value) == a[1]
                for a, b in itertools.combinations(group, 2)
            ):  # fmt: skip
                return (
                    "it stores values with products into neighbouring elements whose additions "
                    "and subtractions differ (a complex multiply): gcc's vectorizer fuses those "
                    "into vfmaddsub with FMA in the ISA even under -ffp-contract=off, so the "
                    "kernel stays with cc (-fno-tree-vectorize or an ISA without FMA make it "
                    "pycc-stencil's)"
                )
    return None


#: the operations of a stored value's arithmetic that `paired_fusion` follows
_ARITHMETIC = ("fadd", "fsub", "fmul", "fneg", "fpext", "fptrunc")


def _feeding_arithmetic(value: ir.Value, block: ir.Block) -> list[str]:
    """`_arithmetic` of a stored value; for one a loop carried (`sr += wr*sr2 - wi*si2`
    accumulated, stored after the loop: gcc's SLP pairs the two reductions alike), that of
    each update that reaches it through phis, in the update's block."""
    found, stack, seen = _arithmetic(value, block), [value], set()
    while stack:
        node = stack.pop()
        if not isinstance(node, ir.PhiInstr) or id(node) in seen:
            continue
        seen.add(id(node))
        for incoming, _ in node.incomings:
            if isinstance(incoming, ir.PhiInstr):
                stack.append(incoming)
            elif isinstance(incoming, ir.Instruction):
                found += _arithmetic(incoming, incoming.parent)
    return found


def _arithmetic(value: ir.Value, block: ir.Block) -> list[str]:
    """The floating-point operations computing `value` within `block` (down to its loads),
    each once (a value used twice is one operation)."""
    found, stack, seen = [], [value], set()
    while stack:
        node = stack.pop()
        if isinstance(node, ir.Instruction) and node.parent is block and id(node) not in seen:
            seen.add(id(node))
            if node.opname in _ARITHMETIC:
                found.append(node.opname)
                stack.extend(node.operands)
    return found


def _repeats(function: ir.Function) -> tuple[dict[ir.Instruction, ir.Instruction], bool]:
    """The products of `function` that multiply what an earlier one of their block does (the
    same arguments or constants, or loads of one address computed alike), with no store or
    call before them in the block: gcc's value numbering makes them that earlier one. And
    whether a product repeats one that it may or may not make it (in another block, or
    after a store)."""
    keys: dict[int, object] = {}
    later: dict[ir.Instruction, ir.Instruction] = {}
    seen: set[object] = set()
    unsure = False
    for block in function.blocks:
        first: dict[object, ir.Instruction] = {}
        writes: list[ir.Value | None] = []  # the arrays stores before here write (None: any)
        for instr in block.instructions:
            if instr.opname == "store":
                writes.append(_restricted_root(instr.operands[1]))
            elif instr.opname == "call" and not _pure_call(instr):
                writes.append(None)
            if instr.opname != "fmul":
                continue
            key = tuple(sorted(map(repr, (_key(o, keys) for o in instr.operands))))
            if key in first and not _may_write(writes, _read_roots(instr)):
                later[instr] = first[key]
            elif key in seen:
                unsure = True
            first.setdefault(key, instr)
            seen.add(key)
    return later, unsure


def _restricted_root(pointer: ir.Value) -> ir.Value | None:
    """The `noalias` (restrict) argument `pointer` is an address into, or None."""
    while isinstance(pointer, ir.Instruction) and pointer.opname in ("getelementptr", "bitcast"):
        pointer = pointer.operands[0]
    restricted = isinstance(pointer, ir.Argument) and "noalias" in pointer.attributes
    return pointer if restricted else None


def _read_roots(product: ir.Instruction) -> set[ir.Value | None]:
    """The roots of the addresses the loads `product` depends on read (None: unknown)."""
    roots: set[ir.Value | None] = set()
    work, seen = [product], set()
    while work:
        value = work.pop()
        if id(value) in seen or not isinstance(value, ir.Instruction):
            continue
        seen.add(id(value))
        if value.opname == "load":
            pointer = value.operands[0]
            while isinstance(pointer, ir.Instruction) and pointer.opname in ("getelementptr",):
                pointer = pointer.operands[0]
            roots.add(pointer if isinstance(pointer, ir.Argument) else None)
        if value.opname in _PURE:
            work += value.operands
    return roots


def _may_write(writes: list[ir.Value | None], reads: set[ir.Value | None]) -> bool:
    """May one of `writes` change what `reads` read? Only a store into a restrict array the
    reads do not read cannot (gcc's alias analysis, which also knows more, merges then)."""
    return any(root is None or root in reads for root in writes)


def _pure_call(call: ir.Instruction) -> bool:
    """A call of an LLVM arithmetic intrinsic (`llvm.sqrt`, `llvm.fabs`: no memory)."""
    callee = getattr(call, "callee", None)
    name = getattr(callee, "name", "")
    return name.startswith("llvm.") and not name.startswith(("llvm.mem", "llvm.lifetime"))


#: instructions whose value depends only on their operands' (a load: on its address's)
_PURE = frozenset(
    "load getelementptr add sub mul shl sext zext trunc fadd fsub fmul fdiv fneg fpext fptrunc "
    "sitofp uitofp bitcast".split()
)


def _key(value: ir.Value, keys: dict[int, object]) -> object:
    """A key equal for values computed alike from the same arguments and constants."""
    if id(value) in keys:
        return keys[id(value)]
    if isinstance(value, ir.Constant):
        key: object = ("constant", str(value))
    elif isinstance(value, ir.Instruction) and value.opname in _PURE:
        key = (value.opname, str(value.type), *(_key(o, keys) for o in value.operands))
    else:
        key = ("value", id(value))  # an argument, a phi, a call...
    keys[id(value)] = key
    return key


def _header_of(loops: LoopInfo, block: ir.Block) -> Loop | None:
    loop = loops.loop_for(block)
    return loop if loop is not None and loop.header is block else None


def _is_floating(typ: ir.Type) -> bool:
    element = typ.element if isinstance(typ, ir.VectorType) else typ
    return isinstance(element, (ir.FloatType, ir.DoubleType, ir.HalfType))


def _carried(start: ir.Instruction, users: dict, loops: LoopInfo) -> bool:
    """Does the value of `start` flow, through additions, negations, selects and phis, into
    a loop-header phi or a store at an address invariant in the store's innermost loop?"""
    seen, work = set(), [start]
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for user in users.get(value, []):
            loop = loops.loop_for(user.parent)
            if isinstance(user, ins.PhiInstr) and loop is not None and loop.header is user.parent:
                if any(v is value and b in loop for v, b in user.incomings):
                    return True
            if isinstance(user, ins.StoreInstr) and user.operands[0] is value:
                if loop is not None and _invariant_address(user.operands[1], loop):
                    return True
            if user.opname in (*_ADDITIONS, "fneg", "select", "phi"):
                work.append(user)
    return False


def _invariant_address(address: ir.Value, loop: Loop) -> bool:
    """An address the loop does not move: invariant values, and GEPs and casts of them."""
    if isinstance(address, ins.GEPInstr) and address.parent in loop:
        parts = [address.pointer, *address.indices]
        return all(_invariant_address(part, loop) for part in parts)
    if isinstance(address, ins.CastInstr) and address.parent in loop:
        return _invariant_address(address.operands[0], loop)
    return loop.is_invariant(address)
