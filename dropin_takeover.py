"""Which functions of a translation unit pycc-stencil compiles, and the module it emits for them.

A function is taken over when the front end lowered it, it has loops, and its definition is
written out in the file being compiled: in cc's preprocessed unit, outside every header by
its line markers (the unit is rewritten around it). Everything else stays with `cc`. The
emitted module defines exactly the taken-over functions: a `static` kernel gets a hidden
global name unique to its translation unit (the rewritten unit calls it through a
`static` trampoline, so C's internal linkage is kept), and whatever else the front end lowered
(helpers, tables) is made internal or dropped, so no symbol is defined twice after `ld -r`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from llvmlite import ir

from .dropin_original import keeps_static_state
from .emit.cc_contraction import fuse_like_gcc
from .emit.cc_target import TargetSpec
from .frontend.c_types import VoidType
from .frontend.line_markers import LineMarkers
from .frontend.signature import FunctionInfo, LoweredModule
from .ir_passes.core.call_graph import reachable_functions

#: storage-class words of a definition's declaration specifiers
_INLINE = re.compile(rb"\b(inline|__inline|__inline__)\b")
_STATIC = re.compile(rb"\bstatic\b")
_OPENMP = re.compile(rb"^[ \t]*#[ \t]*pragma[ \t]+omp\b", re.MULTILINE)


@dataclass(frozen=True)
class Takeover:
    """A kernel pycc-stencil compiles: its C facts and the symbol its object defines."""

    info: FunctionInfo
    symbol: str
    weak: bool = False  # `#pragma weak NAME` in the unit: a weak definition, as cc makes it
    #: a try (`dropin_original`): cc's definition of the kernel calls it, a hidden symbol
    dispatched: bool = False

    @property
    def is_static(self) -> bool:
        return self.info.is_static

    @property
    def returns_value(self) -> bool:
        return not isinstance(self.info.result, VoidType)


def unit_tag(source: str, flags: list[str]) -> str:
    """A short tag that makes the global names of `static` kernels unique per object (12 hex
    digits: `dropin_symbols` tells these names by it)."""
    digest = hashlib.sha1("\0".join([source, *flags]).encode(), usedforsecurity=False)
    return digest.hexdigest()[:12]


def global_symbols(lowered: LoweredModule, takeovers: list[Takeover], tag: str) -> dict[str, str]:
    """The symbol the emitted object refers to for each mutable global the taken-over kernels
    use: its own name, or for a `static` one the hidden alias the rewritten unit defines
    (`dropin_split.global_aliases`), since cc's object keeps a static symbol local."""
    used = sorted({name for t in takeovers for name in t.info.globals})
    return {
        name: f"__pycc_{tag}_{name}" if lowered.globals[name].is_static else name for name in used
    }


def refusal(info: FunctionInfo, text: bytes, openmp: bool = False) -> str | None:
    """Why a lowered kernel is left to cc, or None if pycc-stencil can take it over."""
    where = info.definition
    if where is None:
        return "its definition is not written out in this file (it is in a header)"
    signature = text[where.start : where.body_start]
    if openmp and _OPENMP.search(text[where.body_start : where.body_end]):
        return "OpenMP directives (-fopenmp) are compiled by cc, in parallel"
    if _INLINE.search(signature) and not _STATIC.search(signature):
        return "an inline function with external linkage (C99 inline semantics) stays with cc"
    if any(not p.name for p in info.params):
        return "a parameter has no name"
    for attribute in info.attributes:
        name = attribute_name(attribute)
        if name not in _SYMBOL_ATTRIBUTES and name not in _IGNORED_ATTRIBUTES:
            return f"attribute '{attribute}' is implemented by cc only"
    return None


def attribute_name(attribute: str) -> str:
    return attribute.partition("(")[0].strip("_")


def _attribute_argument(attribute: str) -> str:
    return attribute.partition("(")[2].rstrip(")").strip('"')


#: attributes that change the symbol, which the emitted module reproduces
_SYMBOL_ATTRIBUTES = frozenset({"weak", "visibility", "section"})
#: attributes without effect on a kernel compiled on its own (hints, checks, inlining)
_IGNORED_ATTRIBUTES = frozenset(
    "noinline noclone noipa hot cold nonnull pure const unused used leaf nothrow "
    "always_inline flatten warn_unused_result returns_nonnull".split()
)


