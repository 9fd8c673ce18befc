"""Footprints of pointer parameters: exact ranges, negative offsets, data dependence."""

from __future__ import annotations

import pytest
from conftest import BLUR3, GATHER, lowered_module
from pycc_stencil.runtime.footprint import DataDependentFootprint, FootprintProbe


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
