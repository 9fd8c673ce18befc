"""Whether a `cc` command line asks for threads in tiled code, and what its link then needs.

As with gcc, generated code is single-threaded unless the flags ask for threads: `-fopenmp`
(the last of it and `-fno-openmp`), `-ftree-parallelize-loops=N` with N > 1 (gcc's own
auto-parallelization, which uses libgomp too) or pycc-stencil's `-fpycc-parallel`. Parallel
loops then call the OpenMP runtime through weak references (polyhedral/parallel.py), so an
object links wherever cc's links; a link that asks for threads keeps libgomp even under the
linker's `--as-needed` (which drops a library that satisfies weak references only). Kept light:
every build step reads the command line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

PARALLEL_FLAG = "-fpycc-parallel"
PARALLEL_OPTION = "parallel"  # its key in `CompilerCommand.pycc_options`
#: what a link that asks for threads adds: libgomp, needed whatever --as-needed says
LINK_OPENMP = ("-Wl,--push-state,--no-as-needed", "-lgomp", "-Wl,--pop-state")


def wants_threads(args: Sequence[str], pycc_options: Mapping[str, str]) -> bool:
    """True when the command line asks for threads (see the module docstring)."""
    if PARALLEL_OPTION in pycc_options or autopar_threads(args):
        return True
    openmp = [a for a in args if a in ("-fopenmp", "-fno-openmp")]
    return bool(openmp) and openmp[-1] == "-fopenmp"


def autopar_threads(args: Sequence[str]) -> int:
    """N of the last `-ftree-parallelize-loops=N` if N > 1, else 0. gcc's auto-parallelized
    loops then run on teams of exactly N threads, whatever OMP_NUM_THREADS says; tiled code's
    parallel loops, auto-parallelized loops too, do the same."""
    loops = [a.partition("=")[2] for a in args if a.startswith("-ftree-parallelize-loops=")]
    return int(loops[-1]) if loops and loops[-1].isdigit() and int(loops[-1]) > 1 else 0
