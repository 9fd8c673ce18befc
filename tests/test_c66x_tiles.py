"""The C66x's tiled image kernels: which kernels are image kernels (margins, halos), the tile
geometry model (eq. 4.1-4.4, the dissertation's table), the tile driver's schedule
(Algorithm 4, N = 1, 2, 3, many), the EDMA host backends (immediate, deferred, checking) and
a removed wait caught by two of them, the emitted kernels run tile by tile at tile sizes
down to 1 x 1 (smaller than the halo), bit for bit against the original, and the cycle model
of single vs double buffering (Table 5.2's calibration entry and trend) and vs the caches."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import case_label, compiled, corpus_cflags, corpus_extents, on_entry
from pycc_stencil.emit import tile_geometry
from pycc_stencil.emit.c66x_cache_model import (
    L1D,
    L2_CACHE,
    LruCache,
    tile_stalls,
    untiled_stalls,
)
from pycc_stencil.emit.c66x_tile_model import (
    BYTES_PER_CYCLE_PER_MB,
    GB_PER_S_AT_1_GHZ,
    tiled_time,
)
from pycc_stencil.emit.targets.c66x import TILE_BUFFER_BYTES
from pycc_stencil.emit.tile_geometry import (
    BUFFER_STAGGER,
    TileShape,
    allocated_bytes,
    choose_tile,
    optimal_tile_rows,
)
from pycc_stencil.frontend import lower_file
from pycc_stencil.polyhedral.image_stencil import Sides, image_kernel
from pycc_stencil.runtime.emitted import HEADER_DIRS, STRICT_FLAGS, runtime_sources
from pycc_stencil.runtime.reference import compiler

RUNTIME = HEADER_DIRS["c66x"]
DRIVER = Path(__file__).parent / "c66x_tiles.c"
BACKENDS = {"immediate": 0, "deferred": 1, "checking": 2}


def _kernel(path: str, name: str):
    module = lower_file(os.path.join(CORPUS_DIR, path), []).module
    return image_kernel(module.get_global(name))


def test_image_kernels_of_the_dissertation():
    """Margins from the loop bounds, halos from the access offsets: GaussianX7's loops skip 3
    rows at the top and bottom but read no other row (section 1.5 of the reference)."""
    gauss = _kernel("c66x/gaussian_x7.c", "GaussianX7")
    assert gauss.region == gauss.view == Sides(3, 3, 3, 3)
    assert gauss.inputs == {"input": Sides(0, 0, 3, 3)}
    assert gauss.outputs == {"output": Sides(3, 3, 3, 3)}
    mean = _kernel("c66x/mean_filter_1x3.c", "MeanFilter1x3")
    assert mean.view == Sides(0, 0, 1, 1)
    lk = _kernel("c66x/lucas_kanade.c", "LucasKanade")
    assert sorted(lk.inputs) == ["dt", "dx", "dy"] and sorted(lk.outputs) == ["vx", "vy"]
    assert (lk.width, lk.height, lk.element_bytes) == ("size_x", "size_y", 4)


@pytest.mark.parametrize(
    "path, name, reason",
    [
        ("polybench/jacobi_2d_ptr.c", "kernel_jacobi_2d_ptr", "2-deep"),  # a time loop
        ("pipelines/in_place.c", "in_place", "where no loop nest writes it"),
        ("pipelines/reads_later_write.c", "reads_later_write", "read before"),
        ("legacy/gauss5x5.c", "gauss5x5_f32", "carried"),
    ],
)
def test_other_kernels_are_not_tiled(path, name, reason):
    found = _kernel(path, name)
    assert isinstance(found, str) and reason in found


def test_tile_rows_reproduce_the_dissertations_table():
    """Eq. 4.4's integer optimum for 1024 x 1024 (reference section 4): rows = C / columns."""
    table = {
        1024: [11, 14, 16, 19],
        4096: [12, 16, 18, 23],
        8192: [12, 16, 19, 24],
        32768: [12, 16, 19, 26],
    }
    for capacity, expected in table.items():
        assert [optimal_tile_rows(capacity, m) for m in (1, 2, 3, 7)] == expected


def test_tile_fits_the_budget_and_the_row_alignment():
    sobel = _kernel("c66x/sobel.c", "Sobel")
    for budget in (8 * 1024, 64 * 1024, 384 * 1024):
        for alignment in (1, 8):
            tile = choose_tile(sobel, budget, alignment)
            # 1 input, 2 outputs, 2 buffers each, as the runtime allocates them
            assert 2 * 3 * allocated_bytes(tile.buffer_bytes) <= budget
            assert (tile.cols + 2) * 4 % alignment == 0
            assert 1 <= tile.rows < 100
    assert choose_tile(sobel, 64) is None


