"""On-the-fly SSA construction for C scalar locals (Braun et al., CC 2013).

The passes work on llvmlite.ir objects, which LLVM's mem2reg cannot produce, so the front end
builds SSA itself: each scalar local whose address is never taken is an SSA variable; a read
in a block without a local definition looks through the predecessors and creates phis, so a
loop counter becomes the header's induction phi. Blocks are sealed once all their
predecessors are known. Trivial phis are removed at the end (`remove_trivial_phis`). The
passes promote locals whose address only inlined code took the same way (`promotion.py`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field

from llvmlite import ir

from .rewrite import replace_uses


class SSABuilder:
    """Tracks definitions of variables per block and the CFG edges built so far."""

    def __init__(self, builder: ir.IRBuilder) -> None:
        self._builder = builder  # always appends at the end of its block (see _new_phi)
        self._defs: dict[Hashable, dict[ir.Block, ir.Value]] = {}
        self._types: dict[Hashable, ir.Type] = {}
        self._preds: dict[ir.Block, list[ir.Block]] = {}
        self._sealed: set[ir.Block] = set()
        self._incomplete: dict[ir.Block, dict[Hashable, ir.PhiInstr]] = {}

    def declare(self, var: Hashable, typ: ir.Type) -> None:
        self._types[var] = typ
        self._defs.setdefault(var, {})

    def add_edge(self, src: ir.Block, dst: ir.Block) -> None:
        assert dst not in self._sealed, f"edge into sealed block {dst.name}"
        self._preds.setdefault(dst, []).append(src)

    def predecessors(self, block: ir.Block) -> list[ir.Block]:
        return self._preds.get(block, [])

    def write(self, var: Hashable, block: ir.Block, value: ir.Value) -> None:
        self._defs[var][block] = value

    def read(self, var: Hashable, block: ir.Block) -> ir.Value:
        defs = self._defs[var]
        if block in defs:
            return defs[block]
        return self._resolve(var, block, [])

    def seal(self, block: ir.Block) -> None:
        for var, phi in self._incomplete.pop(block, {}).items():
            self._add_operands(var, phi)
        self._sealed.add(block)

    def _resolve(self, var: Hashable, block: ir.Block, pending: list[_Pending]) -> ir.Value:
        """The value of `var` at the end of `block`, then the remaining operands of `pending`.

        Braun et al.'s readVariableRecursive with an explicit stack instead of recursion (a
        chain of a few hundred `if`s would exceed Python's recursion limit): walking up a
        single-predecessor chain, every block passed records the value found; a block with
        several predecessors gets a phi (recorded before its operands are looked up, which
        ends the walk around loops) whose operands are read one predecessor at a time. The
        phis are created in the same order as by the recursive formulation.
        """
        defs = self._defs[var]
        while True:
            # walk up until a block knows the value
            while block not in defs:
                preds = self._preds.get(block, [])
                if block not in self._sealed:
                    phi = self._new_phi(var, block)
                    self._incomplete.setdefault(block, {})[var] = phi
                    defs[block] = phi
                elif not preds:
                    defs[block] = ir.Constant(self._types[var], ir.Undefined)  # never assigned
                elif len(preds) == 1:
                    pending.append(_Pending(block))
                    block = preds[0]
                else:
                    phi = self._new_phi(var, block)
                    defs[block] = phi
                    pending.append(_Pending(block, phi, preds))
                    block = preds[0]
            value = defs[block]
            # hand the value back down the walk, to the next operand still missing
            while pending:
                top = pending[-1]
                if top.phi is None:
                    defs[top.block] = value
                    pending.pop()
                    continue
                top.phi.add_incoming(value, top.preds[top.next])
                top.next += 1
                if top.next < len(top.preds):
                    block = top.preds[top.next]
                    break
                pending.pop()
                value = top.phi
            else:
                return value

    def _new_phi(self, var: Hashable, block: ir.Block) -> ir.PhiInstr:
        name = getattr(var, "name", "")
        phi = ir.PhiInstr(block, self._types[var], name)
        block.instructions.insert(0, phi)
        if self._builder.block is block:
            self._builder.position_at_end(block)  # the builder's insertion index moved
        return phi

    def _add_operands(self, var: Hashable, phi: ir.PhiInstr) -> None:
        preds = self.predecessors(phi.parent)
        if preds:
            self._resolve(var, preds[0], [_Pending(phi.parent, phi, preds)])


@dataclass(eq=False)
class _Pending:
    """A block on the walk of `SSABuilder._resolve` that waits for a value: a block with one
    predecessor records it; a phi takes it as the operand from `preds[next]`."""

    block: ir.Block
    phi: ir.PhiInstr | None = None
    preds: list[ir.Block] = field(default_factory=list)
    next: int = 0


def remove_trivial_phis(function: ir.Function) -> None:
    """Replace phis that merge only one value (besides themselves) by that value; drop dead phis.

    One worklist pass: a phi found trivial forwards to its value, and only the phis that use it
    are looked at again; the uses are rewritten once at the end (rewriting the whole function
    per phi made this quadratic in the size of a loop body full of `if`s).
    """
    phis = [i for b in function.blocks for i in b.instructions if isinstance(i, ir.PhiInstr)]
    if not phis:
        return
    forward: dict[ir.PhiInstr, ir.Value] = {}

    def resolved(value: ir.Value) -> ir.Value:
        root = value
        while isinstance(root, ir.PhiInstr) and root in forward:
            root = forward[root]
        while isinstance(value, ir.PhiInstr) and value in forward:  # compress the path
            following = forward[value]
            forward[value] = root
            value = following
        return root

    phi_users: dict[ir.PhiInstr, list[ir.PhiInstr]] = {phi: [] for phi in phis}
    for phi in phis:
        for value, _ in phi.incomings:
            if isinstance(value, ir.PhiInstr) and value is not phi and value in phi_users:
                phi_users[value].append(phi)
    work = list(reversed(phis))
    while work:
        phi = work.pop()
        if phi in forward:
            continue
        distinct = {}
        for value, _ in phi.incomings:
            value = resolved(value)
            if value is not phi:
                distinct[id(value)] = value
        if len(distinct) == 1:
            (value,) = distinct.values()
            forward[phi] = value
            users = phi_users.pop(phi)
            work.extend(reversed(users))
            if isinstance(value, ir.PhiInstr) and value in phi_users:
                # what used `phi` now uses `value` (the shorter list joins the longer one)
                others = phi_users[value]
                if len(others) < len(users):
                    users, others = others, users
                    phi_users[value] = others
                others.extend(users)
    if forward:
        replace_uses(function, {phi: resolved(phi) for phi in forward})
    # drop phis nothing uses (a phi using itself counts as used), then those only they used
    removed = set(forward)
    uses: Counter[int] = Counter()
    for block in function.blocks:
        for instr in block.instructions:
            if instr not in removed:
                uses.update(id(op) for op in _operands(instr))
    dead = [phi for phi in phis if phi not in removed and uses[id(phi)] == 0]
    while dead:
        phi = dead.pop()
        removed.add(phi)
        for op in _operands(phi):
            uses[id(op)] -= 1
            if isinstance(op, ir.PhiInstr) and uses[id(op)] == 0 and op not in removed:
                dead.append(op)
    for block in function.blocks:
        if any(isinstance(i, ir.PhiInstr) and i in removed for i in block.instructions):
            block.instructions[:] = [i for i in block.instructions if i not in removed]


def _operands(instr: ir.Instruction) -> list[ir.Value]:
    if isinstance(instr, ir.PhiInstr):
        return [value for value, _ in instr.incomings]
    return list(instr.operands)
