"""scripts/bench_build.py runs end to end on two bundled files (one round): its table has the
five builds and counts the kernel compiler mode took over. A smoke test, not a timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.sweep  # 20 s of builds that time nothing CI needs (docs/testing.md)
def test_one_round_of_two_files():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_build.py"), "--rounds", "1",
         "--jobs", "2", "--flags=-O3", str(ROOT / "tests/corpus/legacy/clamp.c"),
         str(ROOT / "scripts/bench_kernels/jacobi_2d.c")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split("|")[1].strip() for line in done.stdout.splitlines() if line[:2] == "| "]
    assert rows[1:] == [
        "cc",
        "pycc-stencil, cache cold, no server",
        "pycc-stencil, cache cold, server started by the build",
        "pycc-stencil, cache cold, server running",
        "pycc-stencil, cache warm",
    ], done.stdout
    assert "functions taken over: 1 of " in done.stdout, done.stdout
