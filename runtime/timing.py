"""JIT timing of a kernel under several pipelines: the check of `tune --target host`'s static
cycle counts (`tune --time`) on a mid-size problem.

Each pipeline's module is JIT-compiled through the harness (`load`), the kernel runs on the
same inputs (random floats in [0.5, 2), small random integers) sized from its declared array
shapes or its measured footprint, once to warm up and then `repeats` times; the median time
per call is reported. Integer scalars not given default to `MID_SIZE` (a 200x200 float image
is 160 KB per array: in L2, out of L1).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence

import numpy as np

from ..frontend.c_types import ArrayType, FloatType
from .library import load
from .marshal import buffer_dtype, convert_scalar, declared_shape, is_buffer

MID_SIZE = 200


class TimingError(ValueError):
    """The kernel cannot be timed from Python (inputs cannot be sized or passed)."""


def _inputs(library, function: str, params: dict[str, str]) -> list:
    info = library.functions[function].info
    scalars = {}
    for param in info.params:
        if is_buffer(param):
            continue
        text = params.get(param.name)
        floating = isinstance(param.ctype, FloatType)
        default = 0.5 if floating else MID_SIZE
        value = default if text is None else float(text) if floating else int(text, 0)
        scalars[param.name] = convert_scalar(param, value)
    footprints = library.footprints(info, scalars)
    rng = np.random.default_rng(0)
    args = []
    for param in info.params:
        if not is_buffer(param):
            args.append(scalars[param.name])
            continue
        shape = declared_shape(param.ctype, scalars) if isinstance(param.ctype, ArrayType) else None
        footprint = footprints.get(param.name)
        if shape is not None:
            count = math.prod(shape)
        elif footprint is not None and footprint.bounds and footprint.bounds[0] >= 0:
            count = footprint.bounds[1]
        else:
            raise TimingError(f"cannot size the array for parameter '{param.name}'")
        dtype = buffer_dtype(param)
        if dtype.kind == "f":
            data = rng.uniform(0.5, 2.0, count).astype(dtype)
        else:
            data = rng.integers(0, 100, count).astype(dtype)
        args.append(data)
    return args


def time_pipelines(
    path: str,
    cflags: Sequence[str],
    function: str,
    pipelines: Sequence[str],
    params: dict[str, str] | None = None,
    repeats: int = 5,
) -> dict[str, float]:
    """Median seconds per call of `function` under each pipeline, on identical inputs."""
    found = time_functions(path, cflags, [function], pipelines, params, repeats)[function]
    if isinstance(found, str):
        raise TimingError(found)
    return found


def time_functions(
    path: str,
    cflags: Sequence[str],
    functions: Sequence[str],
    pipelines: Sequence[str],
    params: dict[str, str] | None = None,
    repeats: int = 5,
) -> dict[str, dict[str, float] | str]:
    """{function: {pipeline: median seconds per call}, or why it cannot be timed}: the file
    compiled once per pipeline, each function on identical inputs under each."""
    libraries = {p: load(path, cflags, passes=p) for p in pipelines}
    result: dict[str, dict[str, float] | str] = {}
    for function in functions:
        try:
            args = _inputs(libraries[pipelines[0]], function, params or {})
        except (TypeError, ValueError) as exc:
            result[function] = str(exc)
            continue
        result[function] = {}
        for pipeline, library in libraries.items():
            kernel = library.functions[function]
            kernel(*args)
            samples = []
            for _ in range(repeats):
                started = time.perf_counter()
                kernel(*args)
                samples.append(time.perf_counter() - started)
            result[function][pipeline] = statistics.median(samples)
    return result
