"""Does a batch's report agree with per-file `check`? (issue 18's "numbers agree")

Runs `pycc-stencil batch` over a tree (or reads the report a batch left in --out), then
`check` on every file with the same flags and passes, and compares function by function:
checked = OK (with the same message), mismatch = MISMATCH, error = ERROR, refused = SKIPPED
or not checked at all; a file the front end rejects is one error record in the batch and a
diagnostic from check. Prints the counts and every disagreement; exit status 1 if any.

    python scripts/batch_agreement.py tests/corpus --out corpus-report --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

from pycc_stencil import batch
from pycc_stencil.batch_job import Record, pipeline
from pycc_stencil.batch_sources import find_sources
from pycc_stencil.diagnostics import CompilerError
from pycc_stencil.runtime.check import CheckOptions, check_file

#: a batch status -> the check statuses that agree with it
AGREES = {
    "checked": {"OK"},
    "mismatch": {"MISMATCH"},
    "error": {"ERROR"},
    "refused": {"SKIPPED", None},
    "not a kernel": {"SKIPPED", None},
}


def disagreements(records: list[Record], flags: list[str], passes: str) -> list[str]:
    """What per-file check says differently from the batch's records."""
    found = []
    by_file: dict[str, list[Record]] = {}
    for record in records:
        by_file.setdefault(record.file, []).append(record)
    for source in find_sources(list(by_file), flags):
        mine = by_file[source.path]
        options = CheckOptions(passes=passes)
        try:
            results = {r.name: r for r in check_file(source.path, list(source.flags), options)}
        except CompilerError as exc:
            if [r.status for r in mine] != ["error"]:
                found.append(f"{source.path}: check: {str(exc).strip()}; batch: {mine}")
            continue
        for record in mine:
            result = results.get(record.function)
            status = result.status if result else None
            if status not in AGREES.get(record.status, set()):
                found.append(f"{source.path}:{record.function}: batch {record.status}, "
                             f"check {status}: {result.message if result else ''}")  # fmt: skip
            elif status == "OK" and record.check != f"OK: {result.message}":
                found.append(f"{source.path}:{record.function}: {record.check} / {result}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--out", default="pycc-batch")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--reuse", action="store_true", help="read OUT/report.json instead")
    args, flags = parser.parse_known_args()
    if args.reuse:
        with open(os.path.join(args.out, "report.json")) as handle:
            records = [Record(**r) for r in json.load(handle)["records"]]
    else:
        records = batch(args.sources, "host", args.out, flags, jobs=args.jobs)
    print(", ".join(f"{n} {s}" for s, n in sorted(Counter(r.status for r in records).items())))
    found = disagreements(records, flags, pipeline("host", None))
    for line in found:
        print(line)
    print(f"{len(found)} disagreements with per-file check")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
