"""Footprints of pointer parameters: exact ranges, negative offsets, data dependence."""

from __future__ import annotations

import pytest
from conftest import BLUR3, GATHER, lowered_module
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.debuginfo import location_of
from pycc_stencil.runtime.footprint import FootprintError, FootprintProbe


def test_blur3_reads_one_before_and_after(tmp_path):
    probe = FootprintProbe(lowered_module(tmp_path / "k.c", [BLUR3]))
    fp = probe.measure("blur3", {"n": 10})
    assert fp["in"].read == (-1, 11) and fp["in"].written is None
    assert fp["out"].written == (0, 10) and fp["out"].read is None
    assert fp["in"].access == "read" and fp["out"].access == "written"


def test_gather_is_data_dependent_in_its_source_only(tmp_path):
    probe = FootprintProbe(lowered_module(tmp_path / "k.c", [GATHER]))
    assert list(probe.dependences("gather")) == ["in"]
    assert ranges(probe.measure("gather", {"n": 4})) == {
        "idx": ((0, 4), None),
        "out": (None, (0, 4)),
    }


SOURCE = """
static float tap(const float *p, int k) { return p[k]; }

void callee(const float *in, float *out, int n) {
    for (int i = 0; i < n; i++) out[i] = tap(in, i + 2);
}
void clamp_store(const int *in, unsigned char *out, int n) {
    for (int i = 0; i < n; i++) {
        if (in[i] > 255) out[2 * i] = 255;
        else out[2 * i] = (unsigned char)in[i];
    }
}
void sometimes(const float *in, float *out, int n) {
    for (int i = 0; i < n; i++)
        if (in[i] > 0.5f) out[i + 3] = in[i];
}
void early(const float *in, float *out, int n) {
    if (in[0] < 0) return;
    for (int i = 0; i < n; i++) out[i] = in[i];
}
void until_zero(const unsigned char *in, unsigned char *out, int n) {
    for (int i = 0; i < n; i++) { if (in[i] == 0) break; out[i] = in[i]; }
}
void lut(const unsigned char *in, int *out, int n) {
    int hist[16] = {0};
    for (int i = 0; i < n; i++) hist[in[i] - 100]++;
    for (int k = 0; k < 16; k++) out[k] = hist[k];
}
void divide(const int *a, int *out, int n) {
    for (int i = 0; i < n; i++) out[i] = 1000 / a[i] + (a[i] == -1 ? 0 : (-2147483647 - 1) / a[i]);
}
void sweeps(float *a, float *b, int n, int t) {
    for (int s = 0; s < t; s++) {
        for (int i = 1; i < n - 1; i++) b[i] = a[i - 1] + a[i + 1];
        float *tmp = a; a = b; b = tmp;
    }
}
void forever(float *a, int n) { for (int i = 0; i < n; i += 0) a[0] = 1; }
void both_branches(const int *a, int *b, int n) {
    int i = 0;
    while (i < n) {
        if (a[i] & 1) { b[i] = 1; i++; }
        else          { b[i] = 2; i++; }
    }
}
static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }
void gcd_map(const int *a, int *g, int n) {
    for (int i = 0; i < n; i++) g[i] = gcd(a[i] & 0xffff, 360);
}
static void bump(int *k) { (*k)++; }
void addr_counter(const float *a, float *b, int n) {
    for (int i = 0; i < n; bump(&i)) b[i] = a[i] + 1.0f;
}
static void put(int *p, int k, int v) { p[k] = v; }
void helper_store(const int *a, int *b, int n) {
    for (int i = 0; i < n; i++) put(b, a[i] & 7, i);
}
void apply_lut(const unsigned char *in, const unsigned char lut[256], unsigned char *out, int n) {
    for (int i = 0; i < n; i++) out[i] = lut[in[i]];
}
void histogram(const unsigned short *src, unsigned *hist, int n) {
    for (int i = 0; i < n; i++) hist[src[i] >> 8]++;
}
void skip_some(const int *a, float *b, float *c, int n) {
    for (int i = 0; i < n; i++) {
        if (a[i] > 0)
            for (int j = 0; j < 2; j++) c[i + j] = 0;
        b[i] = 1;
    }
}
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    path = tmp_path_factory.mktemp("fp") / "fp.c"
    path.write_text(SOURCE)
    return FootprintProbe(lower_file(str(path), []), budget=100_000, timeout=20)


def ranges(footprints):
    return {name: (f.read, f.written) for name, f in footprints.items()}


@pytest.mark.parametrize(
    "function, scalars, expected",
    [
        ("callee", {"n": 5}, {"in": ((2, 7), None), "out": (None, (0, 5))}),
        ("clamp_store", {"n": 4}, {"in": ((0, 4), None), "out": (None, (0, 7))}),
        ("sometimes", {"n": 4}, {"in": ((0, 4), None), "out": (None, (3, 7))}),
        ("lut", {"n": 9}, {"in": ((0, 9), None), "out": (None, (0, 16))}),
        ("divide", {"n": 3}, {"a": ((0, 3), None), "out": (None, (0, 3))}),
        ("sweeps", {"n": 6, "t": 1}, {"a": ((0, 6), None), "b": (None, (1, 5))}),
        ("sweeps", {"n": 6, "t": 2}, {"a": ((0, 6), (1, 5)), "b": ((0, 6), (1, 5))}),
        ("sweeps", {"n": 6, "t": 0}, {"a": (None, None), "b": (None, None)}),
        ("both_branches", {"n": 4}, {"a": ((0, 4), None), "b": (None, (0, 4))}),
        ("gcd_map", {"n": 4}, {"a": ((0, 4), None), "g": (None, (0, 4))}),
        ("addr_counter", {"n": 4}, {"a": ((0, 4), None), "b": (None, (0, 4))}),
    ],
)
def test_exact_footprints(probe, function, scalars, expected):
    """Each buffer's footprint is exact: no data dependence is reported for any."""
    assert probe.dependences(function) == {}
    assert ranges(probe.measure(function, scalars)) == expected