def _driver(tmp_path: Path, source: Path = DRIVER, tiles: Path | None = None) -> Path:
    exe = tmp_path / "tiles"
    sources = [str(p) for p in runtime_sources("c66x") if tiles is None or p.name != tiles.name]
    if tiles is not None:
        sources.append(str(tiles))
    command = [*compiler(), *STRICT_FLAGS, f"-I{RUNTIME}", str(source), *sources, "-o", str(exe)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return exe


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    return _driver(tmp_path_factory.mktemp("tiles"))


def _run(exe: Path, rows: int, cols: int, tile: tuple[int, int], backend: str):
    argv = [str(exe), str(rows), str(cols), str(tile[0]), str(tile[1]), str(BACKENDS[backend])]
    return subprocess.run(argv, capture_output=True, text=True)


def algorithm_4(n: int) -> list[str]:
    """The steps of Algorithm 4 (reference section 5.5) for n tiles, N = 1 special-cased."""
    steps = ["in 0", *(["in 1"] if n > 1 else []), "wait", "compute 0"]
    for i in range(1, n - 1):
        steps += [f"in {i + 1}", f"out {i - 1}", f"compute {i}", "wait"]
    if n > 1:
        steps += [f"compute {n - 1}", f"out {n - 2}"]
    return [*steps, f"out {n - 1}", "wait"]


# (rows, cols, tile): the region is rows - 3 by cols - 4 (margins 2, 1 and 1, 3)
_SHAPES = {
    "one tile": (10, 12, (50, 50), 1),
    "two tiles": (10, 12, (4, 8), 2),
    "three tiles, the last moved back": (12, 9, (3, 5), 3),
    "many 1x1 tiles, smaller than the halo": (7, 8, (1, 1), 16),
    "region smaller than a tile": (5, 6, (7, 9), 1),
}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_schedule_is_algorithm_4(driver, shape, backend):
    rows, cols, tile, n = _SHAPES[shape]
    ran = _run(driver, rows, cols, tile, backend)
    assert ran.returncode == 0, ran.stderr
    *steps, verdict = ran.stdout.split("\n")[:-1]
    assert steps == algorithm_4(n)
    assert verdict == "same"


def test_empty_region_does_nothing(driver):
    ran = _run(driver, 3, 20, (4, 4), "checking")  # rows 2..2: no output row
    assert ran.returncode == 0 and ran.stdout == "same\n"


def test_removed_wait_is_caught(tmp_path):
    """The driver without the wait of its loop: still right when transfers complete at
    issue, wrong when they complete at the wait, and stopped by the checking backend."""
    text = (RUNTIME / "pycc_tiles.c").read_text()
    line = "        pycc_wait(); /* wait: the transfers of this step */\n"
    assert line in text
    mutated = tmp_path / "pycc_tiles.c"
    mutated.write_text(text.replace(line, ""))
    exe = _driver(tmp_path, tiles=mutated)
    shape = (12, 9, (3, 5))
    assert _run(exe, *shape, "immediate").stdout.endswith("same\n")
    assert _run(exe, *shape, "deferred").stdout.endswith("different\n")
    checked = _run(exe, *shape, "checking")
    assert checked.returncode != 0
    assert re.search(r"pycc_edma: tile \d+: .*in flight", checked.stderr), checked.stderr


def test_device_backend_compiles():
    """The register-level backend (never run here: no C66x) builds warning-free."""
    command = [*compiler(), *STRICT_FLAGS, "-fsyntax-only", "-DPYCC_EDMA_DEVICE",
               f"-I{RUNTIME}", str(RUNTIME / "pycc_edma.c")]  # fmt: skip
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr


def _tiled_cases():
    """The dissertation's kernels; every other one only in the sweep (docs/testing.md)."""
    entries = [e for e in KERNELS if e["file"].startswith("c66x/")]
    for index, entry in enumerate(entries):
        variant = entry["variants"][0]
        label = case_label(entry, variant, {}, "tiled")
        marks = [on_entry(entry, variant)] + ([pytest.mark.sweep] if index % 2 else [])
        yield pytest.param(entry, variant, id=label, marks=marks)


@pytest.mark.parametrize("entry, variant", list(_tiled_cases()))
def test_emitted_kernels_run_tile_by_tile(entry, variant):
    """The dissertation's kernels as `emit --target c66x` writes them (the C66x model's
    strategy, tiles through the EDMA), at tiles from 1 x 1 to larger than the image, under
    every host backend (`check` runs all three), bit for bit."""
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, corpus_cflags(entry, variant), "auto,align", target="c66x")
    assert unit.setup_error is None, unit.setup_error
    name = entry["function"]
    assert name in unit.emitted.emitted.tiled
    assert f"pycc_tiles_run(&pycc_t, pycc_{name}_tile, &pycc_call);" in unit.emitted.emitted.text
    unit.emitted.set_tile(name, 2, 3)
    computed = [s for s in _traced_steps(unit, name, 13, 11) if s.startswith("compute")]
    region = _kernel(entry["file"], name).region
    across, down = 13 - region.left - region.right, 11 - region.top - region.bottom
    assert len(computed) == -(-down // 2) * -(-across // 3), "not run tile by tile"
    for tile in ((1, 1), (5, 4), (1000, 1000)):
        unit.emitted.set_tile(name, *tile)
        for params in entry["params"]:
            text = {k: repr(v) for k, v in params.items()}
            result = unit.check(name, text, corpus_extents(entry, variant, params))
            assert result.status == "OK", f"tile {tile}, {params}: {result}"
            assert result.message.endswith("under EDMA backends immediate, deferred, checking")


def _traced_steps(
    unit, name: str, cols: int, rows: int, width: str = "size_x", height: str = "size_y"
) -> list[str]:
    """The tile driver's steps when the emitted `name` runs in this process on rows x cols
    images (every pointer parameter an image, every integer one a size)."""
    library = unit.emitted._library
    steps: list[str] = []
    trace = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int)(
        lambda step, tile: steps.append(f"{step.decode()} {tile}")
    )
    hook = ctypes.c_void_p.in_dll(library, "pycc_tiles_trace")
    params = unit.source.lowered.functions[name].params
    images = [np.zeros(rows * cols, np.float32) for _ in params]
    args, types = [], []
    for param, image in zip(params, images):
        if param.name == width:
            args.append(cols)
            types.append(ctypes.c_int32)
        elif param.name == height:
            args.append(rows)
            types.append(ctypes.c_int32)
        else:
            args.append(image.ctypes.data)
            types.append(ctypes.c_void_p)
    function = ctypes.CFUNCTYPE(None, *types)(unit.emitted.function_address(name))
    hook.value = ctypes.cast(trace, ctypes.c_void_p).value
    try:
        function(*args)
    finally:
        hook.value = None
    return steps


