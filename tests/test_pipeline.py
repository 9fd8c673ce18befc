"""Pass pipeline strings: syntax, names, arguments."""

from __future__ import annotations

import pytest
from pycc_stencil.ir_passes.pipeline import PassSpec, PipelineError, parse_pipeline

REGISTRY = {
    "unroll": PassSpec(lambda m, n: m, (int,)),
    "align": PassSpec(lambda m: m),
}


def test_parses_names_and_arguments():
    assert parse_pipeline(" unroll(4) , align", REGISTRY) == [("unroll", (4,)), ("align", ())]
    assert parse_pipeline("", REGISTRY) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("unroll(4", "missing ')'"),
        ("unroll(4))", "unbalanced ')'"),
        ("unroll(4),,align", "cannot parse pass ''"),
        ("4unroll", "cannot parse pass '4unroll'"),
        ("simd(8)", "unknown pass 'simd' (valid passes: align, unroll)"),
        ("unroll", "pass unroll takes 1 argument(s), 0 given"),
        ("unroll(four)", "argument 'four' is not a valid int"),
        ("align(1)", "pass align takes 0 argument(s), 1 given"),
    ],
)
def test_errors_are_clear(text, message):
    with pytest.raises(PipelineError) as error:
        parse_pipeline(text, REGISTRY)
    assert message in str(error.value)


def test_no_passes_are_registered_yet():
    with pytest.raises(PipelineError, match=r"valid passes: none available yet"):
        parse_pipeline("unroll(4)")
