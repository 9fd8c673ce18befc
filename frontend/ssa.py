"""On-the-fly SSA construction for C scalar locals (Braun et al., CC 2013).

The passes work on llvmlite.ir objects, which LLVM's mem2reg cannot produce, so the front end
builds SSA itself: each scalar local whose address is never taken is an SSA variable; a read
in a block without a local definition looks through the predecessors and creates phis, so a
loop counter becomes the header's induction phi. Blocks are sealed once all their
predecessors are known. Trivial phis are removed at the end (`finish`).
"""

from __future__ import annotations

from collections.abc import Hashable

from llvmlite import ir

from ..ir_passes.rewrite import replace_uses


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
        return self._read_recursive(var, block)

    def seal(self, block: ir.Block) -> None:
        for var, phi in self._incomplete.pop(block, {}).items():
            self._add_operands(var, phi)
        self._sealed.add(block)

    def _read_recursive(self, var: Hashable, block: ir.Block) -> ir.Value:
        preds = self.predecessors(block)
        if block not in self._sealed:
            value: ir.Value = self._new_phi(var, block)
            self._incomplete.setdefault(block, {})[var] = value
        elif not preds:
            value = ir.Constant(self._types[var], ir.Undefined)  # read before any assignment
        elif len(preds) == 1:
            value = self.read(var, preds[0])
        else:
            phi = self._new_phi(var, block)
            self.write(var, block, phi)
            self._add_operands(var, phi)
            value = phi
        self.write(var, block, value)
        return value

    def _new_phi(self, var: Hashable, block: ir.Block) -> ir.PhiInstr:
        name = getattr(var, "name", "")
        phi = ir.PhiInstr(block, self._types[var], name)
        block.instructions.insert(0, phi)
        if self._builder.block is block:
            self._builder.position_at_end(block)  # the builder's insertion index moved
        return phi

    def _add_operands(self, var: Hashable, phi: ir.PhiInstr) -> None:
        for pred in self.predecessors(phi.parent):
            phi.add_incoming(self.read(var, pred), pred)


def remove_trivial_phis(function: ir.Function) -> None:
    """Replace phis that merge only one value (besides themselves) by that value; drop dead phis."""
    changed = True
    while changed:
        changed = False
        for block in function.blocks:
            for phi in [i for i in block.instructions if isinstance(i, ir.PhiInstr)]:
                distinct = {id(v): v for v, _ in phi.incomings if v is not phi}
                if len(distinct) == 1:
                    (replacement,) = distinct.values()
                    replace_uses(function, {phi: replacement})
                    block.instructions.remove(phi)
                    changed = True
        used = {id(op) for b in function.blocks for i in b.instructions for op in _operands(i)}
        for block in function.blocks:
            for phi in [i for i in block.instructions if isinstance(i, ir.PhiInstr)]:
                if id(phi) not in used:
                    block.instructions.remove(phi)
                    changed = True


def _operands(instr: ir.Instruction) -> list[ir.Value]:
    if isinstance(instr, ir.PhiInstr):
        return [value for value, _ in instr.incomings]
    return list(instr.operands)
