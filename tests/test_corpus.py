"""The corpus, end to end: every kernel is bit-exact against `cc` at the first parameter set
of each variant, and in the sweep at every parameter set of the manifest (odd and prime
sizes, sizes too small for the stencil, T = 0, 1 and odd T);
every unsupported construct is skipped with its location while the file's other kernel is
checked; every invalid file is a compiler diagnostic with exit status 1.
"""

from __future__ import annotations

import itertools
import os

import pytest
from corpus.manifest import BAD, CORPUS_DIR, KERNELS, UNSUPPORTED
from corpus_check import case_label, check_case, on_entry, sweep_if
from pycc_stencil.cli import main


def _cases():
    """Every kernel at every variant and parameter set; of a file with three fixed sizes
    (`-DN=...`), the middle one is a sweep (the odd and the degenerate ones stay). Beyond the
    first parameter set of a variant the cases are a sweep too: test_compiler_corpus runs
    every kernel at every parameter set of the manifest, bit-identical to cc, in every run
    (through pycc-stencil's objects at -O2, and at -O3 for a subset of the files)."""
    for entry in KERNELS:
        for variant, (k, params) in itertools.product(
            entry["variants"], enumerate(entry["params"])
        ):
            label = case_label(entry, variant, params)
            middle = len(entry["variants"]) == 3 and variant == entry["variants"][1]
            marks = [on_entry(entry, variant), *sweep_if(middle or k > 0)]
            yield pytest.param(entry, variant, params, id=label, marks=marks)


@pytest.mark.parametrize("entry, variant, params", list(_cases()))
def test_kernel_is_bit_exact(entry, variant, params):
    result, _ = check_case(entry, variant, params)
    assert result.status == "OK", str(result)
    assert result.message.startswith("bit-exact")


@pytest.mark.parametrize("entry", UNSUPPORTED, ids=[e["function"] for e in UNSUPPORTED])
def test_unsupported_function_is_skipped_and_the_rest_checked(entry, capsys):
    path = os.path.join(CORPUS_DIR, entry["file"])
    status = main(["check", path, f"-std={entry['std']}", "--param", "n=37"])
    lines = capsys.readouterr().out.splitlines()
    skipped = next(line for line in lines if line.startswith(f"SKIPPED {entry['function']}:"))
    assert entry["keyword"].lower() in skipped.lower()
    where = skipped.split(": ", 1)[1].split(": ", 1)[0]  # file:line:col
    assert where.split(":", 1)[1] in [entry["loc"], *entry["also_ok"]]
    assert f"OK {entry['ordinary']}: bit-exact" in "\n".join(lines)
    assert status == 0


@pytest.mark.parametrize("entry", BAD, ids=[e["kind"] for e in BAD])
def test_invalid_file_is_a_compiler_diagnostic(entry, capsys, tmp_path):
    path = os.path.join(CORPUS_DIR, entry["file"])
    out = tmp_path / "out.ll"
    for command in (
        ["check", path],
        ["emit", path, "--emit", "llvm", "-o", str(out)],
        ["check", path, "--target", "c"],
        ["emit", path, "--target", "c", "-o", str(out)],
    ):
        assert main(command) == 1
        captured = capsys.readouterr()
        first = captured.err.splitlines()[0]
        assert first.startswith(f"{path}:{entry['loc']}: error: ")
        assert "Traceback" not in captured.err + captured.out
        assert not out.exists()
