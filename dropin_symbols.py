"""Never a symbol cc's object would not need: a program must link wherever cc's links.

gcc folds `expf(-0.25f)` once it has inlined a kernel into its caller, so its object needs
no libm and the program links without `-lm` (PolyBench's deriche); the same kernel compiled
out of line by pycc-stencil calls `expf`. The joined object is therefore checked against
cc's own object for the original file, compiled only when the joined object needs a symbol
the rest of the file does not already need.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

#: always there when cc links: the C library's and gcc's runtime helpers LLVM calls, and the
#: linker's own GOT symbol
_ALWAYS_LINKED = frozenset(
    "memcpy memmove memset __stack_chk_fail __powisf2 __powidf2 _GLOBAL_OFFSET_TABLE_".split()
)
_SHT_SYMTAB = 2
_STB_GLOBAL = 1


def undefined_symbols(data: bytes) -> set[str]:
    """The undefined global (not weak) symbols of an ELF64 little-endian relocatable object:
    those a link must find elsewhere."""
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        raise ValueError("not an ELF64 little-endian object")
    (section_offset,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, section_offset + i * entry_size)
        for i in range(count)
    ]
    names = set()
    for _, kind, _, _, offset, size, link, _, _, symbol_size in sections:
        if kind != _SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for at in range(offset + symbol_size, offset + size, symbol_size):  # 0: the null one
            name, info, _, section = struct.unpack_from("<IBBH", data, at)
            if section == 0 and info >> 4 == _STB_GLOBAL:
                start = strings + name
                names.add(data[start : data.index(b"\0", start)].decode(errors="replace"))
    return names


def foreign_symbols(joined: str, cc_part: str, cc_object: Callable[[], str | None]) -> list[str]:
    """The symbols the `joined` object needs that cc's object for the original file does not
    (`cc_object()` compiles it, or None if it cannot), sorted; [] when the joined object
    needs nothing the rest of the file (`cc_part`) does not already need."""
    needed = _undefined_in(joined) - _undefined_in(cc_part) - _ALWAYS_LINKED
    if not needed:
        return []
    original = cc_object()
    if original is None:
        return sorted(needed)
    return sorted(needed - _undefined_in(original))


def _undefined_in(path: str) -> set[str]:
    with open(path, "rb") as handle:
        return undefined_symbols(handle.read())
