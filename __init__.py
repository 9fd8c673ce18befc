"""pycc-stencil: a compiler for the stencil loop nests of legacy C.

Public Python API: `load` (JIT-compile a C file and call its kernels on numpy arrays) and
`batch` (every C file of a tree through a target, checked, with a report).
"""

from .version import __version__

__all__ = ["__version__", "batch", "load"]


def __getattr__(name: str):
    """`load` and `batch` are imported on first use: the drop-in compiler must start fast
    (no numpy)."""
    if name == "load":
        from .runtime.library import load

        return load
    if name == "batch":
        from .batch_run import batch

        return batch
    raise AttributeError(f"module 'pycc_stencil' has no attribute {name!r}")
