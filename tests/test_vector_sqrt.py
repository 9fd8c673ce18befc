"""Square roots LLVM scalarizes on SSE-only targets are packed again, as gcc packs them.

A time-tiled sweep of square roots built without `-march` ran 1.7x slower than gcc's untiled
loop: LLVM's vectorizer computed the roots lane by lane. The drop-in tests build such a
kernel at plain x86-64 and check both the program's output (identical to cc's) and that the
code pycc-stencil emitted uses the packed instruction.
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import pytest
from pycc_stencil.emit.host_jit import initialize, optimize, parse_verified
from pycc_stencil.emit.vector_sqrt import bind_vector_sqrt
from test_compiler_mode import PYCC, clean_env, functions_of, run, units_for
from test_dropin_flags import both

LOOP = """\
define void @f(ptr noalias %a, ptr noalias %b, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
  %pa = getelementptr inbounds TYPE, ptr %a, i64 %i
  %x = load TYPE, ptr %pa
  %s = call TYPE @llvm.sqrt.SUFFIX(TYPE %x)
  %pb = getelementptr inbounds TYPE, ptr %b, i64 %i
  store TYPE %s, ptr %pb
  %i.next = add nsw i64 %i, 1
  %c = icmp slt i64 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
declare TYPE @llvm.sqrt.SUFFIX(TYPE)
"""


def sse2_optimized(element: str) -> str:
    """The loop of square roots after LLVM's -O3 for the baseline x86-64 (SSE2)."""
    initialize()
    module = parse_verified(
        LOOP.replace("TYPE", element).replace("SUFFIX", {"float": "f32", "double": "f64"}[element])
    )
    machine = llvm.Target.from_triple("x86_64-unknown-linux-gnu").create_target_machine(
        cpu="x86-64", opt=3
    )
    optimize(module, 3, machine)
    return str(module)


@pytest.mark.parametrize(("element", "lanes"), [("double", 2), ("float", 4)])
def test_scalarized_roots_become_one_vector_call(element, lanes):
    text = sse2_optimized(element)
    assert f"extractelement <{lanes} x {element}>" in text, "LLVM no longer scalarizes the roots"
    packed = bind_vector_sqrt(text)
    suffix = {"float": "f32", "double": "f64"}[element]
    calls = re.findall(rf"call <{lanes} x {element}> @llvm\.sqrt\.v{lanes}{suffix}\(", packed)
    assert calls, packed
    parse_verified(packed)  # dominance and the new declaration


PARTS = """\
define <4 x float> @g(<4 x float> %v, <4 x float> %w) {
  %a = extractelement <4 x float> %v, i64 0
  %b = extractelement <4 x float> %v, i64 1
  %c = extractelement <4 x float> %w, i64 2
  %d = extractelement <4 x float> %v, i64 3
  %ra = call float @llvm.sqrt.f32(float %a)
  %rb = call float @llvm.sqrt.f32(float %b)
  %rc = call float @llvm.sqrt.f32(float %c)
  %rd = call float @llvm.sqrt.f32(float %d)
  %x0 = insertelement <4 x float> poison, float %ra, i64 0
  %x1 = insertelement <4 x float> %x0, float %rb, i64 1
  %x2 = insertelement <4 x float> %x1, float %rc, i64 2
  %x3 = insertelement <4 x float> %x2, float %rd, i64 LANE
  ret <4 x float> %x3
}
declare float @llvm.sqrt.f32(float)
"""


@pytest.mark.parametrize("lane", [3, 1])
def test_lanes_of_another_vector_or_place_stay_scalar(lane):
    """One lane from another vector (%w), or a lane inserted twice: not one vector's roots."""
    text = PARTS.replace("LANE", str(lane))
    assert bind_vector_sqrt(text) is text
    whole = text.replace("<4 x float> %w, i64 2", "<4 x float> %v, i64 2")
    assert ("@llvm.sqrt.v4f32" in bind_vector_sqrt(whole)) == (lane == 3)


def test_roots_of_a_wider_vector_stay_scalar():
    """Two lanes of a 4-vector built into a 2-vector: no call of another type's root."""
    text = """\
define <2 x float> @h(<4 x float> %v) {
  %a = extractelement <4 x float> %v, i64 0
  %b = extractelement <4 x float> %v, i64 1
  %ra = call float @llvm.sqrt.f32(float %a)
  %rb = call float @llvm.sqrt.f32(float %b)
  %x0 = insertelement <2 x float> poison, float %ra, i64 0
  %x1 = insertelement <2 x float> %x0, float %rb, i64 1
  ret <2 x float> %x1
}
declare float @llvm.sqrt.f32(float)
"""
    parse_verified(text)
    assert bind_vector_sqrt(text) is text


def test_names_of_another_function_are_not_its_lanes():
    """`%a` and `%b` are lanes of `%v` in @g only: @h's roots of its own `%a`, `%b` stay."""
    h = (
        PARTS.replace("@g(", "@h(")
        .replace("extractelement <4 x float> %v, i64 0", "fadd float 1.0, 2.0")
        .replace("extractelement <4 x float> %v, i64 1", "fadd float 3.0, 4.0")
        .replace("declare float @llvm.sqrt.f32(float)\n", "")
    )
    text = PARTS.replace("LANE", "3").replace("%w, i64 2", "%v, i64 2") + h.replace("LANE", "3")
    text = text.replace("%w, i64 2", "%v, i64 2")
    parse_verified(text)
    packed = bind_vector_sqrt(text)
    assert packed.count("@llvm.sqrt.v4f32(<4 x float> %v)") == 1, packed
    parse_verified(packed)


SWEEP = """\
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
void sweep(int T, int n, double A[n][n], double B[n][n])
{
    for (int t = 0; t < T; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.5 * sqrt(A[i - 1][j])
                          + 0.125 * (A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = 0.5 * sqrt(B[i - 1][j])
                          + 0.125 * (B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
    }
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), T = atoi(argv[2]);
    double (*A)[n] = malloc(sizeof(double) * n * n), (*B)[n] = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            A[i][j] = B[i][j] = ((i * 7 + j * 13) % 100) / 10.0;
    sweep(T, n, A, B);
    for (int i = 0; i < n; i += 3)
        for (int j = 0; j < n; j += 5)
            printf("%a\\n", A[i][j]);
    return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_time_tiled_square_roots_use_packed_instructions(tmp_path):
    """Plain x86-64 (SSE2) as cc's default: the tiled kernel's roots are `sqrtpd`, and the
    program prints what cc's prints on odd, prime and smaller-than-a-tile sizes."""
    env = clean_env(tmp_path / "cache")
    flags = ["-O3", "-fno-math-errno"]
    files = {"sweep.c": SWEEP}
    both(tmp_path / "asm", files, [*flags, "-S", "-o", "sweep.s", "sweep.c"], env)
    _, _, report = both(tmp_path, files, [*flags, "-o", "sweep", "sweep.c", "-lm"], env)
    (unit,) = units_for(report, "sweep.c")
    sweep = functions_of(unit)["sweep"]
    assert sweep["compiled_by"] == "pycc-stencil", sweep
    assert any("remark: time-tiled" in r for r in sweep["remarks"]), sweep
    text = (tmp_path / "asm/pycc/sweep.s").read_text()
    ours = re.split(r"^__pycc_\w+_sweep:$", text, flags=re.M)[1]  # its own code, not cc's
    assert "sqrtpd" in ours, ours
    for size, steps in [(67, 5), (13, 3), (3, 2)]:
        printed = [
            run([tmp_path / side / "sweep", size, steps], tmp_path, env).stdout
            for side in ("cc", "pycc")
        ]
        assert printed[0] == printed[1], (size, steps)
