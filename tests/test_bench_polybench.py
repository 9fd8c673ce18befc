"""scripts/bench_polybench.py runs end to end (one kernel, one round): the programs build in
compiler mode, give gcc's bits, and the TBAA tags change the machine code of the kernel whose
loads mix types. A smoke test of the script, not a timing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_polybench.py"


@pytest.mark.sweep  # a run of the benchmark script: scripts/run_sweeps.sh (docs/testing.md)
@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
def test_one_round_of_spmv_and_gemm(tmp_path):
    markdown = tmp_path / "table.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--kernels", "spmv,gemm", "--contract", "off",
         "--rounds", "1", "--reps", "1", "--clang", "none", "--markdown", str(markdown)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    table = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in markdown.read_text().splitlines()
        if line.startswith("| ")
    ]
    column = {name: i for i, name in enumerate(table[0])}
    rows = {cells[0]: cells for cells in table[1:]}
    for kernel in ("spmv", "gemm"):
        assert rows[kernel][column["bits vs gcc"]] == "same"
        assert rows[kernel][column["pycc took it over"]].startswith("yes")
    assert rows["spmv"][column["TBAA changes code"]] == "yes"
    assert rows["gemm"][column["TBAA changes code"]] == "no"
    assert "geomean gcc/pycc, contraction off, non-stencil kernels" in done.stdout
