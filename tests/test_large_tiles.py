"""Compiler mode with `PYCC_CACHE_L2`: the override reaches `-O3`'s passes, cache or not."""

from __future__ import annotations

import re

import pytest
from pycc_stencil.dropin_cache import CODEGEN_ENVIRONMENT
from pycc_stencil.ir_passes.core.target import CACHE_OVERRIDE
from pycc_stencil.polyhedral.codegen import POISON_SCRATCH
from test_tiling import PYCC, STENCILS_C, _split_functions, build_both

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

OVERRIDE = {"PYCC_CACHE_L2": "16K"}

_STENCILS = _split_functions(STENCILS_C)


def test_the_drop_in_cache_key_has_every_codegen_variable():
    """Variables read while kernels are compiled change the code: a build with another value
    must not reuse a cached result (test_the_cache_l2_override_reaches_compiler_mode)."""
    assert set(CACHE_OVERRIDE.values()) | {POISON_SCRATCH} <= set(CODEGEN_ENVIRONMENT)


def _tile_sizes(function: dict) -> list[str]:
    return re.findall(r"time-tiled .* of ([0-9x]+), wave", "\n".join(function["remarks"]))


def test_the_cache_l2_override_reaches_compiler_mode(tmp_path):
    """`PYCC_CACHE_L2` changes the tiles of `-O3`, also when a result for the same file and
    flags without it is in pycc-stencil's cache."""
    main, kernel = "int main(void) { return 0; }\n", _STENCILS["jacobi2d_two"]
    sizes = []
    for extra in [{}, OVERRIDE]:  # the same source path and cache (tmp_path/cache)
        (tmp_path / "report.json").unlink(missing_ok=True)
        _, compiled = build_both(tmp_path, main, kernel, [], ["-O3"], pycc_env=extra)
        sizes.append(_tile_sizes(compiled["jacobi2d_two"]))
    assert sizes[0] != sizes[1] == ["8x8x512"], sizes
