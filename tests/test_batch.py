"""`pycc-stencil batch` (issue 18): a tree's C files through a target, each function's
record agreeing with per-file `check`, a report (JSON, and HTML whose links and images
resolve), resumed from its store, a compile_commands.json from CMake, a job that runs too
long recorded as such, and the same report from a Dask cluster that loses a worker (and
`tune`'s search on that cluster)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from corpus.manifest import CORPUS_DIR
from pycc_stencil import batch
from pycc_stencil.cli import main
from pycc_stencil.runtime.check import CheckOptions, check_file

BLUR_C = """
void blur(int n, const float *in, float *out) {
  for (int i = 1; i < n - 1; i++) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}
static int twice(int x) { return 2 * x; }
"""
GRID_C = """
#include "grid.h"
void smooth(const float a[N][N], float b[N][N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++) b[i][j] = SCALE * (a[i - 1][j] + a[i + 1][j]);
}
void odd(float *a) { goto x; x: a[0] = 1; }
"""
BROKEN_C = "void broken(int *a) { a[0] = ; }\n"


@pytest.fixture
def tree(tmp_path):
    source = tmp_path / "src"
    (source / "include").mkdir(parents=True)
    (source / "blur.c").write_text(BLUR_C)
    (source / "grid.c").write_text(GRID_C)
    (source / "include" / "grid.h").write_text("#define N 37\n#define SCALE 0.5f\n")
    (source / "broken.c").write_text(BROKEN_C)
    return source


def _statuses(records) -> dict:
    return {(Path(r.file).name, r.function): r.status for r in records}


#: a pipeline for the tests of where jobs run and which flags they get (the first test runs
#: the target's own strategy, `auto`)
CHEAP = "unroll(2)"
#: what the tree's batch records: (file, function) -> status
EXPECTED = {
    ("blur.c", "blur"): "checked",
    ("blur.c", "twice"): "not a kernel",
    ("grid.c", "smooth"): "checked",
    ("grid.c", "odd"): "refused",
    ("broken.c", ""): "error",
}


def test_a_tree_gives_one_record_per_function_as_check_does_and_resumes(tree, tmp_path, capsys):
    out = tmp_path / "report"
    flags = [f"-I{tree / 'include'}"]
    records = batch([str(tree)], "host", str(out), flags, jobs=2)
    assert _statuses(records) == EXPECTED
    for name in ("blur.c", "grid.c"):  # the numbers agree with per-file check
        results = check_file(tree / name, flags, CheckOptions(passes="auto"))
        expected = {r.name: r for r in results}
        for record in records:
            if Path(record.file).name == name and record.status == "checked":
                assert expected[record.function].status == "OK"
                assert record.check == f"OK: {expected[record.function].message}"
    broken = next(r for r in records if r.status == "error")
    assert "broken.c:1:30: error: expected expression" in broken.reason
    document = json.loads((out / "report.json").read_text())
    assert document["summary"]["counts"] == {
        "checked": 2, "not a kernel": 1, "refused": 1, "error": 1
    }  # fmt: skip
    assert len(document["records"]) == 5 and document["summary"]["files_reused"] == 0
    smooth = next(r for r in records if r.function == "smooth")
    assert "void smooth(const float a[N][N]" in smooth.source and "define" in smooth.emitted
    assert smooth.speedup is not None and smooth.speedup > 0
    page = (out / "report.html").read_text()
    ids = set(re.findall(r'id="([^"]+)"', page))
    assert all(link in ids for link in re.findall(r'href="#([^"]+)"', page))  # links resolve
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 3  # speed-up, time per file, reasons
    assert all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    assert "http" not in page  # self-contained
    # again: everything from the store; after an edit, that file only
    again = batch([str(tree)], "host", str(out), flags)
    assert [r.status for r in again] == [r.status for r in records]
    assert json.loads((out / "report.json").read_text())["summary"]["files_reused"] == 3
    (tree / "blur.c").write_text(BLUR_C.replace("3.0f", "4.0f"))
    assert main(["batch", str(tree), "--out", str(out), f"-I{tree / 'include'}"]) == 1  # broken.c
    assert "report: " in capsys.readouterr().out
    assert json.loads((out / "report.json").read_text())["summary"]["files_reused"] == 2


def test_bad_command_lines_get_a_diagnostic_and_write_nothing(tree, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["batch", str(tmp_path / "missing"), "--out", str(out)]) == 1
    assert "missing: no such file or directory" in capsys.readouterr().err
    assert main(["batch", str(tree), "--target", "nope", "--out", str(out)]) == 1
    assert "unknown target 'nope'" in capsys.readouterr().err
    assert main(["batch", str(tree), "--scheduler", "nowhere", "--out", str(out)]) == 1
    assert "cannot reach the Dask scheduler at 'nowhere'" in capsys.readouterr().err
    assert main(["tune", str(tree / "blur.c"), "--scheduler", "nowhere"]) == 1
    assert "cannot reach the Dask scheduler at 'nowhere'" in capsys.readouterr().err
    assert not out.exists()


def test_a_job_that_runs_too_long_is_recorded_as_timed_out(tree, tmp_path):
    records = batch([str(tree / "blur.c")], "host", str(tmp_path / "r"), timeout=0.05)
    assert [(r.status, r.reason) for r in records] == [("timed out", "after 0.05 s")]


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is a test dependency")
def test_flags_come_from_cmakes_compile_commands(tree, tmp_path):
    (tree / "broken.c").unlink()
    (tree / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(grid C)\n"
        "add_library(grid STATIC blur.c grid.c)\n"
        "target_include_directories(grid PRIVATE include)\n"
    )
    build = tmp_path / "build"
    subprocess.run(
        ["cmake", "-S", str(tree), "-B", str(build), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
        check=True,
        capture_output=True,
    )
    database = str(build / "compile_commands.json")
    records = batch([database], "host", str(tmp_path / "r"), passes=CHEAP)
    assert _statuses(records)[("grid.c", "smooth")] == "checked"  # found grid.h


def test_a_dask_cluster_gives_the_same_report_and_survives_a_lost_worker(
    tree, tmp_path, capsys, monkeypatch
):
    distributed = pytest.importorskip("distributed")
    flags = [f"-I{tree / 'include'}"]
    # the killed worker cannot remove its job's scratch directory: not in the system's /tmp
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        killed = []

        def kill_a_worker() -> None:
            time.sleep(1.0)  # the jobs are running
            nanny = next(iter(cluster.workers.values()))
            killed.append(nanny.process.process.pid)
            os.kill(killed[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_a_worker)
        killer.start()
        remote = batch(
            [str(tree)],
            "host",
            str(tmp_path / "dask"),
            flags,
            CHEAP,
            scheduler=cluster.scheduler_address,
        )
        killer.join()
        # tune's search: its candidates measured on the same cluster
        tune = ["tune", os.path.join(CORPUS_DIR, "c66x", "jacobi.c"), "--target", "c66x", "--json"]
        assert main([*tune, "--scheduler", cluster.scheduler_address]) == 0
        on_cluster = json.loads(capsys.readouterr().out)
    assert main(tune) == 0
    assert json.loads(capsys.readouterr().out) == on_cluster
    assert killed  # a worker died mid-batch; its jobs ran again elsewhere
    assert _statuses(remote) == EXPECTED  # what the local run records (above)
    document = json.loads((tmp_path / "dask" / "report.json").read_text())
    assert len(document["records"]) == len(EXPECTED)
