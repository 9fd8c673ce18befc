"""`--target hls`: the IMPACT'24 paper's ten benchmarks (tests/corpus/hls) written as HLS C with
stencil caches and ships, built by cc against the plain-C ship runtime and run against the
original C bit for bit (F12, F13: guard zones and every element compared) at sizes that do not
divide the tiles, sizes smaller than a tile, burst widths whose halos apply, every intra-tile
order and the ablation switches (F15); the text shows the HLS form (F3, F14), so a kernel that
silently stayed plain C fails; out-of-scope nests get a remark and stay correct (F16)."""

from __future__ import annotations

import re
import resource
import subprocess
from pathlib import Path

import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import compiled, corpus_cflags, corpus_extents, sweep_if
from pycc_stencil.cli import main
from pycc_stencil.runtime.emitted import HEADER_DIRS
from pycc_stencil.runtime.reference import compiler

HLS_CORPUS = Path(__file__).parent / "corpus" / "hls"
DEPTH = {
    "jacobi_1d": 1, "stencil5": 2, "stencil9": 2, "jacobi_2d": 2, "fdtd0": 2, "fdtd1": 2,
    "fdtd2": 2, "stencil19": 3, "stencil27": 3, "heat_3d": 3,
}  # fmt: skip
#: (N, tiles, burst) by depth: N - 2 (or N - 1) points not a multiple of the tile; smaller
#: than one tile; rows a multiple of the burst, so that the halos apply
SHAPES = {
    "odd": {1: (37, "16", 1), 2: (21, "8x8", 1), 3: (11, "4x4x4", 1)},
    "small": {1: (9, "16", 1), 2: (6, "8x8", 1), 3: (5, "4x4x8", 1)},
    "burst": {1: (64, "16", 16), 2: (20, "8x8", 4), 3: (12, "4x4x8", 4)},
}


def _unit(name: str, n: int, target: str):
    unit = compiled(HLS_CORPUS / f"{name}.c", [f"-DN={n}"], target=target)
    assert unit.setup_error is None, unit.setup_error
    return unit


def _bit_exact(unit, name: str) -> str:
    """The kernel's HLS C, after checking that it is the HLS form and runs bit-exact."""
    assert name in unit.emitted.emitted.hls, [r.message for r in unit.remarks]
    result = unit.check(name, {})
    assert result.status == "OK" and result.message.startswith("bit-exact"), result
    return unit.emitted.emitted.text


#: the benchmarks the default run builds in the w-wide form (C++ against ap_int.h: 1.6 s of
#: g++ each: a 2-D and a 3-D one) and at sizes smaller than a tile (one per dimensionality
#: and the in-place fdtd2); the sweep builds the others (every benchmark runs at odd sizes
#: by default)
IN_DEFAULT_RUN = {"burst": ("stencil5", "heat_3d"),
                  "small": ("jacobi_1d", "fdtd2", "heat_3d")}  # fmt: skip


def _benchmark_cases():
    for name in sorted(DEPTH):
        for shape in sorted(SHAPES):
            sweep = shape in IN_DEFAULT_RUN and name not in IN_DEFAULT_RUN[shape]
            yield pytest.param(name, shape, id=f"{name}-{shape}", marks=sweep_if(sweep))


@pytest.mark.parametrize("name, shape", list(_benchmark_cases()))
def test_the_papers_benchmarks_are_bit_exact(name, shape):
    n, tiles, burst = SHAPES[shape][DEPTH[name]]
    unit = _unit(name, n, f"hls:tile={tiles},burst={burst}")
    text = _bit_exact(unit, name)
    sizes = [int(s) for s in tiles.split("x")]
    # F3: the innermost intra-tile loop is padded to a literal trip count, no min in it
    innermost = re.findall(r"for \(long pycc_l(\d) = 0; pycc_l\1 < (\w+);", text)[-1]
    assert innermost[1] == str(sizes[int(innermost[0])]), innermost
    # F14: a static, completely partitioned buffer per array; AXI ports widened to the burst
    buffers = re.findall(r"static float (pycc_b\d+)((?:\[\d+\])+);", text)
    assert len(buffers) == (3 if name == "fdtd2" else 2)
    for buffer, _ in buffers:
        assert f"#pragma HLS ARRAY_PARTITION variable={buffer} complete dim=0" in text
    assert f"max_widen_bitwidth={32 * burst}" in text
    if burst > 1:  # F11: rows rounded to the burst (the halo added), moved as ap_uint words
        assert all(int(re.findall(r"\d+", shape_)[-1]) % burst == 0 for _, shape_ in buffers)
        assert unit.emitted.vendor_types, "not built against Vitis HLS's ap_int.h"


