"""`check` against the reference: OK, MISMATCH, guard zones, crashes, hangs, skips."""

from __future__ import annotations

import pytest
from conftest import (
    BLUR3,
    BLUR3_C,
    F32,
    GATHER,
    I64,
    Kernel,
    blur3_body,
    counted_loop,
    element,
    lowered_module,
    offset,
)
from llvmlite import ir
from pycc_stencil.ir_passes import pipeline
from pycc_stencil.runtime.check import CheckOptions, CheckUsageError, check_file, summary
from pycc_stencil.runtime.compare import Tolerance

GATHER_C = """
void gather(const int *idx, const float *in, float *out, int n) {
    for (int i = 0; i < n; i++)
        out[i] = in[idx[i]];
}
"""


def lower_to(kernels, skipped=()):
    return lambda path, cflags: lowered_module(path, kernels, skipped)


def blur3_variant(name, store_end=0, weights=(-1, 0, 1), store_to_null=False, spin=False):
    """blur3 with a bug: stores up to n+store_end, other taps, a null store, or a hang."""

    def build(b, args):
        src, dst, n = args

        def body(b, i):
            total = b.load(element(b, src, offset(b, i, weights[0])), typ=F32)
            for w in weights[1:]:
                total = b.fadd(total, b.load(element(b, src, offset(b, i, w)), typ=F32))
            target = ir.Constant(ir.PointerType(), None) if store_to_null else element(b, dst, i)
            b.store(total, target)

        stop = offset(b, b.sext(n, I64), store_end)
        counted_loop(b, ir.Constant(I64, 0), stop, body)
        if spin:
            loop = b.function.append_basic_block("spin")
            b.branch(loop)
            b.position_at_end(loop)
            b.branch(loop)

    return Kernel(name, BLUR3.params, build)


@pytest.fixture
def broken_pass(monkeypatch, tmp_path):
    """Register a pass named `broken` that replaces blur3 by the given variant."""

    def install(kernel):
        def broken(module):
            return lowered_module(tmp_path / "k.c", [kernel]).module

        monkeypatch.setitem(pipeline.REGISTRY, "broken", pipeline.PassSpec(broken))

    return install


def check_blur3(c_file, **options):
    options.setdefault("params", {"n": "37"})
    return [
        str(r) for r in check_file(c_file(BLUR3_C), [], CheckOptions(**options), lower_to([BLUR3]))
    ]


def test_blur3_is_bit_exact(c_file):
    results = check_file(c_file(BLUR3_C), [], CheckOptions(params={"n": "37"}), lower_to([BLUR3]))
    assert [str(r) for r in results] == ["OK blur3: bit-exact, 2 buffers, 76 elements"]
    assert summary(results) == "1 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR"


def test_sizes_too_small_for_the_stencil(c_file):
    """OK, and the result says that the run proved nothing: the call changed no element."""
    assert check_blur3(c_file, params={"n": "0"}) == [
        "OK blur3: bit-exact, 2 buffers, 0 elements "
        "(the call changed none: these sizes test nothing it computes)"
    ]


def test_wrong_code_is_a_mismatch(c_file, broken_pass):
    broken_pass(blur3_variant("blur3", weights=(-1, 0, 0)))
    [line] = check_blur3(c_file, passes="broken")
    assert line.startswith("MISMATCH blur3: out[0] = ")
    assert line.endswith("(reference " + line.split("(reference ")[1])
    assert "37 of 76 elements differ" in line


def test_tolerance_accepts_small_differences_only(c_file, broken_pass):
    broken_pass(blur3_variant("blur3", weights=(1, 0, -1)))  # reassociated sum
    [line] = check_blur3(c_file, passes="broken", tolerance=Tolerance.parse("ulp=4"))
    assert line == "OK blur3: within ulp=4, 2 buffers, 76 elements"


def test_write_past_the_footprint_hits_the_guard_zone(c_file, broken_pass):
    broken_pass(blur3_variant("blur3", store_end=1))
    [line] = check_blur3(c_file, passes="broken")
    assert line.startswith("MISMATCH blur3: JIT code wrote outside buffer 'out'")
    assert "after it" in line