#: pragmas that change how cc compiles every function after them
_FILE_LEVEL = re.compile(
    rb"^[ \t]*#[ \t]*pragma\s+(GCC\s+(optimize|target|push_options|visibility)|STDC\s+FENV_ACCESS)",
    re.MULTILINE,
)
_ALIAS_TARGET = re.compile(rb"\balias\s*\(\s*\"(\w+)\"")
#: `#pragma weak NAME` makes NAME weak; `#pragma weak ALIAS = NAME` makes ALIAS an alias of
#: NAME; `#pragma redefine_extname NAME SYMBOL` renames NAME's symbol
_PRAGMA_WEAK = re.compile(
    rb"^[ \t]*#[ \t]*pragma[ \t]+weak[ \t]+(\w+)[ \t]*(?:=[ \t]*(\w+))?", re.MULTILINE
)
_PRAGMA_RENAME = re.compile(rb"^[ \t]*#[ \t]*pragma[ \t]+redefine_extname[ \t]+(\w+)", re.MULTILINE)


def choose(
    lowered: LoweredModule, text: bytes, tag: str, openmp: bool = False
) -> tuple[list[Takeover], dict[str, str]]:
    """The kernels to take over, and the reason for every other lowered kernel.

    `text` is the unit the front end lowered (a `cc -E` unit in compiler mode): pragmas are
    read from it, the file-level ones only where they are written in the main file."""
    takeovers, refused = [], {}
    file_level = _main_file_match(_FILE_LEVEL, text, lowered.markers)
    aliased = {m.group(1).decode() for m in _ALIAS_TARGET.finditer(text)}
    weak = set()
    for match in _PRAGMA_WEAK.finditer(text):
        if match.group(2):
            aliased.add(match.group(2).decode())
        else:
            weak.add(match.group(1).decode())
    renamed = {m.group(1).decode() for m in _PRAGMA_RENAME.finditer(text)}
    for name in lowered.order:
        info = lowered.functions.get(name)
        if info is None or not info.is_kernel:
            continue
        reason = refusal(info, text, openmp)
        if file_level is not None:
            reason = f"'{file_level.group().decode().strip()}' in the file is implemented by cc"
            reason += " only"
        elif name in aliased:
            reason = "an alias refers to it"
        elif name in renamed:
            reason = "'#pragma redefine_extname' renames its symbol"
        if reason is not None:
            refused[name] = reason
            continue
        symbol = f"__pycc_{tag}_{name}" if info.is_static else name
        takeovers.append(Takeover(info, symbol, weak=name in weak))
    return takeovers, refused


def _main_file_match(
    pattern: re.Pattern, text: bytes, markers: LineMarkers | None
) -> re.Match | None:
    """The first match of `pattern` written in the main file (not in a header)."""
    line, counted = 1, 0  # lines counted as we go: a header may have hundreds of matches
    for match in pattern.finditer(text):
        line, counted = line + text.count(b"\n", counted, match.start()), match.start()
        if markers is None or markers.origin(line).in_main_file:
            return match
    return None


