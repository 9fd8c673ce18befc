"""How `tune` shows its search: a table per kernel and the chosen strategy, or JSON.

The table uses `rich` when it is installed and plain aligned text otherwise; the last line
of each kernel is always `chosen NAME: PIPELINE (II ...)` so scripts can grep it.
"""

from __future__ import annotations

import json
from typing import TextIO

from .ir_passes.tuning import KernelTuning

_UNIT = {"host": "cycles/iter", "hexagon": "packets/iter", "c66x": "II/iter"}
_HEADERS = ("strategy", "", "registers", "instructions", "pipelined", "note")


def _pipelined(value: bool | None) -> str:
    return "n/a" if value is None else "yes" if value else "no"


def _rows(tuning: KernelTuning) -> list[tuple[str, ...]]:
    rows = []
    for trial in tuning.result.trials:
        cost = trial.cost
        if cost is None:
            rows.append((trial.strategy.pipeline, "-", "-", "-", "-", trial.error or ""))
            continue
        rows.append(
            (
                trial.strategy.pipeline,
                f"{cost.ii:.4g}",
                str(cost.registers),
                str(cost.instructions),
                _pipelined(cost.pipelined),
                trial.stop or "",
            )
        )
    return rows


def chosen_line(tuning: KernelTuning) -> str:
    best = tuning.best
    if best is None:
        return f"chosen {tuning.function}: none (no strategy could be measured)"
    unit = _UNIT[tuning.target]
    return f"chosen {tuning.function}: {best.strategy.pipeline} ({best.cost.ii:.4g} {unit})"


def timing_line(timing: dict[str, float] | str) -> str:
    """`JIT timing: unroll(1) 1.20 ms, unroll(4) 0.95 ms (1.26x)`."""
    if isinstance(timing, str):
        return f"JIT timing: {timing}"
    parts = [f"{pipeline} {seconds * 1000:.3g} ms" for pipeline, seconds in timing.items()]
    times = list(timing.values())
    ratio = f" ({times[0] / times[-1]:.2f}x)" if len(times) > 1 and times[-1] > 0 else ""
    return "JIT timing: " + ", ".join(parts) + ratio


def print_tables(tunings: list[KernelTuning], out: TextIO, timings: dict | None = None) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = None  # noqa: N806
    for tuning in tunings:
        headers = list(_HEADERS)
        headers[1] = _UNIT[tuning.target]
        title = f"{tuning.function} ({tuning.target})"
        rows = _rows(tuning)
        if Console is not None:
            table = Table(title=title)
            for header in headers:
                table.add_column(header)
            for row in rows:
                table.add_row(*row)
            Console(file=out, width=110).print(table)
        else:
            widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
            print(title, file=out)
            for row in [tuple(headers), *rows]:
                print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), file=out)
        print(chosen_line(tuning), file=out)
        if timings and tuning.function in timings:
            print(timing_line(timings[tuning.function]), file=out)


def to_json(tunings: list[KernelTuning], timings: dict | None = None) -> str:
    kernels = []
    for tuning in tunings:
        best = tuning.best
        kernels.append(
            {
                "function": tuning.function,
                "target": tuning.target,
                "chosen": best.strategy.pipeline if best else None,
                "ii": best.cost.ii if best else None,
                "timing": (timings or {}).get(tuning.function),
                "trials": [
                    {
                        "strategy": t.strategy.pipeline,
                        "uf": t.strategy.uf,
                        "vf": t.strategy.vf,
                        "ii": t.cost.ii if t.cost else None,
                        "registers": t.cost.registers if t.cost else None,
                        "instructions": t.cost.instructions if t.cost else None,
                        "pipelined": t.cost.pipelined if t.cost else None,
                        "stop": t.stop,
                        "error": t.error,
                    }
                    for t in tuning.result.trials
                ],
            }
        )
    return json.dumps({"kernels": kernels}, indent=2)
