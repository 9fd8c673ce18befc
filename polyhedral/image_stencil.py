"""Image kernels: the shape a back end can tile into a scratchpad without changing the kernel.

An image kernel (the C66x dissertation's Appendix A, and most filters of legacy C) is one
2-deep loop nest `for i in [top, H - bottom) for j in [left, W - right)` over images of W
columns (row-major, row stride W elements, the same element type), reading its inputs at
constant offsets `in[i + di][j + dj]` and writing each output at `[i][j]` only, no array both
read and written, nothing else with an effect. Then the kernel, called on a W' x H' view of
a tile (its own parameters W and H set to the view's size), computes exactly the view's
interior: a tile is `(tile rows + top + bottom) x (tile columns + left + right)` elements of
which the kernel reads each input's halo (the largest offsets, which never exceed the
margins) and writes the interior. The C66x back end runs such kernels tile by tile out of L2
SRAM through the EDMA (`runtime/c66x/pycc_tiles.c`).

The facts come from the SCoP (`polyhedral.scop`): its domain gives the margins (checked equal
to the box they describe), its access relations the offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl
from llvmlite import ir
from llvmlite.ir import instructions as ins

from .scop import Scop, extract_scops


@dataclass(frozen=True)
class Halo:
    """Rows above/below and columns left/right of an output an input is read at."""

    up: int
    down: int
    left: int
    right: int


@dataclass(frozen=True)
class ImageKernel:
    """What tiling a function needs to know (parameters by their IR names)."""

    function: str
    width: str  # W: the parameter giving the images' columns (and row stride)
    height: str  # H: the parameter giving their rows
    top: int
    bottom: int
    left: int
    right: int
    inputs: dict[str, Halo]  # pointer parameter -> where it is read
    outputs: list[str]  # pointer parameters written
    element_bytes: int


_BOUND = re.compile(r"^(\w+) (>=|<) \(?([^()]+?)\)?$")


def image_kernel(function: ir.Function) -> ImageKernel | str:
    """The image-kernel facts of `function`, or why it is not one."""
    scops, rejected = extract_scops(function)
    if len(scops) != 1:
        return rejected[0].reason if rejected else "no loop nest of affine accesses"
    scop = scops[0]
    if len(scop.statements) != 1 or len(scop.statements[0].iterators) != 2:
        return "not one statement in a 2-deep loop nest"
    if _other_effects(function, scop):
        return "the function does more than its loop nest (a call or another store)"
    statement = scop.statements[0]
    outer, inner = statement.iterators
    bounds = _bounds(statement.constraints, outer, inner)
    if isinstance(bounds, str):
        return bounds
    (top, height, bottom), (left, width, right) = bounds
    for name in (height, width):
        if not isinstance(scop.params.get(name), ir.Argument):
            return f"the loop bound '{name}' is not a parameter"
    box = f"{top} <= {outer} < {height} - {bottom} and {left} <= {inner} < {width} - {right}"
    params = ", ".join(scop.params)
    wanted = isl.Set(f"[{params}] -> {{ [{outer}, {inner}] : {box} }}")
    constraints = " and ".join(statement.constraints)
    actual = isl.Set(f"[{params}] -> {{ [{outer}, {inner}] : {constraints} }}")
    if not wanted.is_equal(actual):
        return "the iteration domain is not a box inside the images' margins"
    arrays = _arrays(scop, statement, width, (outer, inner), params)
    if isinstance(arrays, str):
        return arrays
    inputs, outputs, element = arrays
    for name, halo in inputs.items():
        if halo.up > top or halo.down > bottom or halo.left > left or halo.right > right:
            return f"'{name}' is read beyond the loops' margins"
    pointers = {a.name for a in function.args if isinstance(a.type, ir.PointerType)}
    if pointers != set(inputs) | set(outputs):
        return "a pointer parameter is not one of the images"
    return ImageKernel(
        function.name,
        scop.params[width].name,
        scop.params[height].name,
        top,
        bottom,
        left,
        right,
        inputs,
        outputs,
        element,
    )


def _other_effects(function: ir.Function, scop: Scop) -> bool:
    writes = {a.instruction for s in scop.statements for a in s.accesses if a.is_write}
    for block in function.blocks:
        for instr in block.instructions:
            if isinstance(instr, ins.StoreInstr) and instr not in writes:
                return True
            if isinstance(instr, ins.CallInstr) and not instr.callee.name.startswith("llvm.dbg"):
                return True
    return False


def _bounds(constraints: list[str], outer: str, inner: str):
    """((top, H, bottom), (left, W, right)) from `i >= c`, `i < (H - c)` constraints."""
    found: dict[tuple[str, str], str] = {}
    for text in constraints:
        match = _BOUND.match(text)
        if match is None or match.group(1) not in (outer, inner):
            return f"the loop bound '{text}' is not a margin of the images"
        found[match.group(1), match.group(2)] = match.group(3)
    out = []
    for axis in (outer, inner):
        low, high = found.get((axis, ">=")), found.get((axis, "<"))
        if low is None or high is None or not re.fullmatch(r"\d+", low):
            return "the loops do not start at a constant margin"
        size, _, margin = high.partition(" - ")
        if not re.fullmatch(r"[A-Za-z_]\w*", size) or not re.fullmatch(r"\d*", margin):
            return "the loops do not end at a parameter minus a margin"
        out.append((int(low), size, int(margin or 0)))
    return out[0], out[1]


def _arrays(scop: Scop, statement, width: str, iterators: tuple[str, str], params: str):
    """({input: halo}, [outputs], element bytes) or why the accesses do not fit."""
    reads: dict[str, list[tuple[int, int]]] = {}
    writes: set[str] = set()
    elements = set()
    for access in statement.accesses:
        array = access.array
        if array.sizes != [width] or not isinstance(array.base, ir.Argument):
            return f"'{array.name}' is not a parameter image of '{width}' columns"
        elements.add(_bytes(array.element))
        offset = _offset(access.subscripts, iterators, params)
        if offset is None:
            return f"'{array.name}' is not accessed at a constant offset"
        if access.is_write:
            if offset != (0, 0):
                return f"'{array.name}' is written away from the output point"
            writes.add(array.base.name)
        else:
            reads.setdefault(array.base.name, []).append(offset)
    if writes & set(reads):
        return "an image is both read and written"
    if len(elements) != 1 or None in elements:
        return "the images do not share one element type"
    halos = {
        name: Halo(
            max(0, -min(d for d, _ in offs)),
            max(0, max(d for d, _ in offs)),
            max(0, -min(d for _, d in offs)),
            max(0, max(d for _, d in offs)),
        )
        for name, offs in reads.items()
    }
    return halos, sorted(writes), elements.pop()


def _offset(subscripts: list[str], iterators: tuple[str, str], params: str):
    """(di, dj) when the subscripts are `i + di`, `j + dj` with constants; else None."""
    i, j = iterators
    deltas = isl.PwMultiAff(
        f"[{params}] -> {{ [{i}, {j}] -> [({subscripts[0]}) - {i}, ({subscripts[1]}) - {j}] }}"
    )
    values = []
    for k in range(2):
        delta = deltas.get_pw_aff(k)
        if not delta.is_cst() or delta.n_piece() != 1:
            return None
        values.append(delta.as_aff().get_constant_val().to_python())
    return values[0], values[1]


def _bytes(t: ir.Type) -> int | None:
    if isinstance(t, ir.FloatType):
        return 4
    if isinstance(t, ir.DoubleType):
        return 8
    if isinstance(t, ir.IntType) and t.width in (8, 16, 32, 64):
        return t.width // 8
    return None