def test_the_pipelined_loop_encloses_the_padded_one():
    """F14: PIPELINE in the loop around the innermost (Fig. 5), ships of the chunk around."""
    text = _bit_exact(_unit("heat_3d", 11, "hls:tile=4x4x4"), "heat_3d")
    loops = re.findall(r"for \(long pycc_l(\d) = 0; [^{]*\{\n\s*(#pragma HLS PIPELINE II=1)?", text)
    assert [pipelined for _, pipelined in loops] == ["", "#pragma HLS PIPELINE II=1", ""]
    assert "pycc_ship_box(&pycc_buf0, pycc_to, &pycc_buf0, pycc_from, pycc_size);" in text


def _ablations():
    """Every order, padding and fusion setting twice in the default run, the other four
    combinations in the sweep."""
    for order in ("0x1", "1x0"):
        for padding in ("on", "off"):
            for fusion in ("on", "off"):
                sweep = (order == "0x1") != (padding == fusion)
                label = f"{order}-padding={padding}-fusion={fusion}"
                yield pytest.param(order, padding, fusion, id=label, marks=sweep_if(sweep))


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=sweep_if(n not in ("jacobi_1d", "stencil5", "fdtd2", "stencil27")))
        for n in sorted(DEPTH)
    ],
)
def test_the_code_vitis_synthesizes_is_bit_exact(name):
    """`synthesis=on` builds the `__SYNTHESIS__` side: every ship as typed loops of constant
    trip counts over the buffer and the array, guarded by the window (no `void *`
    descriptor), at odd sizes and with halos."""
    n, tiles, _ = SHAPES["odd"][DEPTH[name]]
    unit = _unit(name, n, f"hls:tile={tiles},synthesis=on")
    text = _bit_exact(unit, name)
    assert "#ifdef __SYNTHESIS__" in text and "pycc_within(" in text
    wide = SHAPES["burst"][DEPTH[name]]
    _bit_exact(_unit(name, wide[0], f"hls:tile={wide[1]},burst={wide[2]},synthesis=on"), name)


@pytest.mark.parametrize("order, padding, fusion", list(_ablations()))
def test_ablations_stay_bit_exact(order, padding, fusion):
    """F15: forced orders (full buffers for (j,i)), no padding (min in the innermost loop),
    no fusion (a buffer per access), on the in-place fdtd2."""
    target = f"hls:tile=4x8,order={order},padding={padding},fusion={fusion}"
    text = _bit_exact(_unit("fdtd2", 21, target), "fdtd2")
    innermost = re.findall(r"for \(long pycc_l\d = 0; pycc_l\d < (\w+);", text)[-1]
    assert (innermost == "pycc_n" + order[-1]) == (padding == "off"), innermost
    buffers = len(re.findall(r"static float pycc_b\d+", text))
    assert buffers == (3 if fusion == "on" else 5)


@pytest.mark.parametrize(
    "order",
    [
        "0x2x1",
        "2x1x0",
        *(pytest.param(o, marks=pytest.mark.sweep) for o in ("1x0x2", "1x2x0", "2x0x1")),
    ],
)
def test_every_order_of_a_3d_stencil_is_bit_exact(order):
    """Chunks that shift along any dimension, full buffers where no chunk applies."""
    _bit_exact(_unit("stencil19", 11, f"hls:tile=4x3x5,order={order}"), "stencil19")


@pytest.mark.parametrize("name, n", [("stencil5", 300), ("fdtd0", 300), ("heat_3d", 70)])
def test_the_papers_tile_sizes_at_moderate_sizes(name, n):
    """The default tiles (128x128, 32x32x32) over grids a few tiles wide, not multiples."""
    _bit_exact(_unit(name, n, "hls"), name)


OUT_OF_SCOPE_C = r"""
void seidel(int T, int n, double A[n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j]
                   + A[i][j + 1] + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}
void ratio(int n, int A[n][n], const int B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n - 1; j++)
      A[i][j] = B[i][j] / B[i][j + 1];
}
void backwards(int n, double A[n], double B[n]) {
  for (int i = n - 1; i >= 1; i--)
    B[i] = A[i - 1];
}
void clipped(int n, double *A, const double *B) {
  for (int i = 0; i < n; i++)
    if (B[i] > 0.0)
      A[i] = B[i];
}
"""