def test_row_aligned_kernel_keeps_its_alignment_in_tiles():
    """With row_align(8) the tile's row length keeps the rows 8-byte aligned in L2, so the
    body's `_amem8_f2` (checked at run time by the emulation) holds in every tile."""
    entry = next(e for e in KERNELS if e["function"] == "MeanFilter3x3")
    variant = entry["variants"][0]
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, corpus_cflags(entry, variant), "simd(2),align", row_align=8,
                    target="c66x")  # fmt: skip
    assert "_amem8_f2(" in unit.emitted.emitted.text
    for tile in ((3, 4), (2, 6), (1000, 1000)):  # 4 + 2 and 6 + 2 columns: 8-byte rows
        unit.emitted.set_tile("MeanFilter3x3", *tile)
        for sizes in ({"size_x": 38, "size_y": 13}, {"size_x": 10, "size_y": 5}):
            text = {k: str(v) for k, v in sizes.items()}
            result = unit.check("MeanFilter3x3", text, corpus_extents(entry, variant, sizes))
            assert result.status == "OK", f"tile {tile}, {sizes}: {result}"


def _table52():
    sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
    try:
        import table52
    finally:
        sys.path.pop(0)
    return table52


def test_tile_model_calibration_and_trend():
    """The one bandwidth constant reproduces the entry it was calibrated on (Table 5.2, Mean
    Filter (H) 3x, 13.2 %), and the saving grows with the stencil's width (T10)."""
    table52 = _table52()
    sources = [table52.source_of("Mean Filter (H)", w) for w in (3, 7, 11)]
    e_db = [table52.modelled(source, BYTES_PER_CYCLE_PER_MB).e_db for source in sources]
    assert abs(e_db[0] - 0.132) < 0.001
    assert e_db[0] < e_db[1] < e_db[2]


