"""A batch's report: `report.json` (one record per function, the summary, what ran it) and
`report.html`, one self-contained page a team lead opens: the counts, a table of kernels that
sorts by any column (a click on its header), a section per function (its source, the
remarks, the check's verdict, the emitted code) and plots embedded as PNG (matplotlib): the
speed-up of each kernel, the time spent per file, why functions were not taken over."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import platform
from collections import Counter
from dataclasses import asdict

from .batch_job import Record
from .version import __version__

#: the order statuses are counted and coloured in
STATUSES = ("checked", "mismatch", "error", "crashed", "timed out", "refused", "not a kernel")


def write_report(out: str, records: list[Record], target: str, passes: str, summary) -> None:
    """OUT/report.json and OUT/report.html (written whole, then renamed into place)."""
    os.makedirs(out, exist_ok=True)
    meta = {
        "tool": f"pycc-stencil {__version__}",
        "target": target,
        "passes": passes,
        "machine": machine_name(),
        "files": summary.files,
        "files_reused": summary.reused,
        "seconds": round(summary.seconds, 3),
        "counts": dict(Counter(r.status for r in records)),
    }
    document = {"summary": meta, "records": [asdict(r) for r in records]}
    _write(os.path.join(out, "report.json"), json.dumps(document, indent=1))
    _write(os.path.join(out, "report.html"), page(records, meta))


def _write(path: str, text: str) -> None:
    partial = path + ".part"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)


def machine_name() -> str:
    """The CPU, as /proc/cpuinfo names it (the machine the report's times are from)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def page(records: list[Record], meta: dict) -> str:
    """The HTML page (no external resource: styles, script and images inline)."""
    e = html.escape
    counts = " ".join(
        f'<span class="count {_css(s)}">{meta["counts"].get(s, 0)} {e(s)}</span>'
        for s in STATUSES
        if meta["counts"].get(s)
    )
    rows = "\n".join(_row(n, r) for n, r in enumerate(records))
    sections = "\n".join(_section(n, r) for n, r in enumerate(records) if r.function)
    plots = "\n".join(
        f'<figure><img alt="{e(title)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{e(title)}</figcaption></figure>"
        for title, data in _plots(records)
    )
    return _PAGE.format(
        title=e(f"pycc-stencil batch: {meta['target']}"),
        meta=e(
            f"{meta['tool']}, target {meta['target']}, passes {meta['passes'] or '(none)'}, "
            f"{meta['files']} files ({meta['files_reused']} from the store), "
            f"{meta['seconds']:.1f} s on {meta['machine']}"
        ),
        counts=counts,
        rows=rows,
        sections=sections,
        plots=plots,
    )


def _css(status: str) -> str:
    return status.replace(" ", "-")


def _row(n: int, r: Record) -> str:
    e = html.escape
    name = f'<a href="#f{n}">{e(r.function)}</a>' if r.function else "(file)"
    speedup = f"{r.speedup:.2f}" if r.speedup is not None else ""
    return (
        f'<tr class="{_css(r.status)}"><td>{e(os.path.basename(r.file))}</td><td>{name}</td>'
        f"<td>{r.line}</td><td>{e(r.status)}</td><td>{e(r.reason[:160])}</td>"
        f'<td data-value="{r.speedup if r.speedup is not None else -1}">{speedup}</td>'
        f"<td>{r.compile_seconds:.2f}</td><td>{r.check_seconds:.2f}</td></tr>"
    )


def _section(n: int, r: Record) -> str:
    e = html.escape
    parts = [
        f'<section id="f{n}"><h3>{e(r.function)} <small>{e(r.file)}:{r.line}</small></h3>',
        f'<p class="{_css(r.status)}">{e(r.status)}{": " + e(r.reason) if r.reason else ""}</p>',
    ]
    if r.passes:
        parts.append(f"<p>passes: <code>{e(r.passes)}</code></p>")
    if r.check:
        parts.append(f"<p>check: {e(r.check)}</p>")
    if r.source:
        parts.append(f"<details open><summary>source</summary><pre>{e(r.source)}</pre></details>")
    if r.remarks:
        parts.append(
            "<details><summary>remarks</summary><pre>"
            + e("\n".join(r.remarks))
            + "</pre></details>"
        )
    if r.emitted:
        parts.append(f"<details><summary>emitted code</summary><pre>{e(r.emitted)}</pre></details>")
    return "\n".join(parts) + "</section>"


def _plots(records: list[Record]) -> list[tuple[str, str]]:
    """(title, base64 PNG) of each plot (none where matplotlib is not installed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return []
    found = []
    measured = [r for r in records if r.speedup is not None]
    if measured:
        figure, axes = pyplot.subplots(figsize=(8, 0.3 * len(measured) + 1.2))
        axes.barh([r.function for r in measured], [r.speedup for r in measured], color="#3a7")
        axes.axvline(1.0, color="black", linewidth=0.8)
        axes.set_xlabel("speed-up of the passes (the same C through LLVM -O3 = 1)")
        found.append(("Speed-up per kernel", _png(figure, pyplot)))
    per_file = Counter()
    for r in records:
        per_file[os.path.basename(r.file)] += r.check_seconds
    for r in {(r.file, r.compile_seconds) for r in records}:
        per_file[os.path.basename(r[0])] += r[1]
    if per_file:
        figure, axes = pyplot.subplots(figsize=(8, 0.3 * len(per_file) + 1.2))
        axes.barh(list(per_file), list(per_file.values()), color="#37a")
        axes.set_xlabel("seconds (compile and check)")
        found.append(("Time spent per file", _png(figure, pyplot)))
    reasons = Counter(_reason_kind(r) for r in records if r.status not in ("checked",))
    if reasons:
        figure, axes = pyplot.subplots(figsize=(8, 0.3 * len(reasons) + 1.2))
        axes.barh(list(reasons), list(reasons.values()), color="#a53")
        axes.set_xlabel("functions")
        found.append(("Why functions were not taken over", _png(figure, pyplot)))
    return found


def _reason_kind(r: Record) -> str:
    """A short class of why: the status and the reason's first words, without locations."""
    reason = r.reason.split(": ", 1)[-1] if ": " in r.reason else r.reason
    return f"{r.status}: {' '.join(reason.split()[:6])}"[:70]


def _png(figure, pyplot) -> str:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=80)
    pyplot.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }}
