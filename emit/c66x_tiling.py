"""The C66x's tiled image kernels: the function the user calls runs the (optimized) kernel
tile by tile out of L2 SRAM, double-buffered through the EDMA.

For an image kernel (`polyhedral.image_stencil`: one stage or a pipeline of them) the
emitter writes the optimized body as a `static` function and, under the kernel's own name and
prototype, a wrapper that describes the images, the region of outputs, the view a tile needs,
each input's halo and each output's margins to the runtime (`runtime/c66x/pycc_tiles.c`,
Algorithm 4), with a callback that runs the body on one tile's view in L2. A pipeline's
intermediate images are computed in the view (around the tile as far as later stages read
them) and written back at the tile's points: one transfer per image in or out per tile. The
tile comes from the geometry model (`tile_geometry.choose_tile`) and is a pair of exported
variables (`pycc_tile_rows_<kernel>`, `pycc_tile_cols_<kernel>`) a program or a test may
change. Images the runtime cannot tile (an output overlapping another image, rows too long
for one EDMA transfer, buffers that do not fit) are run by the body directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..ir_passes.core.analyses import loops_of
from ..ir_passes.registry import PassContext
from ..polyhedral.image_stencil import ImageKernel, Sides, image_kernel
from .tile_geometry import TileShape, choose_tile


@dataclass(frozen=True)
class TiledKernel:
    kernel: ImageKernel
    tile: TileShape
    row_align: int  # the declared row alignment in bytes (1: none)


def tiled_kernels(
    module: ir.Module, budget: int, alignment: dict[str, int], context: PassContext
) -> dict[str, TiledKernel]:
    """The functions of `module` (before the passes) to run tile by tile, by name, with
    their tiles for `budget` bytes of scratchpad (`alignment`: declared row alignments); a
    remark for each function with a loop says whether it is tiled, or why not."""
    found = {}
    for function in module.functions:
        if not function.blocks or not loops_of(function).loops:
            continue
        kernel = image_kernel(function)
        if isinstance(kernel, str):
            context.analysis(f"not run in L2 tiles: {kernel}", at=function)
            continue
        aligned = alignment.get(function.name, 1)
        if aligned > kernel.element_bytes and kernel.view != kernel.region:
            # a pipeline's views at the images' edges are narrower: their rows unaligned
            context.analysis("not run in L2 tiles: a pipeline with a row alignment", at=function)
            continue
        tile = choose_tile(kernel, budget, aligned)
        if tile is None:
            context.analysis(f"not run in L2 tiles: no tile fits {budget} bytes", at=function)
            continue
        found[function.name] = TiledKernel(kernel, tile, aligned)
        stages = f", {len(kernel.stages)} stages" if len(kernel.stages) > 1 else ""
        context.passed(
            f"run tile by tile out of L2 SRAM through the EDMA, double-buffered: tiles of "
            f"{tile.rows} x {tile.cols} points{stages}",
            at=function,
        )
    return found


def wrapper(
    tiled: TiledKernel, prototype: str, params: list[tuple[str, str, str]], body: str
) -> str:
    """The C of the function the user calls: `prototype` is the kernel's, `params` its
    parameters as (IR name, C name, C type), `body` the C name of the optimized kernel."""
    k, tile = tiled.kernel, tiled.tile
    name = k.function
    images = [*k.inputs, *k.outputs]
    c_names = {ir_name: c for ir_name, c, _ in params}
    scalars = [(c, t) for ir_name, c, t in params if ir_name not in images + [k.width, k.height]]
    in_tile = []
    for ir_name, c, t in params:
        if ir_name in images:
            in_tile.append(f"({t})call->arrays[{images.index(ir_name)}].buffer[which]")
        elif ir_name == k.width:
            in_tile.append(f"({t})view_cols")
        elif ir_name == k.height:
            in_tile.append(f"({t})view_rows")
        else:
            in_tile.append(f"call->{c}")
    setup = [
        f"pycc_t.rows = {c_names[k.height]};",
        f"pycc_t.cols = {c_names[k.width]};",
        f"pycc_t.region = (pycc_sides){{{_sides(k.region)}}};",
        f"pycc_t.view = (pycc_sides){{{_sides(k.view)}}};",
        f"pycc_t.tile_rows = pycc_tile_rows_{name};",
        f"pycc_t.tile_cols = pycc_tile_cols_{name};",
        f"pycc_t.row_align = {tiled.row_align};",
        f"pycc_t.element = {k.element_bytes};",
        f"pycc_t.inputs = {len(k.inputs)};",
        f"pycc_t.outputs = {len(k.outputs)};",
        "pycc_t.input = &pycc_call.arrays[0];",
        f"pycc_t.output = &pycc_call.arrays[{len(k.inputs)}];",
    ]
    for n, image in enumerate(images):
        sides = _sides(k.inputs[image] if image in k.inputs else k.outputs[image])
        literal = f"(pycc_tile_array){{(char *){c_names[image]}, {{{sides}}}, {{NULL, NULL}}}}"
        setup.append(f"pycc_call.arrays[{n}] = {literal};")
    setup += [f"pycc_call.{c} = {c};" for c, _ in scalars]
    direct = ", ".join(c for _, c, _ in params)
    lines = [
        f"/* {name} over tiles of {tile.rows} x {tile.cols} points in L2 SRAM, double-buffered",
        " * through the EDMA (pycc_tiles.c): the tile is these two variables */",
        f"int pycc_tile_rows_{name} = {tile.rows};",
        f"int pycc_tile_cols_{name} = {tile.cols};",
        "",
        f"struct pycc_{name}_call {{",
        f"    pycc_tile_array arrays[{len(images)}];",
        *(f"    {t} {c};" for c, t in scalars),
        "};",
        "",
        f"static void pycc_{name}_tile(void *context, int which, int view_cols, int view_rows)",
        "{",
        f"    struct pycc_{name}_call *call = context;",
        f"    {body}({', '.join(in_tile)});",
        "}",
        "",
        prototype,
        "{",
        f"    struct pycc_{name}_call pycc_call;",
        "    pycc_tiling pycc_t;",
        "    long pycc_bytes;",
        "    int pycc_k;",
        "",
        *(f"    {line}" for line in setup),
        "    pycc_spm_reset();",
        "    pycc_bytes = pycc_tile_buffer_bytes(&pycc_t);",
        f"    for (pycc_k = 0; pycc_k < {2 * len(images)}; pycc_k++)",
        "        pycc_call.arrays[pycc_k / 2].buffer[pycc_k % 2] = pycc_spm_alloc(pycc_bytes);",
        "    if (!pycc_tiles_possible(&pycc_t)) {",
        f"        {body}({direct});",
        "        return;",
        "    }",
        f"    pycc_tiles_run(&pycc_t, pycc_{name}_tile, &pycc_call);",
        "}",
    ]
    return "\n".join(lines)


def _sides(sides: Sides) -> str:
    return ", ".join(str(n) for n in sides.astuple())
