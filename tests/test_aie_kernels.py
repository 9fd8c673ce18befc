"""AI Engine kernels from C convolution nests (issue 17): `check --target aie` builds the
emitted intrinsic C++ with c++ against the host emulation (runtime/aie/pycc_aie.h) and
compares it with the original C built by cc; the kernel text is checked for the shape Vyasa
gives it (lazy stores, super-loads per filter row, fused mac16 pairs, broadcast weights,
loop pragmas), and the emulation's counters give the MAC-slot utilization."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from corpus_check import compiled
from pycc_stencil.cli import main
from pycc_stencil.emit.aie_convolution import convolution
from pycc_stencil.emit.aie_kernel import Plan
from pycc_stencil.emit.aie_layout import pack_functions
from pycc_stencil.emit.aie_model import PEAK, estimate
from pycc_stencil.emit.aie_schedule import kernel_plan
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes

PASSES = "unroll-reductions"
EMULATION_HEADERS = Path(__file__).parent.parent / "runtime" / "aie"
#: the CONV2D the tests and scripts/aie_report.py compile, shaped by -D flags
CONV2D = str(Path(__file__).parent / "corpus" / "aie" / "conv2d.c")
TYPES = {"int16": ("int16_t", "int"), "int32": ("int32_t", "int"), "float": ("float", "float")}


def conv2d_flags(element: str, r: int, s: int, rows: int = 3, columns: int = 32) -> list[str]:
    ctype, acc = TYPES[element]
    sizes = {"T": ctype, "ACC": acc, "R": r, "S": s, "Y": rows, "X": columns}
    return [f"-D{k}={v}" for k, v in sizes.items()]


def _macs_per_output(element: str, r: int, s: int) -> int:
    """MAC intrinsics per output vector: mac16 pairs of taps in a filter row, the lone taps
    of odd rows paired across rows; one per tap on the 8-lane datapaths."""
    if element != "int16":
        return r * s
    return r * (s // 2) + (-(-r // 2) if s % 2 else 0)


def row_elements(s: int, columns: int) -> int:
    """conv2d.c's ROW."""
    return (columns + s + 7) // 8 * 8


def _checked(flags: list[str]):
    unit = compiled(CONV2D, flags, PASSES, target="aie")
    result = unit.check("conv2d", {})
    assert result.status == "OK", result
    assert result.changed, result  # the kernel wrote the outputs
    return unit, result


@pytest.mark.parametrize(
    "element, r, s",
    [
        pytest.param("int16", 2, 2, marks=pytest.mark.sweep),
        ("int16", 3, 3),  # odd: each row's third tap pairs with a zero weight
        ("int16", 4, 3),  # Vyasa's running example
        pytest.param("int16", 5, 5, marks=pytest.mark.sweep),  # two z registers of weights
        pytest.param("int32", 3, 3, marks=pytest.mark.sweep),
        ("int32", 2, 10),  # 8 + 9 elements per row: a 1024-bit register
        ("float", 3, 3),
        pytest.param("float", 5, 2, marks=pytest.mark.sweep),
    ],
)
def test_convolutions_are_bit_exact_on_the_emulation(element, r, s):
    """Rows of 16 elements: one int16 vector, or two 8-lane ones the tuner may take in one
    iteration (then the row's super-load serves both)."""
    unit, result = _checked(conv2d_flags(element, r, s, columns=16))
    text = unit.emitted.emitted.text
    body = text[text.index("void conv2d(") :]
    plan = kernel_plan(convolution(unit.module.get_global("conv2d")))
    assert plan.rows == 1  # 3 rows: no factor to unroll by
    mac = {"int16": "mac16", "int32": "lmac8", "float": "fpmac"}[element]
    assert body.count(f"= {mac}(acc0") == _macs_per_output(element, r, s)
    assert body.count(f"= {mac}(") == plan.vectors * _macs_per_output(element, r, s)
    assert body.count(" X") and len(re.findall(r"undef_v\d+\w+\(\)", body)) == r  # a load a row
    assert body.count("PYCC_AIE_STORE(") == plan.vectors  # one lazy store per output vector
    assert "chess_prepare_for_pipelining chess_loop_range(3, 3)" in body
    if element == "int16":
        assert "integer inputs in [-8, 8]" in result.message
    else:
        assert "integer inputs" not in result.message or element == "int32"