def test_a_crash_is_an_error_line(c_file, broken_pass):
    broken_pass(blur3_variant("blur3", store_to_null=True))  # O3 would delete the UB store
    assert check_blur3(c_file, passes="broken", opt_level=0) == [
        "ERROR blur3: JIT code crashed (SIGSEGV)"
    ]


def test_a_hang_is_a_timeout(c_file, broken_pass):
    broken_pass(blur3_variant("blur3", spin=True))
    assert check_blur3(c_file, passes="broken", timeout=0.5) == [
        "ERROR blur3: JIT code timed out after 0.5 s"
    ]


def test_data_dependent_footprint_needs_an_extent(c_file):
    path = c_file(GATHER_C)
    [result] = check_file(path, [], CheckOptions(), lower_to([GATHER]))
    assert result.status == "ERROR"
    assert result.message.startswith("cannot size in: the footprint depends on data")
    assert result.message.endswith("pass --extent in=ELEMENTS")


def test_a_given_extent_is_checked_on_the_data(c_file):
    """Random indices reach far outside `in`: found by a traced run, before any real run."""
    path = c_file(GATHER_C)
    options = CheckOptions(extents={"in": 1000})
    [result] = check_file(path, [], options, lower_to([GATHER]))
    assert str(result).startswith("ERROR gather: reads in[-")
    assert str(result).endswith("but in has 1000 elements (--extent in=1000)")


HISTOGRAM_C = """
void apply_lut(const unsigned char *in, const unsigned char lut[256], unsigned char *out, int n) {
    for (int i = 0; i < n; i++) out[i] = lut[in[i]];
}
void histogram(const unsigned short *src, unsigned *hist, int n) {
    for (int i = 0; i < n; i++) hist[src[i] >> 8]++;
}
"""


@pytest.mark.parametrize(
    "extents, expected",
    [
        (
            {},
            "ERROR histogram: cannot size hist: the footprint depends on data "
            "({path}:6:33: address depends on data read from a parameter buffer); "
            "pass --extent hist=ELEMENTS",
        ),
        ({"hist": 256}, "OK histogram: bit-exact, 2 buffers, 5256 elements"),
        (
            {"hist": 255},
            "ERROR histogram: reads hist[0..255] but hist has 255 elements (--extent hist=255)",
        ),
    ],
)
def test_only_buffers_indexed_by_data_need_an_extent(c_file, extents, expected):
    path = c_file(HISTOGRAM_C)
    options = CheckOptions(params={"n": "5000"}, extents=extents)
    lut, histogram = check_file(path, [], options)
    assert str(lut) == "OK apply_lut: bit-exact, 3 buffers, 10256 elements"
    assert str(histogram) == expected.format(path=path)


def test_accesses_outside_a_declared_or_given_extent_are_errors(c_file):
    source = """
    void offbyone(int n, const float A[n], float *out) {
        for (int i = 0; i <= n; i++) out[i] = A[i];
    }
    void sum(const float *a, float *b) {
        for (int i = 0; i < 1000; i++) b[0] += a[i];
    }
    """
    options = CheckOptions(params={"n": "10"}, extents={"a": 1})
    assert [str(r) for r in check_file(c_file(source), [], options)] == [
        "ERROR offbyone: reads A[0..10] but A has 10 elements",
        "ERROR sum: reads a[0..999] but a has 1 element (--extent a=1)",
    ]


def test_skipped_functions_are_listed(c_file):
    source = BLUR3_C + "void weird(void) { goto out; out: ; }\n"
    skipped = [("weird", "goto is not supported")]
    results = check_file(c_file(source), [], CheckOptions(), lower_to([BLUR3], skipped))
    assert [r.status for r in results] == ["OK", "SKIPPED"]
    assert str(results[1]).startswith("SKIPPED weird: ") and "goto is not supported" in str(
        results[1]
    )