def test_vertical_stencils_fall_off_the_cache_not_the_tiles():
    """Fig. 1.4: through the caches, a vertical filter's misses jump once its rows (4 KiB
    apart on a 1024-wide image) overfill L1D's 2 ways; the tiles' rows keep hitting, and the
    tiles win (with MB read as GB/s), as the dissertation's "up to 10x vs cache" does."""
    table52 = _table52()
    misses = {}
    for w in (7, 9, 11):
        module = _lowered(table52.source_of("Mean Filter (V)", w))
        kernel = image_kernel(module.get_global("k"))
        points = (1024 - 2 * (w // 2)) * 1024
        misses[w] = untiled_stalls(kernel, (1024, 1024)).l1d_misses / points
        tile = choose_tile(kernel, TILE_BUFFER_BYTES)  # 9x: not 16 x 1024 (rows 4 KiB apart)
        assert tile_stalls(kernel, tile.rows, tile.cols).l1d_misses / tile.rows / tile.cols < 1
    assert 0 < misses[7] < 0.1 and misses[11] > 5  # 1 read in 16 (a new line) vs most reads
    fast = table52.modelled(table52.source_of("Mean Filter (V)", 11), GB_PER_S_AT_1_GHZ)
    assert fast.speedup_over_cache > 3


def test_tile_buffers_are_staggered_across_l1d_sets(monkeypatch):
    """Harris over 15 x 15 windows in tiles of 22 x 441 points has buffers of 64 KiB (4 L1D
    ways' worth): placed back to back, the rows of its 3 images share L1D's sets and nearly
    every read misses; the runtime places each buffer 3 lines after the one before, and the
    model with it."""
    table52 = _table52()
    kernel = image_kernel(_lowered(table52.source_of("Harris Corner", 15)).get_global("k"))
    assert (22 + 14) * (441 + 14) * 4 == 65520

    def misses_per_point() -> float:
        return tile_stalls(kernel, 22, 441).l1d_misses / (22 * 441)

    assert misses_per_point() < 3
    monkeypatch.setattr(tile_geometry, "BUFFER_STAGGER", 0)
    assert misses_per_point() > 20
    runtime = (Path(RUNTIME) / "pycc_tiles.c").read_text()
    assert f"#define PYCC_SPM_STAGGER {BUFFER_STAGGER}L" in runtime


def test_images_that_share_l2_sets_miss_every_output():
    """Lucas-Kanade's five 4 MiB images share L2's sets: five lines for 4 ways miss once per
    image and output; the model's 4-way LRU sees it (and no miss in a 1-row warm-up's reach)."""
    table52 = _table52()
    kernel = image_kernel(_lowered(table52.source_of("Lucas Kanade", 3)).get_global("k"))
    stalls = untiled_stalls(kernel, (1024, 1024))
    assert abs(stalls.l2_misses / (1022 * 1022) - 5) < 0.2


def test_lru_cache_ways_allocation_and_write_back():
    l1d = LruCache(L1D, write_allocate=False)
    way = L1D.size // L1D.ways  # addresses a way apart share a set
    assert not l1d.access(0) and not l1d.access(way) and l1d.access(0) and l1d.access(way)
    assert not l1d.access(2 * way) and not l1d.access(0)  # a third line evicts the LRU one
    assert not l1d.access(5 * way, write=True) and not l1d.access(5 * way)  # read-allocate
    l2 = LruCache(L2_CACHE, write_allocate=True)
    step = L2_CACHE.size // L2_CACHE.ways
    l2.access(0, write=True)
    for k in range(1, L2_CACHE.ways):
        l2.access(k * step)
    assert l2.counts() == (L2_CACHE.ways, 0)
    l2.access(L2_CACHE.ways * step)  # evicts the dirty line 0
    assert l2.counts() == (L2_CACHE.ways + 1, 1)


def _lowered(source: str):
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "k.c")
        Path(path).write_text(source)
        return lower_file(path, []).module


def test_one_tile_hides_nothing():
    kernel = _kernel("c66x/jacobi.c", "Jacobi")
    whole = TileShape(2000, 2000, 0)
    assert tiled_time(kernel, whole, 3.0, 20.0).e_db == 0.0
    split = tiled_time(kernel, TileShape(16, 64, 0), 3.0, 20.0)
    assert 0.0 < split.e_db < 1.0 and split.double < split.single


#: multi-stage image kernels (tests/corpus/pipelines): their intermediate images are
#: computed in each tile's view (recomputed around it as far as later stages read them) and
#: written back at the tile's points, one EDMA transfer in and out per image and tile
_PIPELINES = {
    "harris": Sides(2, 2, 2, 2),  # Sobel then 3x3 sums: the view reaches 2 around a tile
    "unsharp4": Sides(2, 2, 2, 2),
    "side": Sides(1, 1, 0, 0),
    "pointwise": Sides(0, 0, 0, 0),
}


@pytest.mark.parametrize("name", sorted(_PIPELINES))
def test_pipelines_run_tile_by_tile(name):
    path = os.path.join(CORPUS_DIR, "pipelines", f"{name}.c")
    kernel = image_kernel(lower_file(path, []).module.get_global(name))
    assert kernel.view == _PIPELINES[name] and len(kernel.stages) > 1
    unit = compiled(path, [], "", target="c66x")
    assert unit.setup_error is None, unit.setup_error
    assert name in unit.emitted.emitted.tiled
    unit.emitted.set_tile(name, 2, 3)
    computed = [s for s in _traced_steps(unit, name, 19, 23, "w", "h") if "compute" in s]
    assert len(computed) > 1, "not run tile by tile"
    for tile in ((1, 1), (2, 3), (1000, 1000)):
        unit.emitted.set_tile(name, *tile)
        for h, w in ((23, 19), (4, 4)):
            result = unit.check(name, {"h": str(h), "w": str(w)})
            assert result.status == "OK", f"tile {tile}, {h} x {w}: {result}"
            assert result.message.endswith("under EDMA backends immediate, deferred, checking")


def test_images_packed_as_check_packs_them_are_still_tiled():
    """Images whose rows x cols spans overlap but whose used parts do not (a buffer sized by
    the kernel's footprint, as `check` allocates them) run tile by tile, bit for bit."""
    entry = next(e for e in KERNELS if e["function"] == "Jacobi")
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, [], "auto,align", target="c66x")
    rows, cols = 11, 13
    memory = np.zeros(2 * rows * cols, np.float32)
    image = np.random.default_rng(5).random(rows * cols, dtype=np.float32)
    memory[: rows * cols] = image
    output_at = rows * cols - (cols + 1)  # its first written element follows the input
    library = unit.emitted._library
    steps: list[str] = []
    trace = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int)(
        lambda step, tile: steps.append(step.decode())
    )
    hook = ctypes.c_void_p.in_dll(library, "pycc_tiles_trace")
    signature = (ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)
    function = ctypes.CFUNCTYPE(None, *signature)(unit.emitted.function_address("Jacobi"))
    unit.emitted.set_tile("Jacobi", 2, 3)
    hook.value = ctypes.cast(trace, ctypes.c_void_p).value
    try:
        function(memory.ctypes.data, cols, rows, memory.ctypes.data + 4 * output_at)
    finally:
        hook.value = None
    assert steps.count("compute") == 5 * 4, "not tiled"
    grid = image.reshape(rows, cols).astype(np.float64)
    expected = ((grid[:-2, 1:-1] + grid[2:, 1:-1]).astype(np.float32) + grid[1:-1, :-2]).astype(
        np.float32
    )
    expected = ((expected + grid[1:-1, 2:]).astype(np.float32) * 0.25).astype(np.float32)
    written = memory[output_at:][: rows * cols].reshape(rows, cols)[1:-1, 1:-1]
    assert np.array_equal(written, expected)