def test_vyasa_running_example_reads_three_rows_and_broadcasts_the_weights():
    """The 4x3 filter: 12 taps, 6 mac16 (pairs 0-1 and 2-3 of each row, x[i + j]), 3 input
    loads of 512 bits (one per filter row, not one per tap), weights broadcast (zoffsets 0,
    zstart the tap, zstep 1)."""
    unit, _ = _checked(conv2d_flags("int16", 3, 4, columns=16))
    body = unit.emitted.emitted.text
    macs = re.findall(
        r"mac16\(acc0, X(\d), (\d+), (0x\w+), (0x\w+), (0x\w+), W0, (\d+), (\w+)", body
    )
    assert len(macs) == 6
    assert {m[2:5] for m in macs} == {("0x03020100", "0x07060504", "0x2110")}
    assert [(int(m[0]), int(m[1]), int(m[5])) for m in macs] == [
        (row, start, 4 * row + start) for row in range(3) for start in (0, 2)
    ]
    assert {m[6] for m in macs} == {"0x0"}
    assert body.count("v32int16 X") == 3


_COUNTING_MAIN = """
#include <cstdio>
extern "C" void conv2d(void *, void *, void *);
alignas(64) static {ctype} in_[{in_elements}], w_[{w_elements}], out_[{out_elements}];
int main() {{
  pycc_aie_reset_counters();
  conv2d(in_, w_, out_);
  pycc_aie_counts c = pycc_aie_counters();
  std::printf("%llu %llu %llu %llu\\n", c.macs, c.mac_slots, c.loads, c.stores);
}}
"""


@pytest.mark.parametrize(
    "element, r, s, utilization",
    [
        ("int16", 3, 3, 0.9),  # 9 taps in 5 mac16: one pair across filter rows
        pytest.param("int16", 4, 4, 1.0, marks=pytest.mark.sweep),
        pytest.param("int16", 5, 5, 25 / 26, marks=pytest.mark.sweep),
        ("int32", 3, 3, 1.0),
    ],
)
def test_mac_slot_utilization_counted_by_the_emulation(tmp_path, element, r, s, utilization):
    """Useful MACs over the MAC slots the kernel's intrinsics occupy: 100 % for 32-bit and
    even 16-bit filters; for odd ones the lone taps of two filter rows share a mac16
    (cross-row fusion), above Vyasa's padding bound R / (R + 1)."""
    rows, columns = 3, 32
    unit, _ = _checked(conv2d_flags(element, r, s, rows, columns))
    ctype, row = TYPES[element][0], row_elements(s, columns)
    source = tmp_path / "count.cc"
    source.write_text(
        unit.emitted.emitted.text
        + _COUNTING_MAIN.format(
            ctype=ctype,
            in_elements=(rows + r - 1) * row,
            w_elements=r * s,
            out_elements=rows * columns,
        )
    )
    binary = tmp_path / "count"
    subprocess.run(
        ["c++", "-std=c++14", "-O1", f"-I{EMULATION_HEADERS}", source, "-o", binary], check=True
    )
    macs, slots, loads, stores = map(
        int, subprocess.run([binary], capture_output=True, text=True, check=True).stdout.split()
    )
    useful = rows * columns * r * s
    assert useful / slots == pytest.approx(utilization)
    vectors = rows * columns // (16 if element == "int16" else 8)
    assert stores == vectors  # lazy stores: one per output vector
    assert macs == slots // (32 if element == "int16" else 8)


ACCUMULATING_C = """
#include <stdint.h>
void blur_add(const int32_t in[6][32], int32_t out[4][16]) {
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 16; x++) {
      int acc = out[y][x];
      acc += 1 * in[y][x] + 2 * in[y][x + 1] + 1 * in[y][x + 2];
      acc += 2 * in[y + 1][x] + 4 * in[y + 1][x + 1] + 2 * in[y + 1][x + 2];
      acc += in[y + 2][x] + 2 * in[y + 2][x + 1] + in[y + 2][x + 2];
      out[y][x] = acc;
    }
}
"""