th {{ cursor: pointer; background: #eee; }}
.count {{ margin-right: 1em; font-weight: bold; }}
.checked {{ color: #286; }} .mismatch, .error, .crashed, .timed-out {{ color: #b22; }}
.refused, .not-a-kernel {{ color: #777; }}
pre {{ background: #f6f6f6; padding: 0.5em; overflow-x: auto; }}
figure {{ display: inline-block; margin: 0 1em 1em 0; }}
</style></head>
<body>
<h1>{title}</h1>
<p id="meta">{meta}</p>
<p id="counts">{counts}</p>
<h2>Plots</h2>
<div id="plots">{plots}</div>
<h2>Functions</h2>
<table id="kernels"><thead><tr><th>file</th><th>function</th><th>line</th><th>status</th>
<th>reason</th><th>speed-up</th><th>compile s</th><th>check s</th></tr></thead>
<tbody>
{rows}
</tbody></table>
<h2>Details</h2>
{sections}
<script>
document.querySelectorAll("#kernels th").forEach(function (header, column) {{
  header.addEventListener("click", function () {{
    var body = document.querySelector("#kernels tbody");
    var rows = Array.from(body.rows);
    var down = header.dataset.order !== "up";
    header.dataset.order = down ? "up" : "down";
    function key(row) {{
      var cell = row.cells[column];
      var text = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
      var number = parseFloat(text);
      return isNaN(number) ? text.toLowerCase() : number;
    }}
    rows.sort(function (a, b) {{
      var x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (down ? 1 : -1);
    }});
    rows.forEach(function (row) {{ body.appendChild(row); }});
  }});
}});
</script>
</body></html>
"""
