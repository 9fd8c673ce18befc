"""Vitis HLS's own open headers (`ap_int.h`, `ap_fixed.h`, `hls_stream.h`, Apache-2.0) for
C simulation with the vendor's types, where a package ships them: hls4ml's wheel (a test
dependency) has them under `templates/vivado/ap_types`. Found at run time, never copied."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path


@functools.cache
def ap_types_dir() -> Path | None:
    """The directory holding `ap_int.h`, or None (hls4ml is not installed)."""
    spec = importlib.util.find_spec("hls4ml")  # found, not imported (its imports are heavy)
    for location in (spec.submodule_search_locations or []) if spec else []:
        found = Path(location, "templates", "vivado", "ap_types")
        if (found / "ap_int.h").is_file():
            return found
    return None
