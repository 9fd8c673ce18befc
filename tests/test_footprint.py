"""Footprints of pointer parameters: exact ranges, negative offsets, data dependence."""

from __future__ import annotations

import pytest
from conftest import BLUR3, GATHER, lowered_module
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.debuginfo import location_of
from pycc_stencil.runtime.footprint import DataDependentFootprint, FootprintError, FootprintProbe


def test_blur3_reads_one_before_and_after(tmp_path):
    probe = FootprintProbe(lowered_module(tmp_path / "k.c", [BLUR3]))
    fp = probe.measure("blur3", {"n": 10})
    assert fp["in"].read == (-1, 11) and fp["in"].written is None
    assert fp["out"].written == (0, 10) and fp["out"].read is None
    assert fp["in"].access == "read" and fp["out"].access == "written"


def test_gather_is_data_dependent(tmp_path):
    probe = FootprintProbe(lowered_module(tmp_path / "k.c", [GATHER]))
    assert probe.dependence("gather") is not None
    with pytest.raises(DataDependentFootprint, match="depends on data"):
        probe.measure("gather", {"n": 4})


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
    ],
)
def test_exact_footprints(probe, function, scalars, expected):
    assert ranges(probe.measure(function, scalars)) == expected


@pytest.mark.parametrize(
    "function, line, column, reason",
    [
        ("early", 18, 9, "branch on data"),
        ("until_zero", 22, 39, "branch on data"),
    ],
)
def test_data_dependence_is_located(probe, function, line, column, reason):
    dependence = probe.dependence(function)
    assert dependence is not None
    location = location_of(dependence.instruction)
    assert (location.line, location.column) == (line, column)
    assert reason in str(dependence)


def test_access_budget_stops_a_runaway_dry_run(probe):
    with pytest.raises(FootprintError, match="stopped after 100000 memory accesses"):
        probe.measure("forever", {"n": 1})
