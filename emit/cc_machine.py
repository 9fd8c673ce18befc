"""What a `cc` command line says about the machine model of the passes: whether tiled code's
parallel loops use threads, and the cache sizes tile sizes come from.

A drop-in compiler's output must follow its flags, never the build machine, unless the flags
name that machine:

- Threads, as with gcc, only when asked for (`emit.cc_threads`): the OpenMP runtime, else one
  thread (`SERIAL`); teams of N threads under `-ftree-parallelize-loops=N`, as gcc's.
- Cache sizes: the default model (`DEFAULT_CACHE_BYTES`, gcc's model for `-mtune=generic`),
  this machine's (Linux sysfs) only under `-march=native` or `-mtune=native` (gcc then reads
  the host's caches too), gcc's `--param l1-cache-size=KIB` and `--param l2-cache-size=KIB`
  over both, and `-fpycc-cache-size=SIZE` (the L2 size: bytes, or with a K/M/G suffix) over
  all of them. The `PYCC_CACHE_L<level>` environment overrides of the tests still win
  (`Target.cache_bytes`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence

from ..ir_passes.core.machine_model import DEFAULT_CACHE_BYTES, OPENMP, SERIAL, parse_size
from .cc_threads import autopar_threads, wants_threads

TYPE_CHECKING = False  # (not `typing`'s: every compile's cache key imports this module)
if TYPE_CHECKING:
    from ..ir_passes.core.target import Target
    from .cc_target import TargetSpec

#: Linux's description of CPU 0's caches
_SYSFS = "/sys/devices/system/cpu/cpu0/cache"
#: `-fpycc-cache-size=`'s key among pycc-stencil's options (`dropin_command.parse_command`)
CACHE_SIZE_OPTION = "cache-size"
#: gcc's cache-size parameters (KiB) and the level each sets
_GCC_CACHE_PARAMS = {"l1-cache-size": 1, "l2-cache-size": 2}
#: the most of a shared cache one CPU sharing it is counted to hold. In a virtual machine Linux
#: reports the host socket's whole L3 as shared by the guest's CPUs alone (300 MiB for the 2
#: vCPUs of a Xeon "Emerald Rapids" guest), though other guests use it too. Calibrated on two
#: 2-vCPU guests (docs/tiling_benchmarks.md, "When time tiles pay"): with 16 MiB per CPU,
#: `-O3`'s threshold is 16 MiB on both, where time tiles started to win (AMD EPYC, L3 32 MiB:
#: heat-3d between 14 and 22.5 MB; the Xeon: jacobi-2d from 4 MB, heat-3d 0.66x untiled at
#: 14 MB, 1.0x at 34 MB, 1.1-1.4x from 65 MB); counting the Xeon's 300 MiB, time tiles did
#: not run below 150 MiB and jacobi-2d's 125 MB grid ran at gcc's speed instead of 2.4x.
SHARED_CACHE_BYTES_PER_CPU = 16 << 20


#: /proc/cpuinfo's vendors of AMD's x86 cores (Hygon's are built on them)
_AMD_VENDORS = ("AuthenticAMD", "HygonGenuine")


class BadCacheSize(ValueError):
    """`-fpycc-cache-size=` is not a size."""


def compiler_mode_target(
    spec: TargetSpec, flags: Sequence[str], pycc_options: Mapping[str, str]
) -> Target:
    """The Target the passes see for one compile: the CPU of `spec`, the threads and caches
    of the flags."""
    from .targets import host_target  # (LLVM: only for a compile, not for the cache key)

    return host_target(
        spec.cpu,
        spec.features,
        caches=cache_model(flags, pycc_options),
        parallel_runtime=parallel_runtime(flags, pycc_options),
        parallel_team=autopar_threads(flags),
    )


def parallel_runtime(flags: Sequence[str], pycc_options: Mapping[str, str]) -> str:
    """`OPENMP` when the flags ask for threads (`emit.cc_threads`), else `SERIAL`."""
    return OPENMP if wants_threads(flags, pycc_options) else SERIAL


def cache_model(flags: Sequence[str], pycc_options: Mapping[str, str]) -> dict[int, int]:
    """Cache sizes (bytes) by level for these flags (see the module docstring)."""
    native = any(f in ("-march=native", "-mtune=native") for f in flags)
    model = dict(DEFAULT_CACHE_BYTES)
    if native:
        model.update({level: sysfs_cache_bytes(level) or model[level] for level in model})
    model.update(_gcc_cache_params(flags))
    if CACHE_SIZE_OPTION in pycc_options:
        model[2] = parse_cache_size(pycc_options[CACHE_SIZE_OPTION])
    return model


def streaming_stores(flags: Sequence[str]) -> bool:
    """Do the flags build for a core where non-temporal stores pay
    (`machine_model.streaming_stores_pay`)? Told without LLVM: only `-march=native` names a
    core (compiler mode's CPU is otherwise the generic x86-64), and this machine's is
    told by its vendor."""
    marches = [f for f in flags if f.startswith("-march=")]
    vendor = _host_vendor()
    return bool(marches) and marches[-1] == "-march=native" and vendor not in ("", *_AMD_VENDORS)


@functools.cache
def _host_vendor() -> str:
    """The `vendor_id` of /proc/cpuinfo ("" where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                name, _, value = line.partition(":")
                if name.strip() == "vendor_id":
                    return value.strip()
    except OSError:
        pass
    return ""


def parse_cache_size(text: str) -> int:
    """The bytes of `-fpycc-cache-size=text`; raises BadCacheSize."""
    try:
        size = parse_size(text)
    except ValueError:
        size = 0
    if size < 1:
        raise BadCacheSize(f"'-fpycc-cache-size={text}' is not a size (bytes, or 512K, 1M)")
    return size


def describe(flags: Sequence[str], pycc_options: Mapping[str, str]) -> str:
    """The model in one line: part of the compile cache's key (under -march=native it
    depends on the machine)."""
    caches = ",".join(f"L{k}={v}" for k, v in sorted(cache_model(flags, pycc_options).items()))
    team = autopar_threads(flags) or "default"
    return f"caches {caches}; threads {parallel_runtime(flags, pycc_options)}, team {team}"


def _gcc_cache_params(flags: Sequence[str]) -> dict[int, int]:
    """`--param NAME=KIB` / `--param=NAME=KIB` for gcc's cache sizes, last one winning
    (values gcc rejects are left to gcc's error)."""
    found: dict[int, int] = {}
    values = [
        value.removeprefix("--param=")
        for previous, value in zip(["", *flags], flags)
        if previous == "--param" or value.startswith("--param=")
    ]
    for name, _, kib in (v.partition("=") for v in values):
        if name in _GCC_CACHE_PARAMS and kib.isdigit() and int(kib) > 0:
            found[_GCC_CACHE_PARAMS[name]] = int(kib) << 10
    return found


@functools.cache
def sysfs_cache_bytes(level: int) -> int | None:
    """The data (or unified) cache size of `level` of CPU 0, as Linux reports it, at most
    `SHARED_CACHE_BYTES_PER_CPU` for each CPU sharing it."""

    def read(index: str, name: str) -> str:
        with open(os.path.join(_SYSFS, index, name)) as handle:
            return handle.read().strip()

    try:
        for index in sorted(i for i in os.listdir(_SYSFS) if i.startswith("index")):
            kind = read(index, "type")
            if int(read(index, "level")) == level and kind in ("Data", "Unified"):
                size = parse_size(read(index, "size"))
                try:
                    sharing = _cpu_count(read(index, "shared_cpu_list"))
                except (OSError, ValueError):  # not reported, or not a list: the size alone
                    return size
                return min(size, sharing * SHARED_CACHE_BYTES_PER_CPU)
    except (OSError, ValueError):
        pass
    return None


def _cpu_count(cpu_list: str) -> int:
    """The CPUs of a Linux CPU list (`0-3,8,10-11`: 7); ValueError if it names none."""
    count = 0
    for part in filter(None, cpu_list.strip().split(",")):
        first, _, last = part.partition("-")
        count += int(last or first) - int(first) + 1
    if count < 1:
        raise ValueError(f"no CPU in {cpu_list!r}")
    return count