@pytest.mark.parametrize(
    "function, reason",
    [
        ("seidel", "rectangular tiles are illegal"),
        ("backwards", "not a SCoP"),
        ("ratio", "division or remainder by a variable in the body: a padded iteration"),
        ("clipped", "not a SCoP"),
    ],
)
def test_nests_outside_the_model_are_named_and_stay_correct(kernel_file, function, reason):
    """F16: seidel-2d (its sweep reads A[i - 1][j + 1], written before: distance (1,-1), no
    legal rectangular tiling, with or without the time loop), a loop that counts down (as
    adi's do), a condition in the body: a remark saying why, and the C as written,
    bit-exact."""
    unit = compiled(kernel_file("out_of_scope", OUT_OF_SCOPE_C), target="hls")
    assert unit.setup_error is None, unit.setup_error
    remarks = [r.message for r in unit.remarks if r.function == function]
    assert any(reason in m and "not tiled for the FPGA" in m for m in remarks), remarks
    assert function not in unit.emitted.emitted.hls
    params = {"n": "13", "T": "3"} if function == "seidel" else {"n": "13"}
    extents = {"B": 169} if function == "ratio" else None
    result = unit.check(function, params, extents)
    assert result.status == "OK", result


GAUSS_SEIDEL_5_C = r"""
void seidel5(int T, int n, double A[n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = (A[i - 1][j] + A[i][j + 1] + A[i + 1][j] + A[i][j - 1]) / 4.0;
}
"""


def test_a_five_point_gauss_seidel_is_tiled_sweep_by_sweep(kernel_file):
    """Its sweep is fully permutable (distances (0,1) and (1,0)), the sweeps over time are not
    (1,-1,0): the time loop is kept, each sweep tiled in place, its five accesses sharing one
    chunk buffer written back slice by slice."""
    unit = compiled(kernel_file("seidel5", GAUSS_SEIDEL_5_C), target="hls:tile=4x8")
    assert "seidel5" in unit.emitted.emitted.hls
    remarks = [r.message for r in unit.remarks if r.function == "seidel5"]
    assert any("A: chunk [3,10]" in m for m in remarks), remarks
    assert re.search(
        r"for \(long pycc_o0 = 0; pycc_o0 <= T - 1; pycc_o0\+\+\)", unit.emitted.emitted.text
    )
    for n, steps in (("13", "1"), ("5", "2"), ("30", "3")):
        result = unit.check("seidel5", {"n": n, "T": steps})
        assert result.status == "OK", result


def _sanitized(command: list[str], directory=None) -> subprocess.CompletedProcess:
    """`command` with the data limit an in-process `emit` or `check` lowered lifted again
    (AddressSanitizer reserves terabytes of address space for its shadow)."""

    def unlimited() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))

    return subprocess.run(
        command, cwd=directory, capture_output=True, text=True, timeout=120, preexec_fn=unlimited
    )


