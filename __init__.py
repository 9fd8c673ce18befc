"""pycc-stencil: a compiler for the stencil loop nests of legacy C.

Public Python API: `load` (JIT-compile a C file and call its kernels on numpy arrays).
"""

__version__ = "0.1.0"
