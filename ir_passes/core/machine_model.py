"""What a build says of the machine without loading LLVM: the default cache model, the
runtimes parallel loops can use, and cache-size spellings. Compiler mode's cache key reads
these on every compile, so this module imports nothing."""

from __future__ import annotations

#: The default cache model (bytes): what a target without a model of its own, and compiler mode
#: without `-march=native`, tile for. L1 32 KiB and L2 512 KiB are gcc's own model for
#: `-mtune=generic` (its `--param l1-cache-size` and `l2-cache-size` defaults on x86-64, which
#: `gcc -Q --help=params` prints), so `-O3` output is the same on every build machine and
#: matches what gcc assumes; L3 (8 MiB, a common size) only sets where the `-large` passes'
#: tiled code runs (`Target.locality_threshold`).
DEFAULT_CACHE_BYTES = {1: 32 << 10, 2: 512 << 10, 3: 8 << 20}
#: How tiled code's parallel loops run (`Target.parallel_runtime`; polyhedral/parallel.py):
#: one thread, the OpenMP runtime the program links, or the JIT's private pool
SERIAL, OPENMP, POOL = "serial", "openmp", "pool"
PARALLEL_RUNTIMES = (SERIAL, OPENMP, POOL)
#: environment variables that override a cache size, e.g. PYCC_CACHE_L2=16K (the tests make
#: the L2-sized thresholds small so the tiled code of the `-large` passes runs on small grids)
CACHE_OVERRIDE = {1: "PYCC_CACHE_L1", 2: "PYCC_CACHE_L2", 3: "PYCC_CACHE_L3"}


def parse_size(text: str) -> int:
    """`512K`, `1M`, `32768` -> bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


#: LLVM's names of AMD's x86 cores, and of tunings for no one core
_NO_STREAMING_CPUS = ("znver", "bdver", "btver", "amdfam", "barcelona", "k8", "athlon", "opteron")
_GENERIC_CPUS = ("x86-64", "generic")


def streaming_stores_pay(cpu: str) -> bool:
    """Do non-temporal stores of a sweep's output pay on `cpu` (LLVM's name)? Measured with
    a laplace-2d sweep over DRAM-sized grids (docs/tiling_benchmarks.md, "Streaming stores"):
    1.2-1.4x on an Intel Xeon guest (rocketlake), 0.83-1.02x on an AMD EPYC (Zen 3), whose
    plain stores already reached its triad bandwidth. So every named core but AMD's; not a
    generic tuning, whose code may run on either."""
    return not cpu.startswith(_NO_STREAMING_CPUS + _GENERIC_CPUS)
