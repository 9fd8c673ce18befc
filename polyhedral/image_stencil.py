"""Image kernels: the shape a back end can tile into a scratchpad without changing the kernel.

An image kernel (the C66x dissertation's Appendix A, most filters of legacy C, and their
pipelines) is one or several 2-deep loop nests (stages), each `for i in [top, H - bottom)
for j in [left, W - right)` with its own margins, over images of W columns (row-major, row
stride W elements, one element type), reading at constant offsets `a[i + di][j + dj]` and
writing its outputs at `[i][j]` only, values that do not depend on i, j, W or H (a tile's
view has other ones); an image another stage reads is written by one stage
before it, and read only where that stage wrote it; nothing else has an effect. Then the
kernel, called on a view of a tile (its W and H set to the view's size), computes the
tile's points as on the whole images, if the view reaches far enough around the tile:

- a stage is needed around the tile as far as later stages read it (`needed`, chained back
  from the last stage; 0 for one that only the tile's points are needed of);
- the view reaches, on each side, the farthest a stage is needed plus that stage's margin (its
  loops skip the margin of whatever view they run on); since a stage reads another only where
  that one writes, this is the widest margin of the last stages;
- an input is transferred as far around the tile as a stage reads it where that stage is
  needed (its halo: for a single stage, the access offsets, which may be less than the
  margins: GaussianX7 reads no other row but skips 3).

The C66x back end runs such kernels tile by tile out of L2 SRAM through the EDMA
(`runtime/c66x/pycc_tiles.c`). The facts come from the SCoP (`polyhedral.scop`): its domains
give the margins (checked equal to the boxes they describe), its access relations the offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl
from llvmlite import ir
from llvmlite.ir import instructions as ins

from .scop import Scop, Statement, extract_scops


@dataclass(frozen=True)
class Sides:
    """Rows above and below, columns left and right (a margin, a halo, a reach)."""

    top: int = 0
    bottom: int = 0
    left: int = 0
    right: int = 0

    def widest(self, other: Sides) -> Sides:
        return Sides(*(max(a, b) for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self) -> tuple[int, int, int, int]:
        return self.top, self.bottom, self.left, self.right


@dataclass(frozen=True)
class ImageKernel:
    """What tiling a function needs to know (parameters by their IR names)."""

    function: str
    width: str  # W: the parameter giving the images' columns (and row stride)
    height: str  # H: the parameter giving their rows
    region: Sides  # the margins of the region where outputs are written
    view: Sides  # how far around a tile the kernel must run
    inputs: dict[str, Sides]  # images only read -> how far around a tile they are read
    outputs: dict[str, Sides]  # images written -> the margins they are written inside
    element_bytes: int
    stages: tuple[Stage, ...]  # the loop nests in program order (what a cache model replays)


_BOUND = re.compile(r"^(\w+) (>=|<) \(?([^()]+?)\)?$")


@dataclass(frozen=True)
class Stage:
    """One loop nest: its margins, its reads in program order, the images it writes."""

    margins: Sides
    reads: tuple[tuple[str, int, int], ...]  # (image, di, dj)
    writes: frozenset[str]


def image_kernel(function: ir.Function) -> ImageKernel | str:
    """The image-kernel facts of `function`, or why it is not one."""
    scops, rejected = extract_scops(function)
    if len(scops) != 1:
        return rejected[0].reason if rejected else "no loop nest of affine accesses"
    scop = scops[0]
    if _other_effects(function, scop):
        return "the function does more than its loop nests (a call or another store)"
    params = ", ".join(scop.params)
    stages, sizes, elements = [], set(), set()
    for statement in scop.statements:
        stage = _stage(scop, statement, params, sizes, elements)
        if isinstance(stage, str):
            return stage
        stages.append(stage)
    if len(sizes) != 1:
        return "the stages do not share the images' width and height"
    height, width = sizes.pop()
    if len(elements) != 1 or None in elements:
        return "the images do not share one element type"
    found = _reach(stages)
    if isinstance(found, str):
        return found
    view, inputs, outputs = found
    pointers = {a.name for a in function.args if isinstance(a.type, ir.PointerType)}
    if pointers != set(inputs) | set(outputs):
        return "a pointer parameter is not one of the images"
    region = Sides(*(min(m) for m in zip(*(o.astuple() for o in outputs.values()))))
    return ImageKernel(
        function.name,
        scop.params[width].name,
        scop.params[height].name,
        region,
        view,
        inputs,
        outputs,
        elements.pop(),
        tuple(stages),
    )


def _stage(scop: Scop, statement: Statement, params: str, sizes: set, elements: set):
    """One statement as a stage, or why it is not one."""
    if len(statement.iterators) != 2:
        return "not a 2-deep loop nest"
    outer, inner = statement.iterators
    bounds = _bounds(statement.constraints, outer, inner)
    if isinstance(bounds, str):
        return bounds
    (top, height, bottom), (left, width, right) = bounds
    for name in (height, width):
        if not isinstance(scop.params.get(name), ir.Argument):
            return f"the loop bound '{name}' is not a parameter"
    sizes.add((height, width))
    box = f"{top} <= {outer} < {height} - {bottom} and {left} <= {inner} < {width} - {right}"
    wanted = isl.Set(f"[{params}] -> {{ [{outer}, {inner}] : {box} }}")
    constraints = " and ".join(statement.constraints)
    actual = isl.Set(f"[{params}] -> {{ [{outer}, {inner}] : {constraints} }}")
    if not wanted.is_equal(actual):
        return "an iteration domain is not a box inside the images' margins"
    sizes_and_position = {scop.params[height], scop.params[width], *statement.phis}
    for access in statement.accesses:
        if access.is_write and _depends_on(access.instruction.operands[0], sizes_and_position):
            return (
                f"the value written to '{access.array.name}' depends on the position or the "
                "images' size (it would change on a tile)"
            )
    reads, writes = [], set()
    for access in statement.accesses:
        array = access.array
        if array.sizes != [width] or not isinstance(array.base, ir.Argument):
            return f"'{array.name}' is not a parameter image of '{width}' columns"
        elements.add(_bytes(array.element))
        offset = _offset(access.subscripts, (outer, inner), params)
        if offset is None:
            return f"'{array.name}' is not accessed at a constant offset"
        if access.is_write:
            if offset != (0, 0):
                return f"'{array.name}' is written away from the output point"
            writes.add(array.base.name)
        else:
            di, dj = offset
            if -di > top or di > bottom or -dj > left or dj > right:
                return f"'{array.name}' is read beyond the loops' margins"
            reads.append((array.base.name, di, dj))
    if not writes:
        return "a loop nest writes no image"
    return Stage(Sides(top, bottom, left, right), tuple(reads), frozenset(writes))


def _reach(stages: list[Stage]):
    """(view, {input: halo}, {output: margins}) from the stages, or why they do not chain."""
    writer: dict[str, int] = {}
    for k, stage in enumerate(stages):
        for image in stage.writes:
            if image in writer:
                return f"'{image}' is written by two loop nests"
            writer[image] = k
    needed = [Sides() for _ in stages]
    halos: dict[str, Sides] = {}
    for k in reversed(range(len(stages))):
        n = needed[k]
        for image, di, dj in stages[k].reads:
            reach = Sides(max(0, n.top - di), max(0, n.bottom + di),
                          max(0, n.left - dj), max(0, n.right + dj))  # fmt: skip
            if image not in writer:
                halos[image] = halos.get(image, Sides()).widest(reach)
                continue
            q = writer[image]
            m, own = stages[q].margins, stages[k].margins
            if q >= k:
                return f"'{image}' is read before (or where) it is written"
            if (
                m.top > own.top + di
                or m.bottom > own.bottom - di
                or (m.left > own.left + dj or m.right > own.right - dj)
            ):
                return f"'{image}' is read where no loop nest writes it"
            needed[q] = needed[q].widest(reach)
    view = Sides()
    for stage, n in zip(stages, needed):
        m = stage.margins
        view = view.widest(
            Sides(n.top + m.top, n.bottom + m.bottom, n.left + m.left, n.right + m.right)
        )
    outputs = {image: stages[q].margins for image, q in writer.items()}
    return view, halos, outputs


def _depends_on(value: ir.Value, forbidden: set) -> bool:
    """Whether `value` is computed from one of `forbidden` (loaded values are data: the
    addresses they are loaded from do not count); any other phi counts as dependent."""
    seen: set[int] = set()
    work = [value]
    while work:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v in forbidden or isinstance(v, ins.PhiInstr):
            return True
        if isinstance(v, ins.Instruction) and not isinstance(v, ins.LoadInstr):
            work.extend(v.operands)
    return False


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