_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void {name}({parameters});
void reference_{name}({parameters});
int main(void)
{{
    unsigned seed = 12345;
{allocations}
    {name}({kernel_arguments});
    reference_{name}({reference_arguments});
{comparisons}
    puts("same");
    return 0;
}}
"""


@pytest.mark.parametrize(
    "name, n, tiles",
    [("heat_3d", 12, "4x4x8"), pytest.param("fdtd2", 21, "4x8", marks=pytest.mark.sweep)],
)
def test_the_kernel_is_clean_under_address_and_undefined_sanitizers(tmp_path, name, n, tiles):
    """F12/F13: the emitted kernel and the original, built with ASan and UBSan, on arrays
    of exactly their size (a ship past an end is a report), give the same bytes."""
    unit = _unit(name, n, f"hls:tile={tiles},burst=4")
    (tmp_path / "kernel.c").write_text(unit.emitted.emitted.text)
    source = (HLS_CORPUS / f"{name}.c").read_text()
    parameters = re.search(rf"void {name}\(([^)]*)\)", source).group(1)
    arrays = re.findall(r"float (\w+)((?:\[N\])+)", parameters)
    scalars = re.findall(r"float (\w+)(?=,|$)", parameters)
    lines, kernel_args, reference_args, compare = [], [], [], []
    for array, dims in arrays:
        count = f"{n}" + f" * {n}" * (dims.count("[") - 1)
        for copy in ("k", "r"):
            lines.append(f"    float *{array}_{copy} = malloc(sizeof(float) * {count});")
        lines.append(
            f"    for (long e = 0; e < {count}; e++) {{ seed = seed * 1103515245u + 12345u;"
            f" {array}_k[e] = {array}_r[e] = (float)(seed >> 8) / 16777216.0f; }}"
        )
        kernel_args.append(f"(void *){array}_k")
        reference_args.append(f"(void *){array}_r")
        compare.append(
            f"    if (memcmp({array}_k, {array}_r, sizeof(float) * {count})) "
            f'{{ puts("{array} differs"); return 1; }}\n    free({array}_k);\n    free({array}_r);'
        )
    kernel_args += ["0.375f"] * len(scalars)
    reference_args += ["0.375f"] * len(scalars)
    (tmp_path / "driver.c").write_text(
        _DRIVER.format(
            name=name, parameters=parameters.replace("N", str(n)), allocations="\n".join(lines),
            kernel_arguments=", ".join(kernel_args),
            reference_arguments=", ".join(reference_args), comparisons="\n".join(compare),
        )
    )  # fmt: skip
    flags = ["-std=c99", "-Wno-unknown-pragmas", "-ffp-contract=off", f"-DN={n}", "-g", "-O1",
             "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]  # fmt: skip
    reference = tmp_path / "reference.o"
    subprocess.run(
        [*compiler(), *flags, f"-D{name}=reference_{name}", "-c", str(HLS_CORPUS / f"{name}.c"),
         "-o", str(reference)],
        check=True,
    )  # fmt: skip
    program = tmp_path / "csim"
    subprocess.run(
        [*compiler(), *flags, f"-I{HEADER_DIRS['hls']}", str(tmp_path / "kernel.c"),
         str(tmp_path / "driver.c"), str(reference), "-o", str(program)],
        check=True,
    )  # fmt: skip
    done = _sanitized([str(program)])
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stdout + done.stderr


@pytest.mark.parametrize(
    "name, n", [("fdtd0", 20), pytest.param("stencil27", 12, marks=pytest.mark.sweep)]
)
def test_the_bundle_builds_and_runs_its_c_simulation(tmp_path, name, n):
    """`emit --target hls -o DIR`: the kernel, the ship runtime, a testbench against the
    original, a Vitis HLS script and a Makefile whose `csim` builds the kernel as C and as
    C++ and runs the testbench under the sanitizers: `same`."""
    bundle = tmp_path / "bundle"
    status = main(
        ["emit", str(HLS_CORPUS / f"{name}.c"), "--target", "hls:burst=4", f"-DN={n}",
         "-o", str(bundle)]
    )  # fmt: skip
    assert status == 0
    assert sorted(p.name for p in bundle.iterdir()) == sorted(
        ["Makefile", "pycc_ship.h", f"{name}.c", f"{name}.tcl", f"tb_{name}.c"]
    )
    assert f"set_top {name}" in (bundle / f"{name}.tcl").read_text()
    done = _sanitized(["make", "-s", "csim"], bundle)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split()[-2:] == ["same", "same"], done.stdout  # simulated, synthesized
    assert (bundle / "csim" / f"{name}.cpp.o").exists()
    assert "-DPYCC_SHIP_BURST=4" in done.stdout + (bundle / "Makefile").read_text()


def test_a_kernel_of_run_time_sizes_gets_no_testbench(tmp_path, kernel_file):
    """Sizes that are parameters cannot be made up: the Makefile builds the kernel and says
    that `check --target hls` compares it."""
    bundle = tmp_path / "bundle"
    source = kernel_file("seidel5", GAUSS_SEIDEL_5_C)
    assert main(["emit", source, "--target", "hls:tile=4x8", "-o", str(bundle)]) == 0
    assert not list(bundle.glob("tb_*"))
    assert "check\n#               --target hls" in (bundle / "Makefile").read_text()
    done = _sanitized(["make", "-s", "csim"], bundle)
    assert done.returncode == 0, done.stderr


def _polybench_cases():
    """The corpus's PolyBench-shaped stencils (time loops around one or more sweeps), each
    file with one of two tilings in turn (its first size variant; bursts, whose C++ build
    costs 1.6 s, are the ten benchmarks' and the running example's)."""
    seen: set[str] = set()
    stencils: list[str] = []
    for entry in KERNELS:
        file = entry["file"]
        if not file.startswith("polybench/") or file in seen:
            continue
        seen.add(file)
        form = next((f for f in ("vla", "ptr") if file.endswith(f"_{f}.c")), "fixed")
        stencil = file.removesuffix(".c").removesuffix(f"_{form}")
        if stencil not in stencils:
            stencils.append(stencil)
        target = ("hls:tile=4x8x8", "hls:tile=3x5x7")[len(seen) % 2]
        # one form of each stencil (fixed, VLA, pointer, in turn) in the default run
        sweep = ("fixed", "vla", "ptr").index(form) != stencils.index(stencil) % 3
        yield pytest.param(entry, target, id=f"{file}-{target}", marks=sweep_if(sweep))


#: why the corpus stencils that stay plain C do, by file (still checked bit-exact)
_UNTILED = {
    "polybench/seidel_2d": "rectangular tiles are illegal",  # distance (1,-1) in its sweep
    "polybench/macro/": "run-time assumption",  # rows delinearized only if n is small enough
}


@pytest.mark.parametrize("entry, target", list(_polybench_cases()))
def test_the_corpus_polybench_stencils_are_bit_exact(entry, target):
    """Time loops kept around the tiled sweeps (mod-2 planes, several sweeps a step, a 1-D
    row sweep next to 2-D ones in fdtd-2d); every parameter set of the corpus entry."""
    variant = entry["variants"][0]
    unit = compiled(Path(CORPUS_DIR) / entry["file"], corpus_cflags(entry, variant), target=target)
    assert unit.setup_error is None, unit.setup_error
    function = entry["function"]
    reason = next((why for file, why in _UNTILED.items() if entry["file"].startswith(file)), None)
    if reason is None:
        assert function in unit.emitted.emitted.hls, [r.message for r in unit.remarks]
        orders = [r.message for r in unit.remarks if "intra-tile order (" in r.message]
        assert not any(re.search(r"order \([^)]*_\d", m) for m in orders), orders  # (i,j)
    else:
        assert function not in unit.emitted.emitted.hls
        assert any(reason in r.message for r in unit.remarks if r.function == function)
    for params in entry["params"]:
        text = {k: repr(v) for k, v in params.items()}
        result = unit.check(function, text, corpus_extents(entry, variant, params))
        assert result.status == "OK", f"{params}: {result}"


RUNNING_C = """
#define N 68
void running(float V[N][N][N], float A[N][N][N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      for (int k = 1; k < N - 1; k++)
        V[i][k][j] = V[i][k][j] + A[i][j][k] + A[i + 1][j + 1][k + 1];
}
"""


def test_the_running_example_ships_as_fig_5_does(kernel_file):
    """F10, F8: SZ = 32^3, p = (i,j,k), w = 4: V in a full buffer [32,32,36] filled before the
    tile and flushed after it; A in a chunk [2,33,36] whose slice 0 is loaded before the i
    loop, row 0 of slice 1 in each i iteration, row j + 1 in each (pipelined) j iteration,
    and slice 1 shifted down after the j loop; bit-exact with the vendor's types."""
    unit = compiled(kernel_file("running", RUNNING_C), target="hls:tile=32x32x32,burst=4")
    text = _bit_exact(unit, "running")
    assert (
        "static float pycc_b0[32][32][36];" in text and "static float pycc_b1[2][33][36];" in text
    )
    assert unit.emitted.vendor_types
    body = text[text.index("for (long pycc_t0") :]
    ship = (
        r"pycc_to\[3\] = \{([^}]*)\}.*?pycc_size\[3\] = \{([^}]*)\};"
        r"\s*pycc_ship_box\(&(\w+), pycc_to"
    )
    order = [m.groups() for m in re.finditer(ship, body, re.S)]
    assert order == [
        ("0, 0, 0", "32, 32, 36", "pycc_buf0"),  # V: the whole tile
        ("0, 0, 0", "1, 33, 36", "pycc_buf1"),  # A: slice 0
        ("1, 0, 0", "1, 1, 36", "pycc_buf1"),  # per i: row 0 of slice 1
        ("1, pycc_l1 + 1, 0", "1, 1, 36", "pycc_buf1"),  # per j (pipelined): row j + 1
        ("0, 0, 0", "1, 33, 36", "pycc_buf1"),  # per i: slice 1 down to 0
        ("pycc_t0, pycc_t2, pycc_t1", "32, 32, 32", "pycc_out0"),  # V back, [ti,tk,tj]
    ], order
    pipelined = body.index("#pragma HLS PIPELINE II=1")
    assert body.index("pycc_l1 + 1, 0}") > pipelined
    # F8: V renamed (its rows shifted by the halo, 1), A[i,j,k] -> A'[0][j][k + 1] and
    # A[i+1,j+1,k+1] -> A'[1][j + 1][k + 2], j and k the tile's own indices
    assert (
        "pycc_b0[pycc_l0][pycc_l2][pycc_l1 + 1] = pycc_b0[pycc_l0][pycc_l2][pycc_l1 + 1]"
        " + pycc_b1[0][pycc_l1][pycc_l2 + 1] + pycc_b1[1][pycc_l1 + 1][pycc_l2 + 2];"
    ) in body


REVIEW_C = r"""
#define N 5
#define M 6
#define L 16
void boxes(float A[N][M][L], float Z[N][M][L]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      for (int k = 0; k < L; k++)
        Z[i][j][k] = A[i][j][k];
}
void uncached(int n, int m, float A[n][m], float B[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m - 8; j++)
      A[i][j] = A[i][j + 8] * B[i][j] + B[i][j] * 0.3f - A[i][j + 8] * 0.7f;
}
"""


def test_arrays_whose_extents_differ_are_addressed_row_by_row(kernel_file):
    """A[5][6][16]: the row is 16 long (the SCoP lists extents innermost first), so w = 4
    applies (16 is a multiple) and every element lands where the original puts it."""
    unit = compiled(kernel_file("review", REVIEW_C), target="hls:tile=4x4x8,burst=4")
    text = _bit_exact(unit, "boxes")
    assert "pycc_in0_extent[3] = {4 + 1, 6, 16}" in text
    remarks = [r.message for r in unit.remarks if r.function == "boxes"]
    assert not any("w = 1" in m for m in remarks), remarks


def test_an_uncached_float_read_under_padding_stays_float(kernel_file):
    """A[i][j] = A[i][j + 8] ...: dependent accesses that share no data in a tile are nc; their
    guarded read is `(float)0` when padded, never a double 0.0 that widens the sum."""
    unit = compiled(kernel_file("review", REVIEW_C), target="hls:tile=4x4")
    remarks = [r.message for r in unit.remarks if r.function == "uncached"]
    assert any("A: nc" in m for m in remarks), remarks
    assert "pycc_inside ? pycc_A[" in unit.emitted.emitted.text
    result = unit.check("uncached", {"n": "40", "m": "300"})
    assert result.status == "OK", result


def test_a_bundle_of_two_kernels_renames_both_originals(tmp_path, kernel_file):
    """Every function both files define is renamed in the testbench's original build."""
    source = kernel_file("review", REVIEW_C)
    bundle = tmp_path / "bundle"
    assert main(["emit", source, "--target", "hls:tile=4x4x8", "-o", str(bundle)]) == 0
    makefile = (bundle / "Makefile").read_text()
    assert "-Dboxes=boxes_original -Duncached=uncached_original" in makefile
    done = _sanitized(["make", "-s", "csim"], bundle)
    assert done.returncode == 0 and done.stdout.split()[-2:] == ["same", "same"], done.stdout


@pytest.mark.parametrize(
    "option, words",
    [
        ("burst=3", "burst=3: expected 1, 2, 4, 8 or 16"),
        ("tile=0x4", "tile=0x4: tile sizes are positive"),
        ("tile=8xx", "tile=8xx: expected numbers joined by x"),
        ("padding=maybe", "padding=maybe: expected on or off"),
        ("depth=3", "target 'hls' has no option among ['depth']"),
    ],
)
def test_bad_target_options_get_a_diagnostic(tmp_path, capsys, option, words):
    """A bad `--target hls:...` is an error naming it (status 1), and no file is written."""
    output = tmp_path / "out.c"
    source = str(HLS_CORPUS / "stencil5.c")
    assert main(["emit", source, "--target", f"hls:{option}", "-DN=20", "-o", str(output)]) == 1
    assert words in capsys.readouterr().err
    assert not output.exists()
