"""Type-based alias analysis tags (`!tbaa`) on the loads and stores of C objects.

Under C's effective-type rules (C11 6.5p7) an `int` lvalue never reads a `double` object, so a
store to `a[i][j]` (double) cannot change `n` read through an `int *`; without saying so, LLVM
must reload every such value after each store, which costs vectorization and hoisting that
clang's IR allows. The tags follow clang's for C: one scalar type node per type, signed and
unsigned variants sharing one (C allows that access), every character type the "omnipotent
char" that aliases everything, every pointer type one "any pointer" node, all under the root
"Simple C/C++ TBAA". Types without a node of their own get no tag (LLVM then assumes any
alias). gcc and clang drop the assumption under `-fno-strict-aliasing` (and gcc below `-O2`):
`strip_tbaa` removes the tags there, so programs that type-pun stay as cc compiles them.

Unions (not lowered yet): gcc documents reading another member than the one last written as
allowed, and clang gives every access through a union member the "omnipotent char" tag; an
access through a member must get `type_name`'s char tag or none, never its scalar type's
(tests/test_tbaa.py has the union pun that would then break).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir_passes.core.memory import OMNIPOTENT_CHAR
from . import c_types as ct

_I64 = ir.IntType(64)
_ROOT = "Simple C/C++ TBAA"
_CHAR = OMNIPOTENT_CHAR
_POINTER = "any pointer"


class TypeTags:
    """The TBAA nodes of one module, created on first use."""

    def __init__(self, module: ir.Module):
        self.module = module
        self._nodes: dict[str, ir.MDValue] = {}
        self._tags: dict[str, ir.MDValue] = {}

    def tag(self, t: ct.CType) -> ir.MDValue | None:
        """The access tag of a load or store of a `t` object, None if `t` has none."""
        name = type_name(t)
        if name is None:
            return None
        if name not in self._tags:
            node = self._node(name)
            self._tags[name] = self.module.add_metadata([node, node, _I64(0)])
        return self._tags[name]

    def _node(self, name: str) -> ir.MDValue:
        if name not in self._nodes:
            operands: list = [ir.MetaDataString(self.module, name)]
            if name != _ROOT:  # the root has no parent; char's is the root, everything's char
                operands += [self._node(_ROOT if name == _CHAR else _CHAR), _I64(0)]
            self._nodes[name] = self.module.add_metadata(operands)
        return self._nodes[name]


def type_name(t: ct.CType) -> str | None:
    """clang's TBAA type name for an object of type `t` (C rules), None for no tag."""
    if isinstance(t, ct.PointerType):
        return _POINTER
    if isinstance(t, ct.FloatType):
        return str(t)
    if isinstance(t, ct.IntType):
        if t.is_bool:
            return "_Bool"
        if t.bits == 8:
            return _CHAR
        return t.name.replace("unsigned ", "").replace("signed ", "")
    return None


def tag_access(tags: TypeTags | None, instruction: ir.Instruction, t: ct.CType) -> None:
    """Attach the tag of a `t` access to a load or store (nothing if `tags` is None)."""
    if tags is None:
        return
    tag = tags.tag(t)
    if tag is not None:
        instruction.set_metadata("tbaa", tag)


def strip_tbaa(module: ir.Module) -> None:
    """Drop every `!tbaa` attachment: the code may then type-pun (`-fno-strict-aliasing`).
    llvmlite caches an instruction's text, so the cache is dropped too."""
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.metadata.pop("tbaa", None) is not None:
                    instruction._clear_string_cache()


def strict_aliasing(flags: list[str], default: bool = True) -> bool:
    """Whether C's aliasing rules may be assumed: the last of `-f[no-]strict-aliasing`."""
    chosen = [f for f in flags if f in ("-fstrict-aliasing", "-fno-strict-aliasing")]
    return chosen[-1] == "-fstrict-aliasing" if chosen else default
