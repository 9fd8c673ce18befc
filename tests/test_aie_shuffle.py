"""The AI Engine's shuffle-parameter encoder (issue 17, Vyasa's F5) and the host emulation's
MAC intrinsics (F9): the golden parameter sets of UG1079 and mlir-aie (the reference digest
../shared/reference/aie-vectorization-vyasa.md §1.2, §2.6), the encoder's legality checks, and
the emulation header's mac16/lmac8/fpmac computing, lane by lane, what the documented
selection rules say, compiled by c++."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from pycc_stencil.emit.aie_shuffle import (
    ShuffleConstraintError,
    XSelect,
    ZSelect,
    encode_lane_x,
    encode_lane_z,
    encode_mac16_x,
    encode_mac16_z,
    lane_x_index,
    lane_z_index,
    mac16_x_index,
    mac16_z_index,
)

EMULATION = Path(__file__).parent.parent / "runtime" / "aie"


@pytest.mark.parametrize(
    "a, b, offsets, offsets_hi, square",
    [
        (1, 1, 0x03020100, 0x07060504, 0x2110),  # mlir-aie's conv2d: x[i + j]
        (2, 1, 0x06040200, 0x0E0C0A08, 0x3210),  # x[2i + j]: stride 2, (C/2)Y'X'(2) layouts
        (1, 2, 0x03020100, 0x07060504, 0x3120),  # x[i + 2j]
        (0, 1, 0, 0, 0x1010),  # one row of taps on every lane
    ],
)
def test_mac16_x_golden_parameters(a, b, offsets, offsets_hi, square):
    select = encode_mac16_x(0, a, b)
    assert (select.offsets, select.offsets_hi, select.square) == (offsets, offsets_hi, square)
    assert select.start == 0


def test_ug1079_examples_of_the_16_bit_selection():
    """ "0x24 ... selects index 8, 9 for even row and index 14, 15 for odd row"; "xsquare
    0x2103 ... puts index 3, 0 in the even row and index 1, 2 in the odd row"."""
    pair = XSelect(0, 0x24, 0, 0x3210)
    assert [mac16_x_index(pair, 0, c) for c in (0, 1)] == [8, 9]
    assert [mac16_x_index(pair, 1, c) for c in (0, 1)] == [14, 15]
    square = XSelect(0, 0, 0, 0x2103)
    assert [mac16_x_index(square, 0, c) for c in (0, 1)] == [3, 0]
    assert [mac16_x_index(square, 1, c) for c in (0, 1)] == [1, 2]


def test_an_odd_start_is_an_even_xstart_and_a_shifted_square():
    select = encode_mac16_x(5, 1, 1)
    assert select.start == 4 and select.square == 0x3221
    assert [mac16_x_index(select, 3, c) for c in (0, 1)] == [8, 9]


def test_weights_are_broadcast_from_the_z_buffer():
    select = encode_mac16_z(6, 0, 1)
    assert (select.start, select.offsets, select.offsets_hi, select.step) == (6, 0, 0, 1)
    assert {mac16_z_index(select, lane, 1) for lane in range(16)} == {7}
    lanes = encode_lane_z(3, 0, 8)
    assert {lane_z_index(lanes, lane) for lane in range(8)} == {3}


def test_32_bit_lanes():
    select = encode_lane_x(2, 1)
    assert select.offsets == 0x76543210
    assert [lane_x_index(select, lane) for lane in range(8)] == list(range(2, 10))


@pytest.mark.parametrize(
    "encode, why",
    [
        (lambda: encode_mac16_x(0, 1, 3), "must be 0, 1 or even"),  # b = 3
        (lambda: encode_mac16_x(0, 2, 2), "both exceed 1"),
        (lambda: encode_mac16_x(1, 2, 1), "odd start"),
        (lambda: encode_mac16_x(0, 4, 1), "4-bit"),  # lane 14 would need offset 16
        (lambda: encode_mac16_z(16, 0, 1), "zstart 16"),
        (lambda: encode_lane_x(0, 3), "4-bit"),  # lane 7: offset 21
        (lambda: encode_lane_z(8, 0, 8), "outside"),
    ],
)
def test_what_the_network_cannot_select_is_refused(encode, why):
    with pytest.raises(ShuffleConstraintError, match=why):
        encode()


def test_every_encodable_selection_selects_what_was_asked():
    """The encoder checks its own output against the rules; over a range of strides each
    selection is either exact or refused, never wrong."""
    encoded = 0
    for start in range(6):
        for a in range(4):
            for b in range(5):
                try:
                    select = encode_mac16_x(start, a, b)
                except ShuffleConstraintError:
                    continue
                encoded += 1
                for lane in range(16):
                    for column in range(2):
                        assert mac16_x_index(select, lane, column) == start + a * lane + b * column
    assert encoded > 30


# ---------------------------------------------------------------------------- the emulation

_PROGRAM = """
#include <cstdio>
#include "pycc_aie.h"
int main() {{
  v64int16 x; v16int16 z; v32int32 x32; v8int32 z32; v32float xf; v8float zf;
{fill}
{cases}
  pycc_aie_counts c = pycc_aie_counters();
  std::printf("counts %llu %llu\\n", c.macs, c.mac_slots);
  return 0;
}}
"""