_NOT_IMAGE_KERNELS = """
void Position(const float *in, int w, int h, float *out) {
  for (int i = 0; i < h; i++)
    for (int j = 1; j < w; j++)
      out[i * w + j] = in[i * w + j - 1] + (float)j + 100.0f * (float)i;
}
void Size(const float *in, int w, int h, float *out) {
  float s = 1.0f / w;
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++)
      out[i * w + j] = in[i * w + j] * s;
}
void Named(const float *in, int w, int h, float k, float t, int call, int bytes, float *out) {
  for (int i = 1; i < h - 1; i++)
    for (int j = 1; j < w - 1; j++)
      out[i * w + j] = (in[(i - 1) * w + j] + in[(i + 1) * w + j]) * k + t * (call + bytes);
}
"""


def test_values_of_the_position_or_size_are_not_tiled(tmp_path):
    """A tile's view has other i, j, W and H: a kernel whose values use them is left whole;
    a kernel whose parameters are named like the wrapper's locals is still tiled."""
    source = tmp_path / "k.c"
    source.write_text(_NOT_IMAGE_KERNELS)
    module = lower_file(str(source), []).module
    for name in ("Position", "Size"):
        assert "depends on the position or the images' size" in image_kernel(
            module.get_global(name)
        )
    unit = compiled(source, [], "", target="c66x")
    assert unit.emitted.emitted.tiled == ["Named"]
    unit.emitted.set_tile("Named", 2, 3)
    params = {"w": "17", "h": "9", "k": "1.5", "t": "0.25", "call": "3", "bytes": "-2"}
    for name in ("Position", "Size", "Named"):
        subset = {k: v for k, v in params.items() if name == "Named" or k in "wh"}
        result = unit.check(name, subset)
        assert result.status == "OK", result
