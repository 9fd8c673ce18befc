"""report.html in a real browser (issue 18): headless Chromium from Debian's packages
(`scripts/install_chromium.sh`, run by the test command) loads the page without errors,
every image decodes and every link finds its target, a click on a header sorts the table
(numbers as numbers, both directions), and a screenshot shows the three plots' bars."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from pycc_stencil.batch_job import Record
from pycc_stencil.batch_report import write_report

pytestmark = pytest.mark.after_installs

#: the marker `scripts/install_chromium.sh` keeps while it installs Chromium (its process id)
INSTALL_MARKER = Path(tempfile.gettempdir()) / "pycc-stencil-chromium-install.pid"
#: seconds to wait for an install under way (apt-get update and install: about a minute)
INSTALL_WAIT = 600.0


def _installing() -> bool:
    """Is `scripts/install_chromium.sh` still running (the test command starts it in the
    background)?"""
    try:
        os.kill(int(INSTALL_MARKER.read_text().split()[0]), 0)
    except (OSError, ValueError, IndexError):
        return False
    return True


@pytest.fixture(scope="module")
def browser() -> str:
    """Chromium's path, once an install under way has ended; the test is skipped without it."""
    deadline = time.monotonic() + INSTALL_WAIT
    while _installing() and time.monotonic() < deadline:
        time.sleep(1.0)
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (scripts/install_chromium.sh installs it)")
    return found


#: a report's records: speed-ups whose text order differs from their numeric order
RECORDS = [
    Record("src/a.c", "blur", 3, "checked", passes="auto", speedup=10.5, check="OK: 3 sizes",
           source="void blur(void) {}", remarks=["unroll: by 2"], emitted="define void @blur"),
    Record("src/a.c", "sharpen", 9, "checked", speedup=9.25, compile_seconds=0.5),
    Record("src/b.c", "heat", 4, "checked", speedup=1.75, check_seconds=2.0),
    Record("src/b.c", "odd", 20, "refused", reason="b.c:20:3: goto is not supported"),
    Record("src/c.c", "", 0, "error", reason="c.c:1:30: error: expected expression"),
]  # fmt: skip

#: the page's own script runs first; this one records errors from the start
RECORD_ERRORS = """<script>
window.pyccErrors = [];
window.addEventListener("error", function (e) {
  pyccErrors.push(e.message || ("cannot load " + (e.target.src || e.target.href)));
}, true);
var pyccConsoleError = console.error;
console.error = function () { pyccErrors.push(Array.from(arguments).join(" ")); };
</script>"""

#: after the load: images, links, and the table sorted by clicks, written into the page
INSPECT = """<script>
window.addEventListener("load", function () {
  function column(n) {
    return Array.from(document.querySelectorAll("#kernels tbody tr")).map(function (row) {
      var cell = row.cells[n];
      return cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
    });
  }
  var headers = document.querySelectorAll("#kernels th"), sorted = {};
  [1, 5, 5].forEach(function (n, i) { headers[n].click(); sorted[i] = column(n); });
  var result = {
    errors: pyccErrors,
    images: Array.from(document.images).map(function (i) {
      return [i.alt, i.complete, i.naturalWidth, i.naturalHeight];
    }),
    links: Array.from(document.links).map(function (a) {
      var target = a.getAttribute("href");
      return [target, target[0] === "#" && document.getElementById(target.slice(1)) !== null];
    }),
    by_name: sorted[0], up: sorted[1], down: sorted[2]
  };
  var out = document.createElement("pre");
  out.id = "pycc-inspected";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    summary = SimpleNamespace(files=3, reused=1, seconds=4.5)
    write_report(str(out), RECORDS, "host", "auto", summary)
    return out / "report.html"


def _chromium(browser: str, *arguments: str) -> subprocess.CompletedProcess:
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += ["--virtual-time-budget=5000", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_page_loads_without_errors_its_links_and_images_resolve_and_the_table_sorts(
    browser, report, tmp_path
):
    page = report.read_text()
    inspected = tmp_path / "inspected.html"
    inspected.write_text(
        page.replace("<head>", "<head>" + RECORD_ERRORS, 1).replace("</body>", INSPECT + "</body>")
    )
    run = _chromium(browser, "--dump-dom", inspected.as_uri())
    assert run.returncode == 0, run.stderr
    found = re.search(r'<pre id="pycc-inspected">(.*?)</pre>', run.stdout, re.S)
    assert found, run.stdout[-2000:]
    result = json.loads(html.unescape(found.group(1)))
    assert result["errors"] == []
    assert [alt for alt, *_ in result["images"]] == [
        "Speed-up per kernel", "Time spent per file", "Why functions were not taken over"
    ]  # fmt: skip
    for _, complete, width, height in result["images"]:
        assert complete and width > 100 and height > 50
    assert len(result["links"]) == 4 and all(resolves for _, resolves in result["links"])
    assert result["by_name"] == ["(file)", "blur", "heat", "odd", "sharpen"]
    assert [float(v) for v in result["up"]] == [-1, -1, 1.75, 9.25, 10.5]  # not "10.5" < "9.25"
    assert [float(v) for v in result["down"]] == [10.5, 9.25, 1.75, -1, -1]


def test_a_screenshot_shows_the_plots(browser, report, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    shot = tmp_path / "shot.png"
    run = _chromium(browser, f"--screenshot={shot}", "--window-size=1400,1400", report.as_uri())
    assert run.returncode == 0 and shot.exists(), run.stderr
    pixels = (image.imread(shot)[:, :, :3] * 255).round().astype(int)
    colours = {tuple(p) for p in pixels.reshape(-1, 3)[::7]}
    assert len(colours) > 20  # not blank
    for bar in ((0x33, 0xAA, 0x77), (0x33, 0x77, 0xAA), (0xAA, 0x55, 0x33)):  # #3a7 #37a #a53
        assert bar in colours, f"no bar of colour {bar} on the screenshot"
