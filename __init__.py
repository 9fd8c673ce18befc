"""pycc-stencil: a compiler for the stencil loop nests of legacy C.

Public Python API: `load` (JIT-compile a C file and call its kernels on numpy arrays).
"""

__version__ = "0.1.0"

from .runtime.library import load  # noqa: E402 - after __version__, which the CLI imports

__all__ = ["__version__", "load"]
