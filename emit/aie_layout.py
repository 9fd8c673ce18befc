"""Data layouts (Vyasa's layout search, F10): an array the kernel walks along a dimension that
is not C's innermost is packed on the host with that dimension innermost, so the lanes of a
vector load or store are one aligned 256-bit row (Vyasa's `YXK` output and `(K/8)..(8)`
weights for a layer vectorized along its output channels k).

An array's dimensions come from its accesses: the strides of the loops that walk it (which
nest, each a multiple of the next: C's row lengths) down to the element. The packed array
holds the same elements with the dimensions in another order; `pack_functions` writes the
host's pack and unpack routines, `host_wrapper` a function with the C function's signature
that packs, runs the kernel on the packed arrays and unpacks its output, which is what the
check and the testbench call. Packing reads whole rows of the outermost dimension the kernel
touches: the rows C declares, not past them, where the accesses come from C array indexing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod

from .aie_convolution import ELEMENT_BYTES, Convolution, NotAConvolution, Stream, Tap

#: the kernel on packed arrays is FUNCTION_packed (FUNCTION packs, calls it and unpacks)
PACKED_SUFFIX = "_packed"
#: the C type of each element type
C_TYPES = {"int16": "int16_t", "int32": "int32_t", "float": "float"}


@dataclass(frozen=True)
class Dimension:
    stride: int  # bytes, as C stores the array
    size: int
    name: str  # the output loop that walks it (its counter), else d0, d1, ...


@dataclass(frozen=True)
class Layout:
    """Array `base` with its dimensions (C's order, outermost first) stored in `order`."""

    base: str
    element: str  # int16, int32 or float
    dims: tuple[Dimension, ...]
    order: tuple[int, ...]  # indices of `dims`, outermost first, as the kernel stores them

    @property
    def elements(self) -> int:
        return prod(d.size for d in self.dims)

    @property
    def packed_strides(self) -> tuple[int, ...]:
        """Bytes per step of each dimension (C's index) in the packed array."""
        strides = [0] * len(self.dims)
        stride = ELEMENT_BYTES[self.element]
        for j in reversed(self.order):
            strides[j] = stride
            stride *= self.dims[j].size
        return tuple(strides)

    def notation(self, order: tuple[int, ...] | None = None) -> str:
        """The dimensions outermost first, named by their loops (Vyasa writes `YXK`)."""
        return " ".join(self.dims[j].name for j in (self.order if order is None else order))

    def indices(self, address: int) -> list[int]:
        """The index along each dimension of the element at byte `address` (C's layout)."""
        found = []
        for dim in self.dims:
            index, address = divmod(address, dim.stride)
            found.append(index)
        return found

    def packed(self, address: int) -> int:
        """The byte address in the packed array of the element at `address` in C's."""
        return sum(i * s for i, s in zip(self.indices(address), self.packed_strides))


def innermost_along_vector(conv: Convolution) -> Convolution:
    """`conv` (its vector loop innermost) with every array that loop walks at a stride other
    than one element (the output, or the moving operand of a product) packed with the
    dimension it walks innermost; NotAConvolution where the accesses have no dimensions."""
    width = ELEMENT_BYTES[conv.element]
    streams = [conv.output] + [
        s for t in conv.taps for s in (t.weight, t.data) if isinstance(s, Stream)
    ]
    bases = [s.base for s in streams if s.strides[-1] not in (0, width)]
    layouts = list(conv.layouts)
    for base in dict.fromkeys(bases):
        layout = _layout(conv, base, [s for s in streams if s.base == base])
        layouts.append(layout)
        conv = _repacked(conv, layout)
    return replace(conv, layouts=tuple(layouts))


def _layout(conv: Convolution, base: str, streams: list[Stream]) -> Layout:
    width = ELEMENT_BYTES[conv.element]
    strides = sorted({s for stream in streams for s in stream.strides if s}, reverse=True)
    for stream in streams:
        walking = [s for s in stream.strides if s]
        if min(walking, default=1) < 0 or len(set(walking)) < len(walking):
            raise NotAConvolution(f"'{base}' is walked backwards, or by two loops alike")
    if strides[-1] != width:
        strides.append(width)
    for outer, inner in zip(strides, strides[1:]):
        if outer % inner:
            raise NotAConvolution(
                f"'{base}' is walked at strides of {outer} and {inner} bytes, which do not "
                "nest (no array dimensions to reorder)"
            )
    if min(_first(s, conv) for s in streams) < 0:
        raise NotAConvolution(f"'{base}' is read before its first element")
    last = max(_first(s, conv, last=True) for s in streams)
    sizes = [last // strides[0] + 1] + [o // i for o, i in zip(strides, strides[1:])]
    names = {}
    for stream in streams:
        for loop, stride in zip(conv.loops, stream.strides):
            names.setdefault(stride, loop.name)
    dims = tuple(
        Dimension(stride, size, names.get(stride) or f"d{j}")
        for j, (stride, size) in enumerate(zip(strides, sizes))
    )
    walked = strides.index(streams[0].strides[-1])
    order = tuple(j for j in range(len(dims)) if j != walked) + (walked,)
    return Layout(base, conv.element, dims, order)


def _first(stream: Stream, conv: Convolution, last: bool = False) -> int:
    """The byte address of the stream's element at the first iteration (or the last)."""
    return stream.offset + sum(
        s * (lp.start + (lp.trips - 1 if last else 0)) for s, lp in zip(stream.strides, conv.loops)
    )


def _repacked(conv: Convolution, layout: Layout) -> Convolution:
    """`conv` with the streams of `layout.base` addressing the packed array."""
    packed = layout.packed_strides
    where = {d.stride: j for j, d in enumerate(layout.dims)}

    def moved(stream: Stream) -> Stream:
        if stream.base != layout.base:
            return stream
        indices = layout.indices(_first(stream, conv))
        for loop, stride in zip(conv.loops, stream.strides):
            j = where.get(stride)
            # the outermost dimension (j 0) is sized from the accesses: it cannot be overrun
            if stride and j and indices[j] + loop.trips > layout.dims[j].size:
                raise NotAConvolution(
                    f"'{layout.base}' is read across the end of a row (an index runs past "
                    "its dimension)"
                )
        strides = tuple(packed[where[s]] if s else 0 for s in stream.strides)
        first = sum(i * s for i, s in zip(indices, packed))
        offset = first - sum(s * lp.start for s, lp in zip(strides, conv.loops))
        return Stream(stream.base, offset, strides)

    def tap(t: Tap) -> Tap:
        weight = moved(t.weight) if isinstance(t.weight, Stream) else t.weight
        return Tap(weight, moved(t.data))

    return replace(conv, output=moved(conv.output), taps=[tap(t) for t in conv.taps])


def pack_functions(function: str, layout: Layout) -> list[str]:
    """C++ of `FUNCTION_pack_BASE(from, to)` (C's layout to the packed one) and
    `FUNCTION_unpack_BASE` (back)."""
    ctype, width = C_TYPES[layout.element], ELEMENT_BYTES[layout.element]
    counters = [f"i{j}" for j in range(len(layout.dims))]

    def index(strides) -> str:
        return " + ".join(f"{c} * {s // width}" for c, s in zip(counters, strides))

    c_index = index(d.stride for d in layout.dims)
    packed_index = index(layout.packed_strides)
    lines = []
    for name, to, source in (("pack", packed_index, c_index), ("unpack", c_index, packed_index)):
        lines += [
            f'extern "C" void {function}_{name}_{layout.base}(const void *from, void *to) {{',
            f"  const {ctype} *a = (const {ctype} *)from;",
            f"  {ctype} *b = ({ctype} *)to;",
        ]
        indent = "  "
        for counter, dim in zip(counters, layout.dims):
            lines.append(f"{indent}for (int {counter} = 0; {counter} < {dim.size}; {counter}++)")
            indent += "  "
        lines += [f"{indent}b[{to}] = a[{source}];", "}"]
    return lines


def host_wrapper(
    conv: Convolution, kernel: str, signature: list[tuple[str, str]], elements: dict[str, int]
) -> str:
    """The host side of a kernel on packed arrays: the pack and unpack routines and a
    function with the C function's name and signature that packs each array into a buffer of
    `elements[base]` (the kernel's vector loads may reach past the last element), runs
    `kernel` and unpacks the output. Not for the AI Engine (whose compiler defines
    __AIENGINE__): there the kernel's ports take the packed arrays."""
    by_base = {layout.base: layout for layout in conv.layouts}
    lines = ["", "#ifndef __AIENGINE__", "/* the host side: packing, and the C function */"]
    for layout in conv.layouts:
        lines += pack_functions(conv.function, layout)
    parameters = ", ".join(f"{t} {n}" for t, n in signature)
    lines.append(f'extern "C" void {conv.function}({parameters}) {{')
    for layout in conv.layouts:
        name = f"pycc_packed_{layout.base}"
        lines += [
            f"  alignas(64) static {C_TYPES[layout.element]} {name}[{elements[layout.base]}];",
            f"  {conv.function}_pack_{layout.base}({layout.base}, {name});",
        ]
    arguments = ", ".join(f"pycc_packed_{n}" if n in by_base else n for _, n in signature)
    lines.append(f"  {kernel}({arguments});")
    if conv.output.base in by_base:
        base = conv.output.base
        lines.append(f"  {conv.function}_unpack_{base}(pycc_packed_{base}, {base});")
    lines += ["}", "#endif", ""]
    return "\n".join(lines)