def _random_cases(rng: random.Random) -> tuple[list[str], list[tuple]]:
    """C++ statements printing mac16/lmac8/fpmac results, and the parameters of each."""
    lines, cases = [], []
    for _ in range(12):
        square = sum(rng.randrange(4) << (4 * k) for k in range(4))  # each field picks 1 of 4
        x = XSelect(2 * rng.randrange(16), rng.getrandbits(32), rng.getrandbits(32), square)
        z = ZSelect(rng.randrange(16), rng.getrandbits(32), rng.getrandbits(32), rng.randrange(4))
        lines.append(
            f"  {{ v16acc48 a = mac16(null_v16acc48(), x, {x.start}, {x.offsets}u, {x.offsets_hi}u,"
            f" {x.square}u, z, {z.start}, {z.offsets}u, {z.offsets_hi}u, {z.step});"
            ' for (int i = 0; i < 16; i++) std::printf("%lld ", (long long)a.lane[i]);'
            ' std::printf("\\n"); }'
        )
        cases.append(("mac16", x, z))
    for kind, call in (
        ("lmac8", "lmac8(null_v8acc80(), x32"),
        ("fpmac", "fpmac(null_v8float(), xf"),
    ):
        for _ in range(6):
            x = XSelect(rng.randrange(32), rng.getrandbits(32), 0)
            z = ZSelect(rng.randrange(8), rng.getrandbits(32))
            zbuff = "z32" if kind == "lmac8" else "zf"
            lines.append(
                f"  {{ auto a = {call}, {x.start}, {x.offsets}u, {zbuff}, {z.start}, {z.offsets}u);"
                ' for (int i = 0; i < 8; i++) std::printf("%lld ", (long long)a.lane[i]);'
                ' std::printf("\\n"); }'
            )
            cases.append((kind, x, z))
    return lines, cases


def test_the_emulated_macs_follow_the_lane_rules(tmp_path):
    """Random parameters (including offsets past the buffer's end, which wrap): every lane of
    the emulation's result is the sum the Python rules give."""
    rng = random.Random(17)
    xs = [rng.randrange(-50, 50) for _ in range(64)]
    zs = [rng.randrange(-50, 50) for _ in range(16)]
    fill = "\n".join(
        [f"  x.lane[{k}] = {v};" for k, v in enumerate(xs)]
        + [f"  z.lane[{k}] = {v};" for k, v in enumerate(zs)]
        + [f"  x32.lane[{k}] = {v}; xf.lane[{k}] = {v};" for k, v in enumerate(xs[:32])]
        + [f"  z32.lane[{k}] = {v}; zf.lane[{k}] = {v};" for k, v in enumerate(zs[:8])]
    )
    lines, cases = _random_cases(rng)
    source = tmp_path / "lanes.cc"
    source.write_text(_PROGRAM.format(fill=fill, cases="\n".join(lines)))
    binary = tmp_path / "lanes"
    subprocess.run(
        [
            "c++",
            "-std=c++14",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{EMULATION}",
            source,
            "-o",
            binary,
        ],
        check=True,
    )
    output = subprocess.run([binary], capture_output=True, text=True, check=True).stdout.split("\n")
    for (kind, x, z), line in zip(cases, output):
        got = [int(v) for v in line.split()]
        if kind == "mac16":
            want = [
                sum(
                    xs[mac16_x_index(x, lane, c) % 64] * zs[mac16_z_index(z, lane, c) % 16]
                    for c in (0, 1)
                )
                for lane in range(16)
            ]
        else:
            want = [
                xs[lane_x_index(x, lane) % 32] * zs[lane_z_index(z, lane) % 8] for lane in range(8)
            ]
        assert got == want, (kind, x, z)
    assert output[len(cases)] == f"counts {len(cases)} {12 * 32 + 12 * 8}"


def test_unaligned_vector_loads_are_caught(tmp_path):
    source = tmp_path / "unaligned.cc"
    source.write_text(
        '#include "pycc_aie.h"\n'
        "alignas(32) int16_t data[64];\n"
        "int main(int argc, char **) { v16int16 v = PYCC_AIE_LOAD(v16int16, data + argc);"
        " return v.lane[0]; }\n"
    )
    binary = tmp_path / "unaligned"
    subprocess.run(["c++", "-std=c++14", f"-I{EMULATION}", source, "-o", binary], check=True)
    run = subprocess.run([binary], capture_output=True, text=True)
    assert run.returncode != 0 and "unaligned vector load" in run.stderr


def test_srs_rounds_half_up_and_saturates(tmp_path):
    """The device's accumulators are wider than its lanes: srs saturates, where C's
    conversion wraps (a kernel is bit-exact with C only where its sums fit the lane)."""
    source = tmp_path / "srs.cc"
    source.write_text(
        '#include <cstdio>\n#include "pycc_aie.h"\n'
        "int main() { v16acc48 a = null_v16acc48(); v8acc80 b = null_v8acc80();\n"
        "  a.lane[0] = 40000; a.lane[1] = -40000; a.lane[2] = 6; a.lane[3] = -6; a.lane[4] = 5;\n"
        "  b.lane[0] = 3000000000LL; b.lane[1] = -3000000000LL; b.lane[2] = 10;\n"
        "  v16int16 s = srs(a, 0), r = srs(a, 2); v8int32 t = srs(b, 0), u = srs(ups(t, 1), 1);\n"
        '  std::printf("%d %d %d %d %d %d %d %d %d %d %d", s.lane[0], s.lane[1], r.lane[2],'
        " r.lane[3], r.lane[4], t.lane[0], t.lane[1], t.lane[2], u.lane[2], u.lane[0],"
        " srs(ups(s, 3), 3).lane[1]); }\n"
    )
    binary = tmp_path / "srs"
    subprocess.run(
        ["c++", "-std=c++14", "-Wall", "-Werror", f"-I{EMULATION}", source, "-o", binary],
        check=True,
    )
    out = subprocess.run([binary], capture_output=True, text=True, check=True).stdout.split()
    # 6/4 = 1.5 -> 2, -6/4 = -1.5 -> -1 (half up), 5/4 -> 1
    assert out == ["32767", "-32768", "2", "-1", "1", "2147483647", "-2147483648", "10", "10",
                   "2147483647", "-32768"]  # fmt: skip
