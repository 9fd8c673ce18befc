"""Running one corpus case through `check` (shared by the corpus, unroll and simd tests)."""

from __future__ import annotations

import math
import os

from corpus.manifest import CORPUS_DIR
from pycc_stencil.runtime.check import CheckOptions, CheckResult, check_file

#: kernels whose buffer extents depend on the pixel data (a `break` on a loaded value), so
#: the user must give them (--extent); the manifest's array shapes are those extents
DATA_DEPENDENT = {"row_diff_until_zero_u8"}


def corpus_cflags(entry: dict, variant: list[str]) -> list[str]:
    includes = [f"-I{os.path.join(CORPUS_DIR, d)}" for d in entry["includes"]]
    return [f"-std={entry['std']}", *entry["cflags"], *variant, *includes]


def corpus_extents(entry: dict, variant: list[str], params: dict) -> dict[str, int]:
    """Element counts of the manifest's arrays (only for the data-dependent kernels)."""
    if entry["function"] not in DATA_DEPENDENT:
        return {}
    env = dict(params)
    for flag in variant + entry["cflags"]:
        if flag.startswith("-D") and "=" in flag:
            name, value = flag[2:].split("=", 1)
            env[name] = int(value)
    return {
        name: math.prod(d if isinstance(d, int) else eval(d, {}, env) for d in spec["shape"])
        for name, spec in entry["arrays"].items()
    }


def check_case(
    entry: dict, variant: list[str], params: dict, passes: str | None = None
) -> CheckResult:
    """`check` of one kernel of the manifest at one variant and parameter set."""
    options = CheckOptions(
        functions=[entry["function"]],
        params={k: repr(v) for k, v in params.items()},
        extents=corpus_extents(entry, variant, params),
        passes=passes,
    )
    (result,) = check_file(
        os.path.join(CORPUS_DIR, entry["file"]), corpus_cflags(entry, variant), options
    )
    return result


def case_label(entry: dict, variant: list[str], params: dict, *extra: str) -> str:
    return "-".join([entry["function"], *extra, *variant, *(f"{k}={v}" for k, v in params.items())])


def corpus_params(kernels: list[tuple[str, list[dict]]], pipelines: list[str]) -> list:
    """pytest params (entry, params, passes): corpus kernels by function name (first variant),
    each with the given parameter sets, under each pipeline."""
    import pytest
    from corpus.manifest import KERNELS

    cases = []
    for name, sizes in kernels:
        entry = next(e for e in KERNELS if e["function"] == name)
        for params in sizes:
            for passes in pipelines:
                label = case_label(entry, entry["variants"][0], params, passes)
                cases.append(pytest.param(entry, params, passes, id=label))
    return cases
