"""The host emulation of TI's C66x intrinsics (runtime/c66x/c6x_host.h), intrinsic by
intrinsic, against values computed by hand from TI's documented semantics (SPRUI04's
intrinsic tables, SPRUGH7's instruction descriptions): lane order, rounding, wrapping,
aligned vs unaligned memory, the alignment checks, and `__float2_t` not being a number."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pycc_stencil.runtime.emitted import STRICT_FLAGS, include_flags
from pycc_stencil.runtime.reference import compiler

PROGRAM = Path(__file__).parent / "c66x_intrinsics.c"

#: case -> the printed bits (high lane first for pairs), worked out by hand in the comments
EXPECTED = {
    "ftof2": "40a00000 40c00000",  # _ftof2(5, 6): high 5.0f, low 6.0f
    "amem8_f2_load": "40000000 3f800000",  # f[0] = 1 is the low lane, f[1] = 2 the high
    "mem8_f2_load": "40400000 40000000",  # from f[1]: low 2, high 3
    "amem8_f2_const": "40800000 40400000",  # from f[2]: low 3, high 4
    "mem8_f2_const": "40a00000 40800000",  # from f[3]: low 4, high 5
    "amem8_f2_store": "41000000 40e00000",  # _ftof2(7, 8) stored: f[4] = 8, f[5] = 7
    "mem8_f2_store": "41200000 41100000",  # _ftof2(9, 10) at f[1]: f[1] = 10, f[2] = 9
    "snan_kept": "7fa00001 ffc00002",  # NaN payloads pass through unchanged
    "daddsp": "3f800000 3f800001",  # 1 + 2^-24 ties to even (1); 1 + 0.75 ulp rounds up
    "dsubsp": "40000000 40900000",  # 3 - 1 = 2; 5 - 0.5 = 4.5
    "dmpysp": "c0400000 40400002",  # -3; 3 * (1 + 2^-23) = 3 + 1.5 ulp, tie to even: +2 ulp
    "dmpysp_denormal": "00000200 80000200",  # +-2^-140 = +-2^9 * 2^-149 (subnormal)
    "daddsp_denormal_operand": "00000200 3f800000",  # 2^-140 + 0; 1 + 2^-140 = 1
    "itoll": "80000000ffffffff",
    "hill": "80000000",
    "loll": "ffffffff",
    "dadd": "8000000000000000",  # 0x7fffffff + 1 wraps; 0xffffffff + 1 does not carry
    "dsub": "ffffffffffffffff",  # 0 - 1 in each lane, no borrow
    "amem8_load": "0000000200000001",  # w[0] = 1 low, w[1] = 2 high
    "mem8_load": "fffffffd00000002",  # from w[1]: low 2, high -3
    "amem8_const": "00000004fffffffd",  # from w[2]: low -3, high 4
    "amem8_store": "22222222 11111111",  # _itoll(0x11111111, 0x22222222) at w[2]
    "mem8_store": "44444444 33333333",  # _itoll(0x33333333, 0x44444444) at w[1]
    "amem4_load": "00000001",
    "mem4_load": "44440000",  # bytes 2..5 of 01 00 00 00 44 44 44 44 (little-endian)
    "extu_low_half": "00005678",  # EXTU(x, 16, 16): lane 0 of two halfwords
    "extu_high_half": "00001234",  # EXTU(x, 0, 16): lane 1
    "extu_byte1": "00000056",  # EXTU(x, 16, 24): byte 1
    "pack2": "abcdef01",  # the low halves, the first operand's on top
    "packl4": "22446688",  # bytes 2 and 0 of each operand
    "add2": "80000000",  # 0x7fff + 1 wraps to 0x8000; 0xffff + 1 does not carry
    "sub2": "ffffffff",  # 0 - 1 in each halfword, no borrow
    "add4": "00800200",  # ff+01, 7f+01, 01+01, 80+80 byte by byte
    "sub4": "ffffffff",
    "dadd2": "0000000280000000",  # four halfword lanes: ffff+1, 1+1 | 7fff+1, 8000+8000
    "dsub2": "fffffffefffdfffc",  # 0 - 1, 0 - 2 | 0 - 3, 0 - 4
    "mpy2ll": "40000000fffffffe",  # -32768 * -32768 = 2^30 (high); -1 * 2 = -2 (low)
}
#: the DSP's floating-point unit reads and makes denormals as zero (signs kept)
FLUSHED = {
    "dmpysp_denormal": "00000000 80000000",
    "daddsp_denormal_operand": "00000000 3f800000",
}


def _build(source: Path, out: Path, *defines: str) -> subprocess.CompletedProcess:
    command = [*compiler(), *STRICT_FLAGS, *include_flags("c66x"), *defines, str(source)]
    return subprocess.run([*command, "-o", str(out)], capture_output=True, text=True)


def _results(tmp_path_factory, *defines: str) -> dict[str, str]:
    exe = tmp_path_factory.mktemp("c66x") / "intrinsics"
    built = _build(PROGRAM, exe, *defines)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return dict(line.split(" ", 1) for line in ran.stdout.splitlines())


@pytest.fixture(scope="module")
def ieee(tmp_path_factory) -> dict[str, str]:
    return _results(tmp_path_factory)


@pytest.fixture(scope="module")
def flushed(tmp_path_factory) -> dict[str, str]:
    return _results(tmp_path_factory, "-DPYCC_C66X_DENORMALS_ARE_ZERO")


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_intrinsic(ieee, case):
    assert ieee[case] == EXPECTED[case]


@pytest.mark.parametrize("case", sorted(FLUSHED))
def test_denormals_are_zero_on_request(flushed, case):
    assert flushed[case] == FLUSHED[case]


_MISUSES = {
    "misaligned _amem8_f2": (
        "float f[4] __attribute__((aligned(8)));\n__float2_t v = _amem8_f2(&f[1]);\n(void)v;",
        "not 8-byte aligned",
    ),
    "misaligned _amem8 store": (
        "int w[4] __attribute__((aligned(8)));\n_amem8(&w[3]) = 0;",
        "not 8-byte aligned",
    ),
    "false _nassert": ("int n = 3;\n_nassert(n % 2 == 0);", "_nassert(n % 2 == 0) is false"),
}


@pytest.mark.parametrize("name", sorted(_MISUSES))
def test_misuse_stops_with_the_line(tmp_path, name):
    """What the DSP would get silently wrong stops the host run, naming the source line."""
    body, message = _MISUSES[name]
    source = tmp_path / "misuse.c"
    source.write_text(f'#include "pycc_c66x.h"\nint main(void)\n{{\n{body}\nreturn 0;\n}}\n')
    exe = tmp_path / "misuse"
    built = _build(source, exe)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True)
    assert ran.returncode != 0
    assert message in ran.stderr and "misuse.c:5:" in ran.stderr


def test_float2_is_not_a_number(tmp_path):
    """`__float2_t` is two floats, not a host double: arithmetic on it does not build."""
    source = tmp_path / "sum.c"
    source.write_text(
        '#include "pycc_c66x.h"\n__float2_t sum(__float2_t a, __float2_t b) { return a + b; }\n'
    )
    built = _build(source, tmp_path / "sum.o", "-c")
    assert built.returncode != 0
