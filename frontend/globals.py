"""Mutable file-scope variables: memory outside the function, referred to by its own symbol.

A kernel that reads or writes a global (`double u[N][M];`, `extern double a[];`, `static int
count;`) must touch the very storage the rest of the program sees, so the module gets an
external declaration of the symbol, never a copy. Whoever compiles the module provides the
storage: the linker in compiler mode (cc's object defines the global; a `static` one is
reached through a hidden alias, see dropin_split.py), the check harness for the JIT (a
guarded buffer, see runtime/globals.py).
"""

from __future__ import annotations

import clang.cindex as ci
from llvmlite import ir

from ..ir_passes.core.rewrite import opaque
from . import c_types as ct
from .clang_ast import location
from .clang_types import ctype_of
from .declarations import aligned_attribute, type_alignment
from .signature import GlobalInfo
from .unsupported import Unsupported


def declare_global(
    module: ir.Module,
    decl: ci.Cursor,
    where: ci.Cursor,
    file_scope: list[ci.Cursor],
    read_only: bool = False,
) -> GlobalInfo:
    """Declare the global `decl` refers to in `module` (once per symbol) and describe it;
    `file_scope` are its declarations at file scope (`extern double a[]; double a[13];`: the
    size and whether the file defines it come from all of them). Raises Unsupported for state
    the module cannot share with the program as it is."""
    name = decl.spelling
    if decl.tls_kind != ci.TLSKind.NONE:
        raise Unsupported(f"thread-local variable '{name}' is not supported", where)
    definitions = [d for d in file_scope if _defines(d)]
    known = next((d for d in file_scope if _complete(d.type)), decl)
    t = ctype_of(known.type, where)
    _check_type(name, t, where)
    info = GlobalInfo(
        name=name,
        ctype=t,
        is_static=decl.linkage == ci.LinkageKind.INTERNAL,
        defined=bool(definitions),
        location=location(known),
        read_only=read_only,
    )
    if name not in module.globals:
        g = ir.GlobalVariable(module, _storage_type(t), name=name)
        opaque(g)  # no initializer: an external declaration of the symbol
        alignment = max([type_alignment(known.type), *map(aligned_attribute, file_scope)])
        g.align = max(alignment, ct.alignment_of(t))
    return info


def _defines(decl: ci.Cursor) -> bool:
    """A definition, tentative (`double a[100];`, which libclang does not call one) or not."""
    return decl.is_definition() or decl.storage_class != ci.StorageClass.EXTERN


def _complete(t: ci.Type) -> bool:
    return t.get_canonical().kind != ci.TypeKind.INCOMPLETEARRAY


def _check_type(name: str, t: ct.CType, where: ci.Cursor) -> None:
    if isinstance(t, ct.PointerType):
        return  # a grid the program allocates, `stderr`: the pointer is read and passed on
    scalar = t.scalar if isinstance(t, ct.ArrayType) else t
    if isinstance(scalar, ct.PointerType):
        raise Unsupported(f"global array of pointers '{name}' is not supported", where)
    if isinstance(scalar, ct.StructType):
        if any(isinstance(leaf.ctype, ct.PointerType) for leaf in ct.scalar_leaves(scalar)):
            raise Unsupported(
                f"global struct '{name}' with a pointer member is not supported", where
            )
    elif not isinstance(scalar, (ct.IntType, ct.FloatType)):
        raise Unsupported(f"global variable '{name}' of type {t} is not supported", where)
    if isinstance(t, ct.ArrayType) and not ct.has_fixed_size(t.element):
        raise Unsupported(f"global array '{name}' has rows of unknown size", where)


def _storage_type(t: ct.CType) -> ir.Type:
    """The LLVM type of the declaration: `[0 x T]` for an array of unknown size."""
    if isinstance(t, ct.ArrayType) and t.length is None:
        return ir.ArrayType(t.element.llvm(), 0)
    return t.llvm()