def kernel_module(
    lowered: LoweredModule,
    takeovers: list[Takeover],
    target: TargetSpec,
    hidden: bool,
    debug_info: bool,
    globals_as: dict[str, str] | None = None,
) -> str:
    """The LLVM IR text of the object pycc-stencil contributes to the translation unit;
    `globals_as` maps each mutable global to its symbol (`global_symbols`)."""
    module = lowered.module
    renames = {t.info.name: t.symbol for t in takeovers}
    for name, symbol in (globals_as or {}).items():
        renames[name] = symbol
        if symbol != name:  # the unit's hidden alias of a static global: in this module
            module.get_global(name).storage_class = "hidden"
    wanted = {t.info.name: t for t in takeovers}
    reachable = reachable_functions(module, set(wanted))
    for function in list(module.functions):
        if function.is_declaration:
            continue
        if function.name not in reachable:
            del module.globals[function.name]
        elif function.name in wanted:
            _set_symbol(function, wanted[function.name], hidden)
        elif keeps_static_state(function):  # (an external one: `static` ones are refused)
            function.blocks.clear()  # cc's definition, its state's one copy, is called
            function.metadata.clear()  # (a declaration has no `!dbg` of its own)
        elif not function.linkage.startswith("linkonce_odr"):  # polyhedral/parallel's: one copy
            function.linkage = "internal"
        if function.name in reachable:
            if target.unwind_tables:  # as gcc emits them by default
                function.attributes.add("uwtable")
            if target.function_sections and not function.section:
                function.section = f".text.{function.name}"
    if target.fp_flags:
        _add_fp_flags(module, target.fp_flags)
    if target.contraction:
        for function in module.functions:
            if function.name in reachable and not function.is_declaration:
                fuse_like_gcc(function)
    for flag in target.cf_protection:  # 8: the lowest value wins when modules are linked
        module.add_named_metadata("llvm.module.flags", [ir.IntType(32)(8), flag, ir.IntType(32)(1)])
    if target.data_sections:
        for variable in module.global_values:
            defined = getattr(variable, "initializer", None) is not None
            if isinstance(variable, ir.GlobalVariable) and defined and not variable.section:
                variable.section = f".rodata.{variable.name}"
    text = str(module)
    extra = [target.stack_protector] if target.stack_protector else []
    if target.frame_pointer:
        extra.append('"frame-pointer"="all"')
    if target.stack_clash:
        extra.append('"probe-stack"="inline-asm"')
    if extra:  # attributes llvmlite does not know (`sspreq`, string attributes): in the text
        text = re.sub(
            r"^(define [^\n]*?) nounwind",
            lambda m: f"{m.group(1)} nounwind {' '.join(extra)}",
            text,
            flags=re.MULTILINE,
        )
    if target.math_errno:  # sqrt(-1) must set errno: call libm (LLVM inlines the fast path)
        text = text.replace('@"llvm.sqrt.f64"', '@"sqrt"').replace('@"llvm.sqrt.f32"', '@"sqrtf"')
    if target.wrapv:  # -fwrapv: signed overflow wraps, so it is no longer `nsw` UB
        text = re.sub(r"\b(add|sub|mul|shl) nsw\b", r"\1", text)
    for name, symbol in renames.items():
        if symbol != name:
            pattern = re.escape(name)
            text = re.sub(rf'@"{pattern}"|@{pattern}(?![\w.$"])', f'@"{symbol}"', text)
    return text if debug_info else _strip_debug_info(text)


def _set_symbol(function: ir.Function, takeover: Takeover, hidden: bool) -> None:
    """Linkage, visibility and section as cc would give the kernel's symbol (llvmlite prints
    `linkage` verbatim after `define`, so it carries the visibility too)."""
    if takeover.dispatched:  # the user's attributes are on cc's definition
        function.linkage = "hidden"
        return
    visibility = "hidden" if hidden or takeover.is_static else ""
    linkage = "weak" if takeover.weak else ""
    for attribute in takeover.info.attributes:
        name = attribute_name(attribute)
        if name == "weak":
            linkage = "weak"
        elif name == "visibility":
            value = _attribute_argument(attribute)
            visibility = {"internal": "hidden", "default": ""}.get(value, value)
        elif name == "section":
            function.section = _attribute_argument(attribute)
    function.linkage = " ".join(x for x in (linkage, visibility) if x)


#: braces, string and character literals (skipped), and identifiers of a preprocessed unit
_TOKENS = re.compile(rb'[{}]|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*')


def used_inside_braces(text: bytes, takeovers: list[Takeover]) -> set[str]:
    """The kernels whose name appears inside braces of the unit other than their own body:
    called (or taken the address of) by another function or an initializer, so cc may inline
    or specialize them there. File-scope prototypes are outside every brace."""
    spans = {t.info.name.encode(): t.info.definition for t in takeovers}
    used, depth = set(), 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == b"{":
            depth += 1
        elif token == b"}":
            depth = max(depth - 1, 0)
        elif depth and token in spans:
            own = spans[token]
            if own is None or not own.body_start <= match.start() < own.body_end:
                used.add(token.decode())
    return used


_FP_OPERATIONS = frozenset({"fadd", "fsub", "fmul", "fdiv", "frem"})


def _add_fp_flags(module: ir.Module, flags: tuple[str, ...]) -> None:
    """Let LLVM reassociate under -ffast-math as `cc` would.
    The passes print the module (to verify it), and llvmlite caches an instruction's text:
    the cache is dropped, or the flags would be lost after any pass."""
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opname in _FP_OPERATIONS:
                    instruction.flags.extend(f for f in flags if f not in instruction.flags)
                    instruction._clear_string_cache()


_DEBUG_ATTACHMENT = re.compile(r", !dbg !\d+| !dbg !\d+")
_DEBUG_UNIT = re.compile(r"^!llvm\.dbg\.cu = .*$", re.MULTILINE)


def _strip_debug_info(text: str) -> str:
    """Without -g, the object carries no debug sections (as cc's would not)."""
    return _DEBUG_UNIT.sub("", _DEBUG_ATTACHMENT.sub("", text))
