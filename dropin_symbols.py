"""Never a symbol cc's object would not need: a program must link wherever cc's links.

gcc folds `expf(-0.25f)` once it has inlined a kernel into its caller, so its object needs
no libm and the program links without `-lm` (PolyBench's deriche); the same kernel compiled
out of line by pycc-stencil calls `expf`. So every symbol the joined object needs must be
needed by the rest of the file already, be one the link always finds (the C library cc
links, gcc's runtime helpers, libgomp when the flags ask for OpenMP), or be needed by cc's
own object for the original file, which is compiled only when it is the last question left.
A symbol of libm is fine when cc's object needs libm too (gcc inlines `floor`, LLVM calls it:
the program links libm for cc's `expf` anyway).
"""

from __future__ import annotations

import functools
import re
import shutil
import struct
import subprocess
from collections.abc import Callable, Sequence

#: gcc's runtime helpers LLVM calls (libgcc, always linked) and the linker's GOT symbol
_ALWAYS_LINKED = frozenset("__powisf2 __powidf2 _GLOBAL_OFFSET_TABLE_".split())
#: flags with which gcc links libgomp (`GOMP_*`, `omp_*`), as its own parallel loops need
_OPENMP_FLAGS = ("-fopenmp", "-ftree-parallelize-loops=")
_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_STB_GLOBAL, _STB_WEAK = 1, 2


def foreign_symbols(
    joined: str,
    cc_part: str,
    cc_object: Callable[[], str | None],
    cc: str,
    flags: Sequence[str],
) -> list[str]:
    """The symbols the `joined` object (or assembly, with `-S`) needs that cc's object for
    the original file (`cc_object()` compiles it, None if it cannot) would not, sorted."""
    needed = _undefined_in(joined, cc) - _undefined_in(cc_part, cc) - _ALWAYS_LINKED
    if any(f.startswith(_OPENMP_FLAGS) for f in flags):
        needed = {s for s in needed if not s.startswith(("GOMP_", "omp_"))}
    needed -= library_symbols(cc, "libc.so.6")
    if not needed:
        return []
    original = cc_object()
    if original is None:
        return sorted(needed)
    needed -= _undefined_in(original, cc)
    libm = library_symbols(cc, "libm.so.6")
    if libm & _undefined_in(original, cc):
        needed -= libm
    return sorted(needed)


@functools.cache
def library_symbols(cc: str, name: str) -> frozenset[str]:
    """The functions and variables the shared library `name` (as `cc` finds it when linking)
    defines; empty if it cannot be found, so that nothing is assumed."""
    try:
        path = subprocess.run(
            [cc, f"-print-file-name={name}"], capture_output=True, text=True, timeout=60
        ).stdout.strip()
        with open(path, "rb") as handle:
            return frozenset(symbols(handle.read(), defined=True))
    except (OSError, ValueError, subprocess.SubprocessError):
        return frozenset()


#: the symbols pycc-stencil gives a unit's statics: `__pycc_`, the unit's tag (12 hex digits,
#: `dropin_takeover.unit_tag`), `_`, the name (not the user's own `__pycc_ref_f`)
_OWN_SYMBOL = re.compile(r"__pycc_[0-9a-f]{12}_")


def localize_own_symbols(path: str) -> None:
    """Make pycc-stencil's own global symbols of a joined object (`__pycc_<tag>_*`: a static
    kernel's, which cc's trampoline calls, a static global's alias) local, as cc keeps what
    they stand for: one file built into two objects of one link (a plugin linked twice)
    would define them twice. Without `objcopy`, or if it fails, they stay as they are."""
    with open(path, "rb") as handle:
        own = sorted(s for s in symbols(handle.read(), defined=True) if _OWN_SYMBOL.match(s))
    objcopy = shutil.which("objcopy")
    if own and objcopy:
        options = [f"--localize-symbol={name}" for name in own]
        subprocess.run([objcopy, *options, path], capture_output=True, check=False)


def undefined_symbols(data: bytes) -> set[str]:
    """The undefined global (not weak) symbols of an ELF relocatable object: those a link
    must find elsewhere."""
    return symbols(data, defined=False)


def symbols(data: bytes, defined: bool) -> set[str]:
    """The global symbols an ELF64 little-endian file defines (`defined`; weak ones too, and
    from its dynamic symbol table if it has one) or needs (not weak ones only)."""
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        raise ValueError("not an ELF64 little-endian file")
    (section_offset,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, section_offset + i * entry_size)
        for i in range(count)
    ]
    bindings = (_STB_GLOBAL, _STB_WEAK) if defined else (_STB_GLOBAL,)
    names = set()
    for _, kind, _, _, offset, size, link, _, _, symbol_size in sections:
        if kind not in (_SHT_SYMTAB, _SHT_DYNSYM):
            continue
        strings = sections[link][4]
        for at in range(offset + symbol_size, offset + size, symbol_size):  # 0: the null one
            name, info, _, section = struct.unpack_from("<IBBH", data, at)
            if (section != 0) == defined and info >> 4 in bindings:
                start = strings + name
                names.add(data[start : data.index(b"\0", start)].decode(errors="replace"))
    return names


def _undefined_in(path: str, cc: str) -> set[str]:
    """The undefined symbols of an object file, or of the object an assembly file makes."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:4] != b"\x7fELF":
        subprocess.run(
            [cc, "-c", "-x", "assembler", path, "-o", path + ".o"], check=True, capture_output=True
        )
        return _undefined_in(path + ".o", cc)
    return undefined_symbols(data)
