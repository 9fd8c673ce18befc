"""polyhedral/deps.py: the flow dependences, found one read access at a time, are isl's
dataflow analysis of all reads at once (the same relation, only faster on many reads)."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest
from corpus.manifest import CORPUS_DIR
from pycc_stencil.frontend import lower_file
from pycc_stencil.polyhedral.deps import compute_dependences
from pycc_stencil.polyhedral.scop import extract_scops

BOX_27 = Path(__file__).resolve().parent.parent / "scripts" / "bench_kernels" / "box_3d27.c"
KERNELS = [
    (f"{CORPUS_DIR}/polybench/{name}_vla.c", f"kernel_{name}_vla")
    for name in ("jacobi_1d", "jacobi_2d", "heat_3d", "fdtd_2d", "seidel_2d", "star_3d")
] + [(str(BOX_27), "kernel_box_3d27")]


@pytest.mark.parametrize("path, function", KERNELS, ids=lambda x: Path(x).stem)
def test_flow_dependences_are_isl_dataflow_of_all_reads(path, function):
    (scop,), _ = extract_scops(lower_file(path).module.get_global(function), merge=False)
    reads, writes, schedule = scop.reads(), scop.writes(), scop.schedule()
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(writes).set_schedule(schedule)
    at_once = info.compute_flow().get_must_dependence()
    flow = compute_dependences(scop).flow
    assert not flow.is_empty()
    assert flow.is_equal(at_once)