def test_constant_weights_and_an_accumulated_output(kernel_file):
    """A 3x3 binomial filter written out with constant coefficients, added to the output."""
    unit = compiled(kernel_file("blur_add", ACCUMULATING_C), [], PASSES, target="aie")
    result = unit.check("blur_add", {})
    assert result.status == "OK" and result.changed, result
    body = unit.emitted.emitted.text
    assert "ups(PYCC_AIE_LOAD(v8int32" in body  # the old output starts the accumulator
    assert "pycc_w[16] = {1, 2, 1, 2, 4, 2, 1, 2, 1};" in body  # the rest zero


REFUSED_C = """
#include <stdint.h>
void ragged(const int16_t in[4][40], const int16_t w[3], int16_t out[2][24]) {
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 24; x++) {
      int s = 0;
      for (int j = 0; j < 3; j++) s += w[j] * in[y][x + j];
      out[y][x] = s;
    }
}
void odd_rows(const int16_t in[4][36], const int16_t w[3], int16_t out[2][16]) {
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 16; x++) out[y][x] = w[0] * in[y][x] + w[1] * in[y + 1][x + 1];
}
void sized(int n, const float *in, const float *w, float *out) {
  for (int x = 0; x < n; x++) out[x] = w[0] * in[x] + w[1] * in[x + 1];
}
void squares(const int32_t in[4][32], int32_t out[4][16]) {
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 16; x++) out[y][x] = in[y][x] * in[y][x + 1];
}
void two_outputs(const int32_t in[32], int32_t a[16], int32_t b[16]) {
  for (int x = 0; x < 16; x++) { a[x] = in[x]; b[x] = in[x + 1]; }
}
void pairwise(const float in[40], const float w[2], float out[16]) {
  for (int x = 0; x < 16; x++)
    out[x] = (w[0] * in[x] + w[1] * in[x + 1]) + (w[0] * in[x + 2] + w[1] * in[x + 3]);
}
"""


@pytest.mark.parametrize(
    "function, why",
    [
        ("ragged", "runs 24 times from 0: the AIE kernel computes 16 outputs at a time"),
        ("odd_rows", "rows of 72 bytes, not a multiple of 16"),
        ("sized", "without a constant trip count"),
        ("squares", "both move with the innermost loop"),
        ("two_outputs", "2 stores"),
        ("pairwise", "not summed term after term"),
    ],
)
def test_what_the_back_end_cannot_write_is_skipped_with_its_reason(kernel_file, function, why):
    unit = compiled(kernel_file("refused", REFUSED_C), [], PASSES, target="aie")
    result = unit.check(function, {"n": "16"})
    assert result.status == "SKIPPED" and why in result.message, result


