"""The JIT harness as a pytest plugin (registered through the `pytest11` entry point: installing
pycc-stencil is enough). Its `pycc` fixture loads C files and checks kernels against cc:

    def test_blur(pycc):
        lib = pycc.load("blur.c", cflags=["-DN=64"])                # cached per session
        pycc.check("blur.c", function="blur", params={"n": "61"},   # against cc, bit for bit
                   passes="tile(32,32)")

A mismatch fails the test with the first differing element, the count, and for 2-D and 3-D
buffers a picture of where they differ (in the message, and as a PNG the message names); a
function pycc-stencil does not take over is a skipped test with the reason. Importing this
module costs nothing (pytest imports it in every session): the compiler loads on first use.
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from pathlib import Path

import pytest

#: the text picture's largest size, in characters (each stands for a block of elements)
PICTURE_COLUMNS, PICTURE_ROWS = 64, 16


class Pycc:
    """The fixture: `load` and `check`, each C file compiled once per session per flags,
    passes and target (a file edited during the session is compiled again)."""

    def __init__(self, pictures: Path):
        self._pictures = pictures
        self._libraries: dict[tuple, object] = {}
        self._units: dict[tuple, object] = {}
        self._sources: dict[tuple, object] = {}

    def load(self, path, cflags=(), passes: str | None = None, opt_level: int = 3):
        """`pycc_stencil.load`: the file's functions, callable on numpy arrays."""
        from . import load

        key = (_identity(path), tuple(cflags), passes, opt_level)
        if key not in self._libraries:
            self._libraries[key] = load(str(path), list(cflags), passes, opt_level)
        return self._libraries[key]

    def check(
        self,
        path,
        function: str,
        params: dict | None = None,
        passes: str | None = None,
        target: str = "host",
        cflags=(),
        extents: dict | None = None,
        seed: int = 0,
        tolerance: str | None = None,
        strict: bool = False,
    ):
        """`pycc-stencil check`: `function` after `passes` for `target` against the C built by
        cc, on random inputs (`params`: its scalar parameters as text, like --param); the
        CheckResult when they agree, else the test fails (or is skipped, with the reason the
        function is not taken over; `strict`: fails then too)."""
        __tracebackhide__ = True
        from .runtime.check import SourceUnit, refusal
        from .runtime.compare import Tolerance

        source_key = (_identity(path), tuple(cflags))
        if source_key not in self._sources:
            self._sources[source_key] = SourceUnit(path, list(cflags))
        source = self._sources[source_key]
        if function not in source.lowered.order:
            raise ValueError(f"{path}: no function named '{function}'")
        reason = refusal(source.lowered, function)
        if reason:
            _skip(f"pycc-stencil does not compile {function}: {reason}", strict)
        unit_key = (*source_key, passes, target)
        if unit_key not in self._units:
            self._units[unit_key] = source.compile(passes, target=target)
        rule = Tolerance.parse(tolerance) if tolerance else Tolerance()
        result = self._units[unit_key].check(
            function,
            {k: str(v) for k, v in (params or {}).items()},
            extents,
            seed=seed,
            tolerance=rule,
        )
        if result.status == "SKIPPED":
            _skip(result.message, strict)
        if result.status != "OK":
            raise AssertionError(self._report(result, function))
        return result

    def _report(self, result, function: str) -> str:
        """The failure: the check's message, and per differing buffer of 2 or 3 dimensions
        its picture and the PNG file with it."""
        lines = [f"pycc check {function}: {result.status}: {result.message}"]
        for name, where in result.where.items():
            if where.ndim not in (2, 3):
                continue
            planes = where if where.ndim == 3 else where[None]
            rows, columns = _blocks(planes.shape[1:])
            lines.append(
                f"where '{name}' ({'x'.join(map(str, where.shape))}) differs: X where an "
                f"element of a block of {rows}x{columns} differs"
            )
            for index, plane in enumerate(planes):
                if plane.any():
                    if where.ndim == 3:
                        lines.append(f"  [{index}]")
                    lines += ["  " + row for row in text_picture(plane)]
            self._pictures.mkdir(parents=True, exist_ok=True)
            png = self._pictures / f"{_current_test()}-{function}-{name}.png"
            png.write_bytes(png_picture(planes))
            lines.append(f"picture: {png}")
        return "\n".join(lines)


def _current_test() -> str:
    """The running test's name as a file name (pictures of two tests never share a file)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "test").split(" ")[0].split("::", 1)[-1]
    return re.sub(r"[^\w.-]+", "_", test)[:120]


def _skip(reason: str, strict: bool) -> None:
    __tracebackhide__ = True
    if strict:
        raise AssertionError(reason)
    pytest.skip(reason)


def _identity(path) -> tuple[str, int]:
    """The file and its modification time: an edited file is a new one."""
    resolved = os.path.realpath(path)
    return resolved, os.stat(resolved).st_mtime_ns


def _blocks(shape: tuple[int, int]) -> tuple[int, int]:
    """The elements (rows, columns) one character of the text picture stands for."""
    return -(-shape[0] // PICTURE_ROWS), -(-shape[1] // PICTURE_COLUMNS)


def text_picture(where) -> list[str]:
    """A 2-D boolean array at most PICTURE_ROWS x PICTURE_COLUMNS characters: X where any
    element of the block differs, . elsewhere."""
    rows, columns = where.shape
    step_r, step_c = _blocks(where.shape)
    return [
        "".join(
            "X" if where[r : r + step_r, c : c + step_c].any() else "."
            for c in range(0, columns, step_c)
        )
        for r in range(0, rows, step_r)
    ]


def png_picture(planes) -> bytes:
    """A PNG of 3-D boolean `planes` side by side (red: differs, grey: agrees, white
    between planes), each element at least 4 pixels wide."""
    count, rows, columns = planes.shape
    scale = max(1, 256 // max(rows, columns * count))
    gap = 1
    width = count * (columns * scale + gap) - gap
    lines = []
    for r in range(rows * scale):
        pixels = bytearray()
        for p in range(count):
            if p:
                pixels += b"\xff\xff\xff" * gap
            row = planes[p, r // scale]
            for c in range(columns * scale):
                pixels += b"\xd0\x20\x20" if row[c // scale] else b"\xd8\xd8\xd8"
        lines.append(b"\x00" + bytes(pixels))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, rows * scale, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(lines)))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="session")
def pycc(tmp_path_factory) -> Pycc:
    """pycc-stencil's JIT harness: `pycc.load(path, ...)` and `pycc.check(path, function=...)`."""
    return Pycc(tmp_path_factory.mktemp("pycc-differences"))