def test_unknown_function_is_a_usage_error(c_file):
    with pytest.raises(CheckUsageError, match="no function named 'nope'"):
        check_file(c_file(BLUR3_C), [], CheckOptions(functions=["nope"]), lower_to([BLUR3]))


def test_reference_build_failure_is_an_error(c_file):
    [line] = [
        str(r)
        for r in check_file(
            c_file("void blur3(float *a, float *b, int n) { x }"),
            [],
            CheckOptions(),
            lower_to([BLUR3]),
        )
    ]
    assert line.startswith("ERROR blur3: the reference does not build: ")
    assert "error" in line


def test_nan_signs_and_payloads_are_not_compared(c_file):
    """LLVM folds 0.0f/0.0f to a positive NaN; the reference's divss gives a negative one."""
    source = """
    float fill_invalid(float *b, int n) {
        for (int i = 0; i < n; i++)
            b[i] = 0.0f / 0.0f;
        return b[0] * (0.0f / 0.0f);
    }
    """
    [result] = check_file(c_file(source), [], CheckOptions(params={"n": "5"}))
    assert str(result) == "OK fill_invalid: bit-exact, 1 buffer, 5 elements"


def test_the_dry_run_honours_the_timeout(c_file):
    source = """
    void spin(float *a) {
        unsigned k = 1;
        while (k)
            k *= 3;
        a[0] = (float)k;
    }
    """
    [result] = check_file(c_file(source), [], CheckOptions(timeout=0.5))
    assert str(result) == "ERROR spin: dry run timed out after 0.5 s"


def test_absurd_declared_sizes_are_refused_before_the_dry_run(c_file):
    source = """
    void huge(int n, float A[n][n], float *p) {
        unsigned k = 1;
        while (k)
            k *= 3;
        A[0][0] = p[0] = (float)k;
    }
    """
    options = CheckOptions(params={"n": "100000"}, timeout=0.5)
    [result] = check_file(c_file(source), [], options)
    assert result.status == "ERROR" and "over the memory budget" in result.message
    assert "buffer 'A' needs 40000000000 bytes" in result.message


def test_c99_inline_functions_are_emitted_for_the_reference(c_file):
    """`inline` alone defines no symbol: the wrapper must redeclare sq_i extern."""
    source = """
    inline int sq_i(int x) { return x * x; }
    void use_inline(const short *a, int *b, int n) {
        for (int i = 0; i < n; i++) b[i] = sq_i(a[i]);
    }
    """
    results = check_file(c_file(source), [], CheckOptions(params={"n": "5"}))
    assert [r.status for r in results] == ["SKIPPED", "OK"]


def test_a_function_that_does_not_link_costs_only_itself(c_file):
    source = (
        BLUR3_C
        + """
    void missing(float *p);
    void blur3_logged(const float *in, float *out, int n) {
        blur3(in, out, n);
        missing(out);
    }
    """
    )
    logged = Kernel("blur3_logged", BLUR3.params, blur3_body)
    results = check_file(
        c_file(source), [], CheckOptions(params={"n": "7"}), lower_to([BLUR3, logged])
    )
    assert str(results[0]) == "OK blur3: bit-exact, 2 buffers, 16 elements"
    assert str(results[1]).startswith("ERROR blur3_logged: the reference does not build: ")
    assert "undefined reference to `missing'" in str(results[1])


def test_unknown_names_are_warnings_when_functions_were_skipped(c_file):
    """A skipped function's parameters are not known: `m` may be one of them."""
    skipped = [("weird", "goto is not supported")]
    options = CheckOptions(params={"n": "5", "m": "3"}, extents={"p": 4})
    with pytest.warns(UserWarning) as caught:
        results = check_file(c_file(BLUR3_C), [], options, lower_to([BLUR3], skipped))
    assert [r.status for r in results] == ["OK", "SKIPPED"]
    assert [str(w.message) for w in caught] == [
        "--param m is ignored: no lowered function has a scalar parameter named 'm' "
        "(the parameters of skipped functions are not known)",
        "--extent p is ignored: no lowered function has a pointer or array parameter named 'p' "
        "(the parameters of skipped functions are not known)",
    ]