def test_emit_writes_a_directory_with_graph_glue_whose_testbench_agrees_with_the_c(
    tmp_path, capsys
):
    """`emit --target aie -o DIR`: the kernel C++ (also behind ADF buffer ports), an ADF graph
    (kernel::create, a PLIO per port, connect<>, source, runtime<ratio>) with its `main`, a
    testbench and the emulation headers (`make sim`, which runs the graph on data files
    through the emulated ADF API against the original C, in the sweep: 6 s of c++);
    `check --target aie` unrolls the reductions by default."""
    flags = conv2d_flags("int16", 3, 3, rows=4)
    out = tmp_path / "bundle"
    assert main(["emit", CONV2D, *flags, "--target", "aie", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "Makefile", "conv2d.cc", "conv2d_graph.cpp", "conv2d_graph.h", "pycc_adf.h",
        "pycc_aie.h", "pycc_aie_api.h", "tb_conv2d.cc",
    ]  # fmt: skip
    graph = (out / "conv2d_graph.h").read_text()
    for needle in (
        "k = adf::kernel::create(conv2d_ports);",
        "adf::input_buffer<int16, adf::extents<240>> &in",  # (4 + 2) rows of 40
        "adf::output_buffer<int16, adf::extents<128>> &out",
        'adf::input_plio::create("w", adf::plio_64_bits, "data/w.txt");',
        "adf::connect<>(k.out[0], out.in[0]);",
        'adf::source(k) = "conv2d.cc";',
        "adf::runtime<adf::ratio>(k) = 0.9;",
    ):
        assert needle in graph, needle
    testbench = (out / "tb_conv2d.cc").read_text()
    assert "pycc_original_conv2d(in.data(), w.data(), out.data());" in testbench
    assert main(["check", CONV2D, *flags, "--target", "aie"]) == 0
    assert "OK conv2d: bit-exact" in capsys.readouterr().out


@pytest.mark.parametrize(
    "element, r, s, rows",
    [
        ("int16", 2, 2, 8),
        pytest.param("int16", 3, 5, 4, marks=pytest.mark.sweep),
        pytest.param("int32", 3, 3, 8, marks=pytest.mark.sweep),
        ("float", 3, 3, 4),
    ],
)
def test_output_rows_unrolled_and_jammed_share_their_input_rows(element, r, s, rows):
    """Several output rows per iteration (as many as the model chooses, up to `rows`): one
    accumulator and one store each, every input row loaded once per iteration, bit-exact."""
    unit, _ = _checked(conv2d_flags(element, r, s, rows=rows, columns=16))
    body = unit.emitted.emitted.text
    chosen = len(re.findall(r"PYCC_AIE_STORE\(", body))
    assert 1 < chosen <= rows and f"i0 += {chosen})" in body, body
    assert len(re.findall(r"undef_v\d+\w+\(\)", body)) == chosen + r - 1  # input rows, once


def test_more_outputs_than_accumulator_registers_go_one_after_the_other():
    """AIE1 has 4 accumulator registers (eight 384-bit AM halves): 8 output rows of a 3x3
    int16 filter fit only with the MACs output after output, each accumulator stored after
    its last MAC, so the model counts at most 4 live (and the kernel stays bit-exact)."""
    unit, _ = _checked(conv2d_flags("int16", 3, 3, rows=16, columns=16))
    plan = kernel_plan(convolution(unit.module.get_global("conv2d")))
    model = estimate(plan)
    assert plan.outputs == 8 and plan.by_output and model.accumulators <= 4 and model.fits
    body = unit.emitted.emitted.text
    assert body.index("PYCC_AIE_STORE(") < body.rindex("= mac16(")  # stored as they finish
    assert estimate(Plan(plan.conv, plan.path, 8, 1, by_output=False)).accumulators == 8


def test_the_model_reproduces_the_padding_bounds_and_the_2x2_choice():
    """Vyasa §3.6 bounds 16-bit odd filters by 32 R / (R + 1) MACs/cycle (a zero tap a row);
    with cross-row fusion the bound is 32 R^2 / (2 mac16 per output vector), even filters
    32; the paper's tuner took 8 rows for the 2x2 16-bit filter, and so does the model
    (fewer rows leave the load units idle)."""
    for r in (2, 3, 4, 5):
        lowered = lower_file(CONV2D, conv2d_flags("int16", r, r, rows=16, columns=256))
        module = run_passes(lowered.module, parse_pipeline(PASSES)).module
        best = estimate(kernel_plan(convolution(module.get_global("conv2d"))))
        bound = 32 * r * r / (2 * _macs_per_output("int16", r, r))  # 28.8 for 3x3, not 24
        assert best.utilization == pytest.approx(bound / 32)
        assert 0.9 * bound < best.macs_per_cycle <= bound <= PEAK["int16"]
        assert best.fits
        if r == 2:
            assert best.rows == 8


LAYERS = str(Path(__file__).parent / "corpus" / "aie" / "conv2d_layer.c")


@pytest.mark.parametrize(
    "function, element, sizes",
    [
        ("conv2d_layer", "int16", {"R": 3, "S": 3, "C": 2, "K": 3, "Y": 2, "X": 16}),
        pytest.param(
            "conv2d_layer",
            "int32",
            {"R": 1, "S": 1, "C": 3, "K": 2, "Y": 2, "X": 16},  # PW
            marks=pytest.mark.sweep,
        ),
        ("conv2d_depthwise", "float", {"R": 3, "S": 1, "K": 3, "Y": 4, "X": 8}),
    ],
)
def test_layers_fill_their_weights_per_output_channel(function, element, sizes):
    """Table VII's layers: the weights change with the output channel k, so the kernel fills
    its weight table once per k (inside that loop), and stays bit-exact."""
    ctype, acc = TYPES[element]
    flags = [f"-D{k}={v}" for k, v in {"T": ctype, "ACC": acc, **sizes}.items()]
    unit = compiled(LAYERS, flags, PASSES, target="aie")
    result = unit.check(function, {})
    assert result.status == "OK" and result.changed, result
    body = unit.emitted.emitted.text
    body = body[body.index(f"void {function}(") :]
    assert body.index("for (int i0") < body.index("pycc_w[") < body.index("for (int i1")
    assert f"{sizes['K']}, {sizes['K']})" in body  # the channel loop's pragma


@pytest.mark.parametrize(
    "element, inputs",
    [("int16", 5), pytest.param("int32", 8, marks=pytest.mark.sweep), ("float", 3)],
)
def test_a_fully_connected_layer_runs_its_lanes_along_the_output_channels(element, inputs):
    """FC has one output loop, k, along which C's w[k][c] moves C elements at a time: the
    kernel takes w packed as [c][k] (the host packs it), broadcasts the inputs and reads
    the weights as lanes (Vyasa's role swap), several output vectors an iteration (the
    vector loop unrolled and jammed: one loop, no rows), bit-exact."""
    ctype, acc = TYPES[element]
    flags = [f"-DT={ctype}", f"-DACC={acc}", f"-DC={inputs}", "-DK=64", "-DR=1", "-DS=1"]
    unit = compiled(LAYERS, flags, PASSES, target="aie")
    result = unit.check("fully_connected", {})
    assert result.status == "OK" and result.changed, result
    text = unit.emitted.emitted.text
    kernel = text[text.index("void fully_connected_packed(") :]
    assert "PYCC_AIE_ELEMENT" not in kernel.split("for (")[1]  # the weights: lanes, not scalars
    assert "PYCC_AIE_AT(w, " in kernel and "PYCC_AIE_ELEMENT(" + ctype + ", in, " in kernel
    assert f"b[i0 * 1 + i1 * 64] = a[i0 * {inputs} + i1 * 1];" in text  # w[k][c] -> [c][k]
    plan = kernel_plan(convolution(unit.module.get_global("fully_connected")))
    schedule = plan.schedule()
    assert schedule.startswith("loops k, the lanes along k")
    assert schedule.endswith("'w' packed [d1 k] (C's [k d1])")
    assert plan.vectors > 1 and kernel.count("PYCC_AIE_STORE(") == plan.vectors


def test_output_channels_as_lanes_when_the_rows_are_too_short(kernel_file):
    """A pointwise layer whose rows (X = 3) are shorter than a vector: its lanes run along k,
    the output is packed [y x k] and unpacked by the host after the kernel (bit-exact, the
    guard zones around every array untouched)."""
    flags = ["-DT=short", "-DACC=int", "-DC=3", "-DK=16", "-DR=1", "-DS=1", "-DX=3", "-DY=5"]
    unit = compiled(LAYERS, flags, PASSES, target="aie")
    result = unit.check("conv2d_layer", {})
    assert result.status == "OK" and result.changed, result
    text = unit.emitted.emitted.text
    assert "conv2d_layer_unpack_out(pycc_packed_out, out);" in text
    plan = kernel_plan(convolution(unit.module.get_global("conv2d_layer")))
    assert plan.schedule().startswith("loops y x k, the lanes along k; 'out' packed [y x k]")
    again = kernel_plan(convolution(unit.module.get_global("conv2d_layer")))  # deterministic
    signature = [("void *", n) for n in ("in", "w", "out")]
    assert again.write(signature) == plan.write(signature)


def test_loops_written_in_the_wrong_order_are_interchanged(kernel_file):
    """The x loop outside the y loop (C's innermost loop walks the rows): the tuner puts x
    innermost, no array packed, bit-exact; the source's order had no vector loop."""
    source = kernel_file(
        "transposed",
        "void blur(const int in[6][40], const int w[3], int out[4][40]) {\n"
        "  for (int x = 0; x < 32; x++)\n"
        "    for (int y = 0; y < 4; y++)\n"
        "      out[y][x] = w[0] * in[y][x] + w[1] * in[y + 1][x + 1] + w[2] * in[y + 2][x + 2];\n"
        "}\n",
    )
    unit = compiled(source, [], PASSES, target="aie")
    result = unit.check("blur", {})
    assert result.status == "OK" and result.changed, result
    plan = kernel_plan(convolution(unit.module.get_global("blur")))
    assert plan.schedule() == "loops y x, the lanes along x" and plan.rows > 1


def test_packing_round_trips_and_is_a_permutation(tmp_path):
    """F10: the emitted pack and unpack routines, compiled, give back every element, and
    the packed addresses of all elements are each element's own slot."""
    flags = ["-DT=int", "-DACC=int", "-DC=3", "-DK=16", "-DR=1", "-DS=1", "-DX=3", "-DY=5"]
    unit = compiled(LAYERS, flags, PASSES, target="aie")
    plan = kernel_plan(convolution(unit.module.get_global("conv2d_layer")))
    (layout,) = [lay for lay in plan.conv.layouts if lay.base == "out"]
    addresses = range(0, 4 * layout.elements, 4)
    assert sorted(layout.packed(a) for a in addresses) == list(addresses)
    main_c = tmp_path / "roundtrip.cc"
    main_c.write_text(
        "#include <cstdint>\n#include <cstdio>\n"
        + "\n".join(pack_functions("f", layout))
        + f"\nint main() {{ static int32_t a[{layout.elements}], p[{layout.elements}], "
        f"b[{layout.elements}];\n"
        f"  for (int i = 0; i < {layout.elements}; i++) a[i] = i * 7 + 1;\n"
        "  f_pack_out(a, p); f_unpack_out(p, b);\n"
        f"  int moved = 0, same = 1; for (int i = 0; i < {layout.elements}; i++) "
        "{ same &= a[i] == b[i]; moved += a[i] != p[i]; }\n"
        '  std::printf("%d %d\\n", same, moved > 0); }\n'
    )
    binary = tmp_path / "roundtrip"
    subprocess.run(["c++", str(main_c), "-o", str(binary)], check=True)
    assert subprocess.run([binary], capture_output=True, text=True).stdout.split() == ["1", "1"]


def test_a_conv3d_is_a_convolution_too():
    """CONV3D: the z loop outside the output rows, R x R x R taps, bit-exact."""
    flags = ["-DR=3", "-DZ=2", "-DY=2", "-DX=16"]
    unit = compiled(str(Path(__file__).parent / "corpus" / "aie" / "conv3d.c"), flags, PASSES,
                    target="aie")  # fmt: skip
    result = unit.check("conv3d", {})
    assert result.status == "OK" and result.changed, result
    assert unit.emitted.emitted.text.count("= mac16(") == 2 * _macs_per_output("int16", 9, 3)


@pytest.mark.parametrize(
    "element, r, s",
    [("int16", 3, 3), pytest.param("int32", 2, 10, marks=pytest.mark.sweep), ("float", 3, 3)],
)
def test_the_ai_engine_api_style_is_bit_exact_too(element, r, s):
    """`--target aie:style=api`: the same plan spelled with aie::vector, aie::accum and one
    aie::sliding_mul_ops per run of taps of a filter row within one z register (a 3x3 int16
    row: 2 mac16 pairs -> 1 run of 4 points)."""
    flags = conv2d_flags(element, r, s, columns=16 if element == "int16" else 8)
    unit = compiled(CONV2D, flags, PASSES, target="aie:style=api")
    result = unit.check("conv2d", {})
    assert result.status == "OK" and result.changed, result
    body = unit.emitted.emitted.text
    assert "mac16(" not in body and "lmac8(" not in body and "fpmac(" not in body
    runs = re.findall(r"aie::sliding_mul_ops<\d+, (\d+), 1, (\d+), 1,", body)
    columns = 2 if element == "int16" else 1
    points = sum(int(p) for p, _ in runs)
    assert points == columns * _macs_per_output(element, r, s), runs  # each tap (and pad) once
    if element == "int16":  # the lone taps of two rows: one register of 1024 bits
        assert "aie::concat(X0, X1)" in body and any(step == "32" for _, step in runs)
    assert body.count("aie::store_v(") == 1


def test_remarks_say_what_each_kernel_got_and_when_its_arrays_exceed_the_tile():
    """F13: the tile's 128 KB of data memory; a volume too large is reported, not refused."""
    volume = str(Path(__file__).parent / "corpus" / "aie" / "conv3d.c")
    unit = compiled(volume, ["-DR=3", "-DZ=64", "-DT=int32_t"], PASSES, target="aie")
    messages = [r.message for r in unit.remarks if r.pass_name == "aie-kernel"]
    assert any(m.startswith("AI Engine kernel: loops ") and "8 lanes x 1 column of int32" in m
               for m in messages)  # fmt: skip
    assert any("more than the tile's 131072 bytes of data memory" in m for m in messages)
    small = compiled(CONV2D, conv2d_flags("int16", 3, 3), PASSES, target="aie")
    assert not any("data memory" in r.message for r in small.remarks)


REVIEWED_C = """
#include <stdint.h>
void narrow(const int16_t in[2][40], const int16_t w[3], int16_t out[2][16]) {
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 16; x++) {
      int8_t s = 0;
      for (int j = 0; j < 3; j++) s += w[j] * in[y][x + j];
      out[y][x] = s;
    }
}
void unsigned32(const uint32_t in[2][24], const uint32_t w[2], uint32_t out[2][16]) {
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 16; x++) out[y][x] = w[0] * in[y][x] + w[1] * in[y][x + 1];
}
void unsigned16(const uint16_t in[40], const uint16_t w[2], uint16_t out[16]) {
  for (int x = 0; x < 16; x++) out[x] = w[0] * in[x] + w[1] * in[x + 1];
}
void repeated(const float in[24], const float w[2], float out[8], int unused) {
  for (int x = 0; x < 8; x++) out[x] = w[0] * in[x] + w[1] * in[x + 1] + w[0] * in[x];
}
void in_place(int32_t a[4][32], const int32_t w[2]) {
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 16; x++) a[y + 1][x] = w[0] * a[y][x] + w[1] * a[y][x + 1];
}
void wide_constant(const int16_t in[40], int16_t out[16]) {
  for (int x = 0; x < 16; x++) out[x] = 40000 * in[x] + 3 * in[x + 1];
}
void negative(const int16_t in[40], int16_t out[16]) {
  for (int x = 0; x < 16; x++) out[x] = (-2) * in[x] + in[x + 1] * -3;
}
void in_memory(const int32_t in[32], const int32_t w[3], int32_t out[16]) {
  for (int x = 0; x < 16; x++)
    for (int j = 0; j < 3; j++) out[x] += w[j] * in[x + j];
}
void first_product(const float in[24], float out[8]) {
  for (int x = 0; x < 8; x++) out[x] = 0.5f * in[x] + 0.25f * in[x + 1];
}
"""


@pytest.mark.parametrize(
    "function, status, why",
    [
        ("narrow", "SKIPPED", "converts i8 to i16"),  # an int8 sum is not C's int16 sum
        ("unsigned32", "SKIPPED", "'in' holds unsigned integers"),
        ("unsigned16", "SKIPPED", "holds unsigned integers"),  # no crash on unsigned inputs
        ("repeated", "OK", "bit-exact"),  # a repeated tap, C's float order; an unused int
        ("in_place", "SKIPPED", "'a' is read as well as written"),
        ("wide_constant", "SKIPPED", "40000 does not fit the 16-bit weight lanes"),
        ("negative", "OK", "bit-exact"),
        ("in_memory", "SKIPPED", "a sum kept in memory"),
        ("first_product", "OK", "bit-exact"),
    ],
)
def test_what_a_review_found(kernel_file, function, status, why):
    unit = compiled(kernel_file("reviewed", REVIEWED_C), [], PASSES, target="aie")
    result = unit.check(function, {"unused": "3"})
    assert result.status == status and why in result.message, result
    if function == "first_product":  # C's sum starts with its first product (-0.0 + -0.0)
        assert "acc0 = fpmul(X0, " in unit.emitted.emitted.text


@pytest.mark.sweep  # 20 s of unrolling; the sum is walked without recursion
def test_a_thousand_taps_are_refused_not_a_crash(kernel_file):
    taps = " + ".join(f"w[{k}] * in[x + {k}]" for k in range(1024))
    source = "void long_fir(const int in[1040], const int w[1024], int out[16]) {\n"
    source += f"  for (int x = 0; x < 16; x++) out[x] = {taps};\n}}\n"
    unit = compiled(kernel_file("long_fir", source), [], PASSES, target="aie")
    result = unit.check("long_fir", {})
    assert result.status == "SKIPPED" and "more than the largest register" in result.message


def test_make_sim_with_several_kernels_in_one_file(tmp_path):
    """Every kernel of the file is renamed in the original C each testbench links (the
    kernel file defines them all); `make sim` runs both (in the sweep: 5 s of c++)."""
    flags = ["-DK=2", "-DC=2", "-DX=16", "-DY=2", "-DR=1"]
    out = tmp_path / "layers"
    assert main(["emit", LAYERS, *flags, "--target", "aie", "-o", str(out)]) == 0
    makefile = (out / "Makefile").read_text()
    renames = "-Dconv2d_layer=pycc_original_conv2d_layer "
    renames += "-Dconv2d_depthwise=pycc_original_conv2d_depthwise"
    assert makefile.count(renames) == 2, makefile


@pytest.mark.sweep
def test_make_sim_runs_every_kernels_graph(tmp_path):
    """The layers and the fully connected one, whose testbench packs its weights and
    whose graph takes them packed."""
    flags = ["-DK=16", "-DC=2", "-DX=16", "-DY=2", "-DR=1"]
    out = tmp_path / "layers"
    assert main(["emit", LAYERS, *flags, "--target", "aie", "-o", str(out)]) == 0
    assert (
        "fully_connected_pack_w(w.data(), w_packed.data());"
        in (out / "tb_fully_connected.cc").read_text()
    )
    sim = subprocess.run(["make", "-s", "sim"], cwd=out, capture_output=True, text=True)
    assert sim.returncode == 0 and sim.stdout.split()[-3:] == ["same"] * 3, sim.stdout


@pytest.mark.sweep  # 10 s of c++
def test_make_sim_agrees_with_the_c_and_notices_a_wrong_kernel(tmp_path):
    out = tmp_path / "bundle"
    flags = conv2d_flags("int16", 3, 3, rows=4)
    assert main(["emit", CONV2D, *flags, "--target", "aie", "-o", str(out)]) == 0
    sim = subprocess.run(["make", "-s", "sim"], cwd=out, capture_output=True, text=True)
    assert sim.returncode == 0 and sim.stdout.strip().endswith("same"), sim.stdout + sim.stderr
    assert (out / "host" / "libconv2d.a").exists() or (out / "host" / "conv2d.o").exists()
    kernel = out / "conv2d.cc"
    kernel.write_text(kernel.read_text().replace("srs(acc1, 0)", "srs(acc1, 1)"))
    wrong = subprocess.run(["make", "-s", "sim"], cwd=out, capture_output=True, text=True)
    assert wrong.returncode != 0 and "differ" in wrong.stdout, wrong.stdout


def test_bad_input_gets_a_diagnostic_and_no_output(kernel_file, tmp_path, capsys):
    bad = kernel_file("bad", "void f(int *a) {\n  for (int i = 0; i < 16; i++) a[i] = ;\n}\n")
    out = tmp_path / "out"
    assert main(["emit", bad, "--target", "aie", "-o", str(out)]) == 1
    assert "bad.c:2:39: error: expected expression" in capsys.readouterr().err
    assert not out.exists()
    assert main(["check", CONV2D, "--target", "aie:style=fast"]) == 1
    assert "style=fast: expected intrinsics or api" in capsys.readouterr().err
