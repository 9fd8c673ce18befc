"""scripts/bench_simd.py end to end, as small as it goes: one kernel, one repetition."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_simd.py"


@pytest.mark.sweep  # a run of the benchmark script: scripts/run_sweeps.sh (docs/testing.md)
def test_quick_run_lists_every_variant_and_all_outputs_match(tmp_path):
    markdown = tmp_path / "simd.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--kernels", "jacobi", "--reps", "1",
         "--pipelines", "simd;simd,no_such_pass", "--fp-contract", "off", "--nice", "0",
         "--plain", "--no-cache", "--markdown", str(markdown)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "pipeline 'simd,no_such_pass' skipped: unknown pass 'no_such_pass'" in out
    header = out.split("variants:\n", 1)[1].split("\npipeline", 1)[0]
    labels = [
        line.strip().split("  ")[0] for line in header.splitlines() if "[unavailable" not in line
    ]
    assert {"gcc", "LLVM vec", "LLVM scalar", "simd"} <= set(labels)
    rows = [line.split(" | ") for line in markdown.read_text().splitlines()]
    checks = {r[3]: r[-1].rstrip(" |") for r in rows if len(r) > 10 and r[0] == "| jacobi"}
    for label in labels:
        # with -ffp-contract=off everywhere, every variant must compute gcc's bits exactly
        assert checks.get(label) in ("reference", "exact"), (label, checks)
    # and the simd variant is SIMD-bound code (the passes' remarks end the markdown)
    said = [line for line in markdown.read_text().splitlines() if line.startswith("- simd / ")]
    assert said and "loop vectorized by SIMD binding" in said[0], said