@pytest.mark.parametrize(
    "function, dependent, exact",
    [
        ("helper_store", ["b"], {"a": ((0, 5), None)}),
        ("apply_lut", ["lut"], {"in": ((0, 5), None), "out": (None, (0, 5))}),
        ("histogram", ["hist"], {"src": ((0, 5), None)}),
        ("skip_some", ["c"], {"a": ((0, 5), None), "b": (None, (0, 5))}),
    ],
)
def test_data_dependence_is_pinned_on_the_buffers_it_concerns(probe, function, dependent, exact):
    """Only the buffers indexed (or accessed under a branch) by data need an extent; the dry
    run still measures the others exactly."""
    assert list(probe.dependences(function)) == dependent
    assert ranges(probe.measure(function, {"n": 5})) == exact


@pytest.mark.parametrize(
    "function, line, column, reason",
    [
        ("early", 18, 9, "branch on data"),
        ("until_zero", 22, 39, "branch on data"),
    ],
)
def test_data_dependence_is_located(probe, function, line, column, reason):
    dependences = probe.dependences(function)
    assert list(dependences) == ["in", "out"]
    dependence = dependences["out"]
    location = location_of(dependence.instruction)
    assert (location.line, location.column) == (line, column)
    assert reason in str(dependence)


def test_access_budget_stops_a_runaway_dry_run(probe):
    with pytest.raises(FootprintError, match="stopped after 100000 memory accesses"):
        probe.measure("forever", {"n": 1})


def test_an_access_far_from_every_buffer_is_refused(tmp_path):
    """An address in no buffer's region (2**52 bytes past the only buffer) cannot be sized:
    the dry run says so instead of reporting the buffer's own range alone."""
    path = tmp_path / "far.c"
    path.write_text("void poke(float *a, long k) { a[0] = 0.0f; a[k] = 1.0f; }\n")
    probe = FootprintProbe(lower_file(str(path)))
    assert probe.measure("poke", {"k": 5})["a"].written == (0, 6)
    with pytest.raises(FootprintError, match="away from a buffer parameter"):
        probe.measure("poke", {"k": 1 << 50})
